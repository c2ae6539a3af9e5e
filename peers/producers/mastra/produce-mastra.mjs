#!/usr/bin/env node
// activity-check producer matrix: @ag-ui/mastra (the version pinned in this folder's
// package-lock.json) run offline through several scenarios, one JSON line per stream on stdout,
// in the form of ../produce.mjs.
//
// Offline: MastraAgent is given a replayed Mastra agent: an object with the shape of a
// @mastra/client-js agent (stream() answering an object whose processDataStream() hands the
// chunks over one by one), whose chunks are a fixed recording per scenario (text, a tool call,
// the background-task-* chunks Mastra writes for a tool run in the background). MastraAgent's
// own chunk processor turns them into AG-UI events, background tasks as "mastra-background-task"
// activities (a snapshot when a task is first seen in a run, then deltas). No model, no network.
//
// Usage: node produce-mastra.mjs

import { createRequire } from "node:module";
import { lastValueFrom, toArray } from "rxjs";
import { MastraAgent } from "@ag-ui/mastra";
import { emitStream, quietConsole } from "../kit.mjs";

quietConsole();
const require = createRequire(import.meta.url);
const VERSION = require("@ag-ui/mastra/package.json").version;
const PRODUCER = "@ag-ui/mastra";

/** A replayed remote Mastra agent: stream() answers the recording of run `runId`. */
function replayedAgent(recordings) {
  return {
    name: "planner",
    async stream(_messages, options) {
      const chunks = recordings[options.runId] ?? [];
      return {
        async processDataStream({ onChunk }) {
          for (const chunk of chunks) await onChunk(chunk);
        },
      };
    },
  };
}

const at = (s) => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;
const start = (id) => ({ type: "start", payload: { messageId: id } });
const text = (t) => ({ type: "text-delta", payload: { text: t } });
const finish = { type: "finish", payload: {} };
const call = (id, tool, args) => ({ type: "tool-call", payload: { toolCallId: id, toolName: tool, args } });
const task = (kind, taskId, toolCallId, more = {}) => ({
  type: `background-task-${kind}`, payload: { taskId, toolName: "crawl", toolCallId, ...more } });

const SCENARIOS = [
  ["background-task", "a tool run in the background: started, running, two outputs, progress, completed",
    { "run-1": [start("m1"), text("Crawling "), text("now."), call("tc1", "crawl", { site: "a" }),
      task("started", "task-1", "tc1"), task("running", "task-1", "tc1", { startedAt: at(1) }),
      task("output", "task-1", "tc1", { payload: { page: 1 } }),
      task("output", "task-1", "tc1", { payload: { page: 2 } }),
      { type: "background-task-progress", payload: { taskIds: ["task-1"], elapsedMs: 1500 } },
      task("completed", "task-1", "tc1", { result: { pages: 2 }, completedAt: at(3) }), finish] }],
  ["background-task-fails", "a background task that fails",
    { "run-1": [start("m1"), call("tc1", "crawl", { site: "b" }), task("started", "task-1", "tc1"),
      task("running", "task-1", "tc1", { startedAt: at(1) }),
      task("failed", "task-1", "tc1", { error: { message: "site down" }, completedAt: at(2) }),
      text("The crawl failed."), finish] }],
  ["two-background-tasks", "two background tasks at once, their chunks interleaved",
    { "run-1": [start("m1"), call("tc1", "crawl", { site: "a" }), task("started", "task-a", "tc1"),
      call("tc2", "crawl", { site: "b" }), task("started", "task-b", "tc2"),
      task("output", "task-a", "tc1", { payload: { page: 1 } }),
      task("output", "task-b", "tc2", { payload: { page: 1 } }),
      task("completed", "task-b", "tc2", { result: { pages: 1 }, completedAt: at(2) }),
      task("completed", "task-a", "tc1", { result: { pages: 1 }, completedAt: at(3) }), finish] }],
  ["background-task-cancelled", "a background task cancelled while running",
    { "run-1": [start("m1"), call("tc1", "crawl", { site: "c" }), task("started", "task-1", "tc1"),
      task("running", "task-1", "tc1", { startedAt: at(1) }),
      task("cancelled", "task-1", "tc1", { completedAt: at(2) }), text("Stopped."), finish] }],
  ["two-runs-resumed", "a task suspended in the first run and resumed and completed in the second",
    { "run-1": [start("m1"), call("tc1", "crawl", { site: "d" }), task("started", "task-1", "tc1"),
      task("suspended", "task-1", "tc1", { suspendPayload: { needs: "login" } }), finish],
      "run-2": [start("m2"), task("resumed", "task-1", "tc1", { startedAt: at(5) }),
        task("completed", "task-1", "tc1", { result: { pages: 3 }, completedAt: at(6) }),
        text("Done."), finish] }],
];

for (const [scenario, about, recordings] of SCENARIOS) {
  const agent = new MastraAgent({ agentId: "planner", agent: replayedAgent(recordings), resourceId: "user-1" });
  const events = [];
  let error = null;
  for (const runId of Object.keys(recordings)) {
    const input = { threadId: "thread-1", runId, state: {}, messages: [], tools: [], context: [], forwardedProps: {} };
    try {
      events.push(...(await lastValueFrom(agent.run(input).pipe(toArray()))));
    } catch (e) {
      error = `${e && e.name}: ${e && e.message}`;
      break;
    }
  }
  emitStream(PRODUCER, VERSION, scenario, about, events, error);
}
process.exit(0);
