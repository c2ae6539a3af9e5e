// A stand-in CopilotKit runtime for the CopilotKit adapters of activity-check
// (../copilotkitnext-core/adapter.mjs, ../copilotkit-react-core/adapter.mjs): an HTTP server on
// 127.0.0.1 (a port the system picks) that answers what a CopilotKit front end asks of its
// runtime over the REST transport: GET <base>/info (one agent, "default") and
// POST <base>/agent/default/run (the current trace as a text/event-stream body, one
// "data: <json>" frame per event). Node built-ins only, imported by relative path.
//
// Pacing: the trace is written one event at a time, and the server waits after each until the
// adapter says the client has taken it (delivered(), called from a tap on the client's event
// stream) and a macrotask has passed, as ScriptedAgent paces events in adapter-kit.mjs, so that
// a failure can be placed at the event that caused it. Once the adapter's run has settled
// (release(): the client failed the run and stopped reading), or a client has not taken an
// event within `stallMs`, the rest of that response is written without waiting.

import { createServer } from "node:http";
import { setImmediate as tick } from "node:timers/promises";
import { clone, renameGenerated } from "./adapter-kit.mjs";

/**
 * Start the runtime. Returns {base, serve(events), delivered(), release(), bodies, close()}:
 * base the runtime URL to give the front end; serve(events) sets the trace the next run
 * answers; delivered() counts one event taken by the client; release() says the run has
 * settled (stop pacing the response in flight); bodies the JSON bodies of every run request
 * received (the front end's RunAgentInput, newest last).
 */
export async function startRuntime({ stallMs = 5000, description = "activity-check trace" } = {}) {
  let script = [];
  let taken = 0;
  let released = false;
  let waiter = null;
  const bodies = [];
  const delivered = () => {
    taken += 1;
    if (waiter) waiter();
  };
  const release = () => {
    released = true;
    if (waiter) waiter();
  };
  const waitTaken = (n) =>
    new Promise((resolve) => {
      if (released) return resolve(false);
      if (taken >= n) return resolve(true);
      const timer = setTimeout(() => {
        waiter = null;
        resolve(false);
      }, stallMs);
      waiter = () => {
        if (taken >= n || released) {
          clearTimeout(timer);
          waiter = null;
          resolve(!released);
        }
      };
    });
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      if (req.method === "GET" && req.url.endsWith("/info")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ version: "activity-check", agents: { default: { description } } }));
        return;
      }
      if (req.method === "POST" && /\/agent\/default\/(run|connect)$/.test(req.url)) {
        try {
          bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8") || "null"));
        } catch {
          bodies.push(null);
        }
        const events = script;
        taken = 0;
        released = false;
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        let closed = false;
        res.on("close", () => void (closed = true));
        let pacing = true;
        for (let i = 0; i < events.length && !closed; i++) {
          res.write(`data: ${JSON.stringify(events[i])}\n\n`);
          if (pacing) pacing = await waitTaken(i + 1);
          await tick();
        }
        res.end();
        return;
      }
      if (req.method === "POST" && /\/agent\/default\/stop\//.test(req.url)) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
        return;
      }
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    base: `http://127.0.0.1:${port}/api`,
    serve: (events) => void (script = events),
    delivered,
    release,
    bodies,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The runtime's agent once a fresh core has connected to it (null after `ms`). */
async function connectedAgent(core, ms = 5000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const agent = core.getAgent("default");
    if (agent) return agent;
    await new Promise((r) => setTimeout(r, 2));
  }
  return null;
}

/**
 * The consume(events, initialState, log) of a CopilotKit adapter (for adapter-kit's
 * serveConsumer): a fresh core of class `Core` (CopilotKitCore, or CopilotKitCoreReact) per trace,
 * given `runtime.base` as its runtime URL, the way an application configures it; it fetches
 * <runtime>/info and runs the agent listed there (a ProxiedCopilotRuntimeAgent: HTTP POST, SSE
 * answer). The core only connects when `window` is defined (a browser); no DOM is used, so
 * `window` is made the global object. `tap` is the rxjs operator of the core's own rxjs, used to
 * count the events its agent takes (the runtime's pacing, and where a failure is placed).
 *
 * Gives {messages, state, fatal, runInput}: the agent's messages and state after the run; fatal
 * the run failing as the core reports it (onError "agent_run_failed"), at the event taken last;
 * the core's other errors (a producer's RUN_ERROR reported back, "agent_run_error_event") go to
 * the log; runInput the messages of the next run's request body as the runtime receives it.
 * Ids the core makes up are renamed "generated-<n>" (adapter-kit's renameGenerated).
 */
export function copilotKitConsumer(Core, tap, runtime) {
  if (typeof globalThis.window === "undefined") globalThis.window = globalThis;
  const describe = (e) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  return async function consume(events, initialState, log) {
    const core = new Core({ runtimeUrl: runtime.base });
    const errors = [];
    core.subscribe({
      onError: ({ error, code }) => {
        errors.push({ code, error });
        // the run failed: the client reads no more of the response (a producer's own RUN_ERROR
        // is not the client failing: it may read on)
        if (code !== "agent_run_error_event") runtime.release();
      },
    });
    const agent = await connectedAgent(core);
    if (!agent) {
      throw new Error(`the core did not connect to its runtime (${errors.map((e) => describe(e.error)).join("; ")})`);
    }
    agent.threadId = "thread-1";
    if (initialState !== undefined && initialState !== null) agent.setState(clone(initialState));
    let taken = -1;
    const run = agent.run.bind(agent);
    agent.run = (input) => run(input).pipe(tap(() => {
      taken += 1;
      runtime.delivered();
    }));
    runtime.serve(events);
    await core.runAgent({ agent });
    runtime.release();
    let fatal = null;
    const at = Math.max(taken, 0);
    for (const { code, error } of errors) {
      if (code === "agent_run_failed" && fatal === null) fatal = { atEvent: at, detail: describe(error).slice(0, 1000) };
      else log(`onError ${code} @${at}: ${describe(error)}`.slice(0, 2000));
    }
    const messages = renameGenerated(clone(agent.messages) ?? [], events);
    const state = clone(agent.state ?? null);
    // the next run: what the agent sends its runtime (the request body's messages)
    runtime.serve([
      { type: "RUN_STARTED", threadId: "thread-1", runId: "run-next" },
      { type: "RUN_FINISHED", threadId: "thread-1", runId: "run-next" },
    ]);
    const before = runtime.bodies.length;
    errors.length = 0;
    await core.runAgent({ agent });
    runtime.release();
    const body = runtime.bodies.length > before ? runtime.bodies[runtime.bodies.length - 1] : null;
    const runInput = body && Array.isArray(body.messages) ? renameGenerated(clone(body.messages), events) : null;
    for (const { code, error } of errors) log(`next run: onError ${code}: ${describe(error)}`.slice(0, 2000));
    return { messages, state, fatal, runInput };
  };
}
