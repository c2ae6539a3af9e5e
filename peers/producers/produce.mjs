#!/usr/bin/env node
// activity-check producer matrix, the Node producers: @ag-ui/a2ui-middleware and
// @ag-ui/mcp-apps-middleware (the versions pinned in this folder's package-lock.json), each run
// offline through several scenarios, writing one JSON line per stream on stdout:
//   {"producer", "version", "scenario", "about", "events": [...wire events...], "error": null|"..."}
// Read by counterexamples/peers/producers.py, which lints every stream under every reading.
//
// Offline: the agent under each middleware is a scripted upstream (an @ag-ui/client
// AbstractAgent whose run() emits a fixed list of events, as a replayed recording would); the
// MCP server that mcp-apps-middleware asks for its UI tools and calls is a canned one served by
// this process on 127.0.0.1 (the MCP SDK's own server, streamable HTTP, fixed answers). Each
// middleware is driven as a runtime drives it: middleware.run(input, upstream), every event it
// emits collected in order. Ids a producer draws at random (randomUUID) are renamed
// "uuid-<n>" in order of appearance, and the canned server's hash (mcp-apps-middleware hashes
// its URL, whose port the system picks) is written "serverhash-canned", so that the same
// scenarios give the same streams.
//
// Usage: node produce.mjs [--only a2ui|mcp-apps]

import { createRequire } from "node:module";
import { createServer } from "node:http";
import { Observable, lastValueFrom, toArray } from "rxjs";
import { AbstractAgent } from "@ag-ui/client";
import { A2UIMiddleware } from "@ag-ui/a2ui-middleware";
import { MCPAppsMiddleware, getServerHash } from "@ag-ui/mcp-apps-middleware";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { emitStream, quietConsole } from "./kit.mjs";

const require = createRequire(import.meta.url);
const version = (name) => require(`${name}/package.json`).version;
quietConsole();

/** An upstream agent replaying `script(input)` (a list of events), one event per macrotask. */
class Upstream extends AbstractAgent {
  constructor(script) {
    super({ threadId: "thread-1" });
    this.script = script;
  }

  run(input) {
    const events = this.script(input);
    return new Observable((sub) => {
      let i = 0;
      let timer = null;
      const next = () => {
        if (sub.closed) return;
        if (i >= events.length) return sub.complete();
        const e = events[i++];
        if (e instanceof Error) return sub.error(e);
        sub.next(e);
        timer = setImmediate(next);
      };
      timer = setImmediate(next);
      return () => clearImmediate(timer);
    });
  }
}

const input = (runId, extra = {}) => ({
  threadId: "thread-1", runId, state: {}, messages: [], tools: [], context: [], forwardedProps: {}, ...extra,
});
const started = (runId) => ({ type: "RUN_STARTED", threadId: "thread-1", runId });
const finished = (runId) => ({ type: "RUN_FINISHED", threadId: "thread-1", runId });
const text = (id, ...chunks) => [
  { type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" },
  ...chunks.map((delta) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: id, delta })),
  { type: "TEXT_MESSAGE_END", messageId: id },
];
const toolCall = (id, name, args, chunks = 1, parent = undefined) => {
  const size = Math.ceil(args.length / chunks);
  const parts = [];
  for (let i = 0; i < args.length; i += size) parts.push(args.slice(i, i + size));
  return [
    { type: "TOOL_CALL_START", toolCallId: id, toolCallName: name, ...(parent ? { parentMessageId: parent } : {}) },
    ...parts.map((delta) => ({ type: "TOOL_CALL_ARGS", toolCallId: id, delta })),
    { type: "TOOL_CALL_END", toolCallId: id },
  ];
};

/** Run `middleware` over an upstream replaying `script`, for each run id in turn: the events of
 * every run, one stream (a later run's input carries the messages the earlier left). */
