#!/usr/bin/env node
// activity-check adapter for the AG-UI reference TypeScript client (@ag-ui/client, @ag-ui/core).
//
// It speaks the adapter protocol of activity-check (README, "Adapter protocol"): one JSON
// object per line on stdin, {"id", "events": [wire events], "state"?: initial agent state},
// answered by one JSON object per line on stdout, in request order:
//   {"id", "peer", "messages", "warnings": null, "fatal": null | {"atEvent", "detail"},
//    "runInput", "state", "log"}
// or {"id", "error"} when the adapter itself could not process the request. The client's own
// warnings are free text on the console, not activity-check codes, so "warnings" is null (not
// observable) and the console lines go to "log" (shown to people, never compared).
//
// Two modes:
//   --mode reducer   the client's event reducer alone (defaultApplyEvents), fed the trace as
//                    it stands: no enforcement, chunk expansion or verification.
//   --mode pipeline  an AbstractAgent subclass whose run() streams the trace, driven by the
//                    client's own runAgent(): compatibility middleware, enforcement (schema
//                    validation), chunk expansion, verification, then the reducer. Events are
//                    delivered one per macrotask, as a transport would deliver them.
// In both modes the run input is what the client would send next: agent.prepareRunAgentInput()
// over the final messages (reducer), or the input a second runAgent() call hands to the agent
// after the client's outgoing enforcement (pipeline).
//
// stdout carries protocol lines only: every console method is captured while a request runs.

import { createInterface } from "node:readline";
import { createRequire } from "node:module";
import { Observable, from, lastValueFrom } from "rxjs";
import {
  AbstractAgent,
  defaultApplyEvents,
  enforceOutgoingInput,
  EventType,
} from "@ag-ui/client";

const require = createRequire(import.meta.url);
const CLIENT_VERSION = require("@ag-ui/client/package.json").version;
const CORE_VERSION = require("@ag-ui/core/package.json").version;

function parseArgs(argv) {
  let mode = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--mode") mode = argv[++i];
    else if (argv[i].startsWith("--mode=")) mode = argv[i].slice(7);
    else if (argv[i] === "--help" || argv[i] === "-h") {
      process.stderr.write("usage: adapter.mjs --mode reducer|pipeline\n");
      process.exit(0);
    } else {
      process.stderr.write(`adapter.mjs: unknown argument ${JSON.stringify(argv[i])}\n`);
      process.exit(2);
    }
  }
  if (mode !== "reducer" && mode !== "pipeline") {
    process.stderr.write("adapter.mjs: --mode must be reducer or pipeline\n");
    process.exit(2);
  }
  return { mode };
}

const { mode } = parseArgs(process.argv.slice(2));
const PEER = `@ag-ui/client@${CLIENT_VERSION}+@ag-ui/core@${CORE_VERSION} (${mode})`;

// --- console capture ---------------------------------------------------------------------------

let captured = null;
for (const method of ["log", "info", "debug", "warn", "error", "trace"]) {
  console[method] = (...args) => {
    const text = args
      .map((a) => (typeof a === "string" ? a : a instanceof Error ? `${a.name}: ${a.message}` : safeJson(a)))
      .join(" ");
    if (captured !== null) captured.push(`${method}: ${text}`.slice(0, 2000));
  };
}

