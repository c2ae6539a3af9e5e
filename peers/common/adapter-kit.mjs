// Pieces shared by the Node adapters of activity-check (../ag-ui-client/driver.mjs,
// ../assistant-ui-react-ag-ui/adapter.mjs, ../tanstack-ai/adapter.mjs). Plain ESM with no
// package imports of its own: each adapter folder is its own npm package, so whatever a piece
// needs from node_modules (AbstractAgent, Observable) is handed in by the adapter, resolved from
// the adapter's own folder. Imported by relative path; this folder needs no package.json.
// serveConsumer() is the whole request loop of an adapter whose peer reports no warnings
// (assistant-ui, tanstack-ai); the @ag-ui/client driver maps warnings and has its own.

import { createInterface } from "node:readline";

const CONSOLE_METHODS = ["log", "info", "debug", "warn", "error", "trace"];

/** One console argument as text: a string as is, an Error as "Name: message", else its JSON
 * (String(value) when it has none). */
export function text(a) {
  if (typeof a === "string") return a;
  if (a instanceof Error) return `${a.name}: ${a.message}`;
  try {
    return JSON.stringify(a);
  } catch {
    return String(a);
  }
}

/** A deep copy of a JSON value (undefined stays undefined). */
export function clone(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/**
 * Replace every console method (log, info, debug, warn, error, trace), so that stdout carries
 * protocol lines only: each call becomes onLine(method, line), line being the arguments as
 * text() joined by a space.
 */
export function captureConsole(onLine) {
  for (const method of CONSOLE_METHODS) {
    console[method] = (...args) => onLine(method, args.map(text).join(" "));
  }
}

/**
 * The class of an agent whose run() streams a scripted trace: one event per macrotask
 * (setImmediate), so that a client's asynchronous stages settle between events as they would
 * between network chunks. An instance records the index of the event emitted last (emitted, -1
 * before the first), to place a failure or a warning at the event that caused it, and the input
 * of every run it was asked for (inputs).
 * @param {Function} AbstractAgent the @ag-ui/client class to extend (the adapter's own copy)
 * @param {Function} Observable the rxjs Observable that client uses
 * @returns {Function} class ScriptedAgent(config, script = [])
 */
export function scriptedAgentClass(AbstractAgent, Observable) {
  return class ScriptedAgent extends AbstractAgent {
    constructor(config, script = []) {
      super(config);
      this.script = script;
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
  };
}

/** Rename the message ids no event carries (ids a peer makes up itself) "generated-<n>" in order
 * of appearance, so that an answer depends on the trace alone: messages -> messages. */
export function renameGenerated(messages, events) {
  const known = new Set();
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === "string" && (k === "messageId" || k === "id" || k === "parentMessageId")) known.add(x);
        else walk(x);
      }
    }
  };
  walk(events);
  const names = new Map();
  const rename = (id) => {
    if (typeof id !== "string" || known.has(id)) return id;
    if (!names.has(id)) names.set(id, `generated-${names.size + 1}`);
    return names.get(id);
  };
  return messages.map((m) => ({ ...m, id: rename(m.id) }));
}

/**
 * Read one request line of the adapter protocol: {id, request} when it is a JSON object with
 * an "events" array, else {answer: {id, error}} (the answer to send as is). describe(error)
 * words a JSON parse error.
 */
export function readRequest(line, describe = text) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    return { answer: { id: null, error: `request is not JSON: ${describe(error)}` } };
  }
  const id = request && typeof request === "object" ? request.id ?? null : null;
  if (!request || typeof request !== "object" || !Array.isArray(request.events)) {
    return { answer: { id, error: "request needs an 'events' array" } };
  }
  return { id, request };
}

/**
 * Serve JSON lines on stdin/stdout: each non-blank line is handed to handle(line) (which may
 * return a promise), one at a time in order, and its answer written as one JSON line; the
 * process exits 0 once stdin closes and every answer is written.
 */
export function serveLines(handle) {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  let chain = Promise.resolve();
  lines.on("line", (line) => {
    if (!line.trim()) return;
    chain = chain.then(async () => {
      process.stdout.write(JSON.stringify(await handle(line)) + "\n");
    });
  });
  lines.on("close", () => {
    chain.then(() => process.exit(0));
  });
}

/**
 * Serve the adapter protocol for a peer that reports no warnings of its own (warnings: null):
 * every console line, and every line the adapter hands to log(), goes to the answer's "log"
 * (a console line as "<method>: <text>", cut to 2,000 characters). consume(events, state, log,
 * input) gets a copy of the request's events, its initial state (the request's "state", else
 * its run input's), log, and a copy of the request's "input" (the conformance corpus's
 * RunAgentInput, or undefined); it may return a promise, and gives {messages, runInput, fatal,
 * state?, events?, request?} (state: null when absent; events and request, the conformance
 * members, are answered only when given); an exception out of it answers
 * {id, error: "adapter failure: ..."}. Adapters: ../assistant-ui-react-ag-ui/adapter.mjs,
 * ../tanstack-ai/adapter.mjs.
 */
export function serveConsumer(peer, consume) {
  let captured = null;
  captureConsole((method, line) => captured?.push(`${method}: ${line}`.slice(0, 2000)));
  const log = (line) => captured?.push(line);
  serveLines(async (line) => {
    const { id, request, answer } = readRequest(line);
    if (answer) return answer;
    captured = [];
    try {
      const r = await consume(clone(request.events), request.state ?? request.input?.state, log,
                              clone(request.input));
      return {
        id, peer, messages: r.messages, warnings: null, fatal: r.fatal,
        runInput: r.runInput, state: r.state ?? null,
        ...(r.events !== undefined ? { events: r.events } : {}),
        ...(r.request !== undefined ? { request: r.request } : {}),
        log: captured,
      };
    } catch (error) {
      return { id, error: `adapter failure: ${text(error)}`.slice(0, 1000), log: captured };
    } finally {
      captured = null;
    }
  });
}