async function produce(middleware, script, runIds = ["run-1"], extra = {}) {
  const events = [];
  let error = null;
  for (const runId of runIds) {
    const upstream = new Upstream((inp) => script(inp.runId));
    try {
      events.push(...(await lastValueFrom(middleware.run(input(runId, extra), upstream).pipe(toArray()))));
    } catch (e) {
      error = `${e && e.name}: ${e && e.message}`;
      break;
    }
  }
  return { events, error };
}

// --- @ag-ui/a2ui-middleware ---------------------------------------------------------------------

const CATALOG = "https://a2ui.org/specification/v0_9/basic_catalog.json";
const COMPONENTS = [
  { id: "root", component: "Column", children: ["title", "list"] },
  { id: "title", component: "Text", text: "Flights" },
  { id: "list", component: "List", children: { componentId: "row", path: "/items" } },
  { id: "row", component: "Text", text: { path: "/name" } },
];
const renderArgs = (surfaceId, items) => JSON.stringify({ surfaceId, components: COMPONENTS, data: { items } });
const operations = (surfaceId, value) => [
  { version: "v0.9", createSurface: { surfaceId, catalogId: CATALOG } },
  { version: "v0.9", updateComponents: { surfaceId, components: COMPONENTS } },
  { version: "v0.9", updateDataModel: { surfaceId, path: "/", value } },
];

const A2UI = [
  ["streamed-render", "render_a2ui called with its arguments in 12 chunks: building, then the painted surface",
    () => produce(new A2UIMiddleware({ injectA2UITool: true }), (r) => [
      started(r), ...text("m1", "Here are ", "the flights."),
      ...toolCall("tc1", "render_a2ui", renderArgs("flights", [{ name: "LH 400" }, { name: "UA 901" }]), 12, "m1"),
      finished(r)])],
  ["retry-invalid-components", "a first render_a2ui whose components fail validation (retrying), then a valid one",
    () => produce(new A2UIMiddleware({ injectA2UITool: true }), (r) => [
      started(r),
      ...toolCall("tc1", "render_a2ui", JSON.stringify({ surfaceId: "s1", components: [{ id: "root", component: "NoSuchWidget" }], data: {} }), 4),
      ...toolCall("tc2", "render_a2ui", renderArgs("s1", [{ name: "A" }]), 4),
      finished(r)])],
  ["recovery-exhausted", "a tool result saying A2UI generation failed after its attempts: the failed state",
    () => produce(new A2UIMiddleware({}), (r) => [
      started(r), ...toolCall("tc1", "generate_ui", "{}"),
      { type: "TOOL_CALL_RESULT", messageId: "res-1", toolCallId: "tc1",
        content: JSON.stringify({ code: "a2ui_recovery_exhausted", error: "invalid surface", attempts: [{ error: "bad" }, { error: "bad" }] }) },
      finished(r)])],
  ["two-surfaces-in-a-result", "one tool result holding operations for two surfaces: two activities",
    () => produce(new A2UIMiddleware({}), (r) => [
      started(r), ...toolCall("tc1", "send_a2ui", "{}"),
      { type: "TOOL_CALL_RESULT", messageId: "res-1", toolCallId: "tc1",
        content: JSON.stringify({ a2ui_operations: [...operations("left", { n: 1 }), ...operations("right", { n: 2 })] }) },
      ...text("m2", "Two panels."), finished(r)])],
  ["two-runs-same-surface", "two runs, each answering with operations for the same surface and tool call id",
    () => produce(new A2UIMiddleware({}), (r) => [
      started(r), ...toolCall(`tc-${r}`, "send_a2ui", "{}"),
      { type: "TOOL_CALL_RESULT", messageId: `res-${r}`, toolCallId: `tc-${r}`,
        content: JSON.stringify({ a2ui_operations: operations("status", { run: r }) }) },
      finished(r)], ["run-1", "run-2"])],
  ["upstream-error", "the upstream fails the run (RUN_ERROR) while render_a2ui is streaming",
    () => produce(new A2UIMiddleware({ injectA2UITool: true }), (r) => [
      started(r), ...toolCall("tc1", "render_a2ui", renderArgs("s1", [{ name: "A" }]), 6).slice(0, 4),
      { type: "RUN_ERROR", message: "model overloaded", code: "overloaded" }])],
];