function safeJson(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

// --- the agent ---------------------------------------------------------------------------------

// Streams a scripted trace from run(): one event per macrotask (setImmediate), so the client's
// asynchronous stages settle between events as they would between network chunks. Records which
// event was emitted last, so that a failure can be placed at the event that caused it, and the
// input of every run it was asked for.
class ScriptedAgent extends AbstractAgent {
  constructor(config) {
    super(config);
    this.script = [];
    this.emitted = -1;
    this.inputs = [];
  }

  run(input) {
    this.inputs.push(input);
    const script = this.script;
    return new Observable((subscriber) => {
      let index = 0;
      let timer = null;
      const next = () => {
        if (subscriber.closed) return;
        if (index >= script.length) {
          subscriber.complete();
          return;
        }
        this.emitted = index;
        subscriber.next(script[index++]);
        timer = setImmediate(next);
      };
      timer = setImmediate(next);
      return () => clearImmediate(timer);
    });
  }
}

function clone(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

function describeError(error) {
  if (error instanceof Error) {
    if (Array.isArray(error.issues)) {
      // zod: name each issue by its path
      const issues = error.issues.map((i) => `${(i.path || []).join(".") || "(root)"}: ${i.message}`);
      return `${error.name}: ${issues.join("; ")}`.slice(0, 1000);
    }
    return `${error.name}: ${error.message}`.slice(0, 1000);
  }
  return String(error).slice(0, 1000);
}

// --- reducer mode ------------------------------------------------------------------------------

async function runReducer(events, initialState) {
  const agent = new ScriptedAgent({ threadId: "thread-1", initialState: clone(initialState ?? {}) });
  const input = {
    threadId: "thread-1",
    runId: "run-1",
    state: clone(initialState ?? {}),
    messages: [],
    tools: [],
    context: [],
    forwardedProps: {},
  };
  let messages = [];
  let state = clone(initialState ?? {});
  let current = -1;
  let fatal = null;
  // The reducer tells each subscriber about an event before applying it; that places a failure.
  const position = new Map(events.map((e, i) => [e, i]));
  const locator = { onEvent: ({ event }) => void (current = position.get(event) ?? current) };
  try {
    await lastValueFrom(
      new Observable((sub) =>
        defaultApplyEvents(input, from(events), agent, [locator]).subscribe({
          next: (mutation) => {
            if (mutation.messages !== undefined) messages = mutation.messages;
            if (mutation.state !== undefined) state = mutation.state;
            sub.next(mutation);
          },
          error: (err) => sub.error(err),
          complete: () => sub.complete(),
        }),
      ),
      { defaultValue: null },
    );
  } catch (error) {
    fatal = { atEvent: Math.max(current, 0), detail: describeError(error) };
  }
  agent.messages = clone(messages);
  agent.state = clone(state);
  const runInput = agent.prepareRunAgentInput({ runId: "run-next" }).messages;
  return { messages, state, fatal, runInput };
}

// --- pipeline mode -----------------------------------------------------------------------------

async function runPipeline(events, initialState) {
  const agent = new ScriptedAgent({ threadId: "thread-1", initialState: clone(initialState ?? {}) });
  agent.script = events;
  let fatal = null;
  try {
    await agent.runAgent({ runId: "run-1" });
  } catch (error) {
    fatal = { atEvent: Math.max(agent.emitted, 0), detail: describeError(error) };
  }
  const messages = clone(agent.messages);
  const state = clone(agent.state);
  // What the client sends next: a second run, whose input reaches the agent after the
  // middleware chain; the outgoing enforcement a transport applies is applied to it.
  agent.script = [
    { type: EventType.RUN_STARTED, threadId: "thread-1", runId: "run-next" },
    { type: EventType.RUN_FINISHED, threadId: "thread-1", runId: "run-next" },
  ];
  let runInput;
  try {
    await agent.runAgent({ runId: "run-next" });
    const sent = agent.inputs[agent.inputs.length - 1];
    runInput = clone(enforceOutgoingInput(clone(sent)).messages);
  } catch (error) {
    // The client refuses to send its next input: the run input is not observable.
    runInput = null;
    captured?.push(`error: next run input refused: ${describeError(error)}`);
  }
  return { messages, state, fatal, runInput };
}

// --- the protocol loop -------------------------------------------------------------------------

async function handle(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    return { id: null, error: `request is not JSON: ${describeError(error)}` };
  }
  const id = request && typeof request === "object" ? request.id ?? null : null;
  if (!request || typeof request !== "object" || !Array.isArray(request.events)) {
    return { id, error: "request needs an 'events' array" };
  }
  captured = [];
  try {
    const run = mode === "reducer" ? runReducer : runPipeline;
    const result = await run(clone(request.events), request.state);
    return {
      id,
      peer: PEER,
      messages: result.messages,
      warnings: null,
      fatal: result.fatal,
      runInput: result.runInput,
      state: result.state,
      log: captured,
    };
  } catch (error) {
    return { id, error: `adapter failure: ${describeError(error)}`, log: captured };
  } finally {
    captured = null;
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
let chain = Promise.resolve();
lines.on("line", (line) => {
  if (!line.trim()) return;
  chain = chain.then(async () => {
    const response = await handle(line);
    process.stdout.write(JSON.stringify(response) + "\n");
  });
});
lines.on("close", () => {
  chain.then(() => process.exit(0));
});