// --- @ag-ui/mcp-apps-middleware -----------------------------------------------------------------

/** A canned MCP server on 127.0.0.1: tools "show_chart" (a UI tool, resource ui://charts/bar),
 * "fail_chart" (a UI tool whose call fails) and "plain" (no UI). Returns {url, close}. */
async function startMcp() {
  const build = () => {
    const server = new McpServer({ name: "canned", version: "1.0.0" });
    const ui = { ui: { resourceUri: "ui://charts/bar" } };
    server.registerTool("show_chart", { description: "draw a chart", inputSchema: {}, _meta: ui },
      async () => ({ content: [{ type: "text", text: "chart of 3 bars" }], structuredContent: { bars: [1, 2, 3] } }));
    server.registerTool("fail_chart", { description: "a chart that fails", inputSchema: {}, _meta: ui },
      async () => { throw new Error("chart service down"); });
    server.registerTool("plain", { description: "no UI" }, async () => ({ content: [{ type: "text", text: "ok" }] }));
    return server;
  };
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = build();
    res.on("close", () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise((r) => http.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${http.address().port}/mcp`, close: () => new Promise((r) => http.close(r)) };
}

const MCP = (url) => {
  const mw = () => new MCPAppsMiddleware({ mcpServers: [{ type: "http", url, serverId: "charts" }] });
  const call = (r, id, name, args = "{}") => [started(r), ...text(`m-${id}`, "Let me draw it."), ...toolCall(id, name, args, 2, `m-${id}`)];
  return [
    ["ui-tool-call", "the agent calls a UI tool and stops: the middleware calls it, then a tool result and an mcp-apps activity",
      () => produce(mw(), (r) => [...call(r, "tc1", "show_chart", "{\"kind\":\"bar\"}"), finished(r)])],
    ["two-ui-tool-calls", "two UI tool calls in one run: two results, two activities",
      () => produce(mw(), (r) => [...call(r, "tc1", "show_chart"), ...toolCall("tc2", "show_chart", "{\"kind\":\"line\"}"), finished(r)])],
    ["ui-tool-fails", "the UI tool's call fails on the server: an error result",
      () => produce(mw(), (r) => [...call(r, "tc1", "fail_chart"), finished(r)])],
    ["non-ui-tool", "a tool without UI and a streamed answer: passed through",
      () => produce(mw(), (r) => [...call(r, "tc1", "plain"), ...text("m2", "Done", "."), finished(r)])],
    ["two-runs", "two runs, each calling the UI tool",
      () => produce(mw(), (r) => [...call(r, `tc-${r}`, "show_chart"), finished(r)], ["run-1", "run-2"])],
    ["upstream-error", "the upstream fails the run (RUN_ERROR) after the UI tool call",
      () => produce(mw(), (r) => [...call(r, "tc1", "show_chart"), { type: "RUN_ERROR", message: "model overloaded" }])],
  ];
};

async function main() {
  const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : null;
  const groups = [];
  if (!only || only === "a2ui") groups.push(["@ag-ui/a2ui-middleware", A2UI]);
  let mcp = null;
  let hash = null;
  if (!only || only === "mcp-apps") {
    mcp = await startMcp();
    hash = getServerHash({ type: "http", url: mcp.url });
    groups.push(["@ag-ui/mcp-apps-middleware", MCP(mcp.url)]);
  }
  for (const [producer, scenarios] of groups) {
    for (const [scenario, about, run] of scenarios) {
      const { events, error } = await run();
      emitStream(producer, version(producer), scenario, about, events, error, hash);
    }
  }
  if (mcp) await mcp.close();
  process.exit(0);
}

await main();
