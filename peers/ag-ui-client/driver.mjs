// The driver shared by the activity-check adapters of @ag-ui/client (every version): this
// folder's adapter.mjs (1.0.0) and ../ag-ui-client-0.0.59/adapter.mjs hand it the client and
// rxjs modules their own node_modules resolve, so one driver serves each pinned version.
//
// It speaks the adapter protocol of activity-check (docs/peers.md, "Adapter protocol"): one JSON
// object per line on stdin, {"id", "events": [wire events], "state"?: initial agent state},
// answered by one JSON object per line on stdout, in request order:
//   {"id", "peer", "messages", "warnings", "warningsComplete", "fatal": null | {"atEvent",
//    "detail"}, "runInput", "state", "log"}
// and in pipeline mode the conformance members (docs/conformance.md): "events" (what a
// subscriber's onEvent was told of: the events delivered to the application), "request" (the
// RunAgentInput of the run, after outgoing enforcement) and "observes": ["state"]; a request's
// "input" (the corpus's RunAgentInput) gives the messages the agent holds before the run, and
// "client" ({maxProtocolVersion}) the peer's protocol version the era shims are gated on;
// or {"id", "error"} when the adapter itself could not process the request.
//
// Warnings: the client prints free text on the console. Every line printed while the trace is
// consumed is kept in "log" and matched against the table in warnings.json (docs/peers.md, "Warnings
// of @ag-ui/client"): a line a "code" entry matches becomes {code, messageId, atEvent} (atEvent: the
// event being consumed when it was printed); a line an "ignore" entry matches is not a warning
// (it accompanies a failure, which "fatal" reports). When every line is matched, "warnings" is
// the list and "warningsComplete" true; when some line is not, "warnings" is null (not
// comparable), "warningsComplete" false and the matched part is in "warningsMapped".
//
// Two modes:
//   --mode reducer   the client's event reducer alone (defaultApplyEvents), fed the trace as
//                    it stands: no enforcement, chunk expansion or verification.
//   --mode pipeline  an AbstractAgent subclass whose run() streams the trace, driven by the
//                    client's own runAgent(): compatibility middleware, enforcement (schema
//                    validation, 1.x), chunk expansion, verification, then the reducer. Events
//                    are delivered one per macrotask, as a transport would deliver them.
// In both modes the run input is what the client would send next: agent.prepareRunAgentInput()
// over the final messages (reducer), or the input a second runAgent() call hands to the agent
// after the client's outgoing enforcement where the version has it (enforceOutgoingInput, 1.x;
// 0.0.x sends the input as the agent received it).
//
// stdout carries protocol lines only: every console method is captured while a request runs.

import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { captureConsole, clone, readRequest, scriptedAgentClass, serveLines } from "../common/adapter-kit.mjs";

const TABLE = JSON.parse(readFileSync(new URL("./warnings.json", import.meta.url), "utf8"));

/** The warning table's entries with their patterns compiled: [{re, code|null, messageId}]. */
export function compileTable(table = TABLE) {
  return table.entries.map((e) => ({
    re: new RegExp(e.pattern, "s"),
    method: e.method ?? "warn",
    code: e.code ?? null,
    messageId: e.messageId ?? null,
  }));
}

/**
 * Map captured console lines to warnings: [{method, text, atEvent}] and the trace's wire events
 * -> {warnings: [{code, messageId, atEvent, detail}], unmapped: [text]}. An entry's messageId is the
 * name of a capture group of its pattern ("id"), "event" (the messageId of events[atEvent]) or
 * null.
 */
export function mapWarnings(lines, compiled, events = []) {
  const warnings = [];
  const unmapped = [];
  for (const line of lines) {
    const entry = compiled.find((e) => e.method === line.method && e.re.test(line.text));
    if (!entry) {
      unmapped.push(`${line.method}: ${line.text}`);
      continue;
    }
    if (entry.code === null) continue; // a known line that is not a warning
    const groups = line.text.match(entry.re).groups ?? {};
    const event = events[line.atEvent];
    let messageId = null;
    if (entry.messageId === "event") {
      messageId = event && typeof event.messageId === "string" ? event.messageId : null;
    } else if (entry.messageId !== null) {
      messageId = groups[entry.messageId] ?? null;
    }
    // detail: the line as printed (shown, not compared; the conformance corpus's `warnings`
    // keys are substrings of a client's own words)
    warnings.push({ code: entry.code, messageId, atEvent: line.atEvent, detail: line.text });
  }
  return { warnings, unmapped };
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

function parseArgs(argv, script) {
  let mode = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--mode") mode = argv[++i];
    else if (argv[i].startsWith("--mode=")) mode = argv[i].slice(7);
    else if (argv[i] === "--help" || argv[i] === "-h") {
      process.stderr.write(`usage: ${script} --mode reducer|pipeline\n`);
      process.exit(0);
    } else {
      process.stderr.write(`${script}: unknown argument ${JSON.stringify(argv[i])}\n`);
      process.exit(2);
    }
  }
  if (mode !== "reducer" && mode !== "pipeline") {
    process.stderr.write(`${script}: --mode must be reducer or pipeline\n`);
    process.exit(2);
  }
  return { mode };
}

/**
 * Serve the adapter protocol on stdin/stdout.
 * @param {object} o
 * @param {object} o.client the @ag-ui/client module (namespace)
 * @param {object} o.rxjs the rxjs module the client uses
 * @param {string} o.adapterUrl the adapter's import.meta.url: the versions of @ag-ui/client and
 *   @ag-ui/core are read from the node_modules it resolves
 * @param {string[]} [o.argv] the adapter's arguments (--mode reducer|pipeline; default: the
 *   process's)
 * @param {string} [o.script] the adapter's name, for usage errors (default adapter.mjs)
 */
export function serve({ client, rxjs, adapterUrl, argv = process.argv.slice(2), script = "adapter.mjs" }) {
  const require = createRequire(adapterUrl);
  const clientVersion = require("@ag-ui/client/package.json").version;
  const coreVersion = require("@ag-ui/core/package.json").version;
  const { AbstractAgent, defaultApplyEvents, EventType } = client;
  const enforceOutgoingInput = client.enforceOutgoingInput ?? null;
  const { Observable, from, lastValueFrom } = rxjs;
  const { mode } = parseArgs(argv, script);
  const PEER = `@ag-ui/client@${clientVersion}+@ag-ui/core@${coreVersion} (${mode})`;
  const compiled = compileTable();

  // --- console capture: each line with the event being consumed when it was printed ----------
  let captured = null;
  let where = () => null; // the event index being consumed (null: not consuming the trace)
  captureConsole((method, line) => {
    if (captured !== null) captured.push({ method, text: line.slice(0, 2000), atEvent: where() });
  });

  const ScriptedAgent = scriptedAgentClass(AbstractAgent, Observable);

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
    // The reducer tells each subscriber about an event before applying it; that places a
    // failure, and the console lines printed while it is applied.
    const position = new Map(events.map((e, i) => [e, i]));
    const locator = { onEvent: ({ event }) => void (current = position.get(event) ?? current) };
    where = () => Math.max(current, 0);
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
    where = () => null;
    agent.messages = clone(messages);
    agent.state = clone(state);
    const runInput = agent.prepareRunAgentInput({ runId: "run-next" }).messages;
    return { messages, state, fatal, runInput };
  }

  async function runPipeline(events, initialState, runIn, client) {
    // the conformance corpus's run input (its messages held before the run), when given
    const held = Array.isArray(runIn?.messages) ? clone(runIn.messages) : undefined;
    // and its peer pin: the protocol version the peer speaks, which the version gates (era
    // shims) read when the agent is built
    const pin = typeof client?.maxProtocolVersion === "string" ? client.maxProtocolVersion : null;
    const Agent = pin === null ? ScriptedAgent : class extends ScriptedAgent {
      get maxProtocolVersion() { return pin; }
    };
    const agent = new Agent({ threadId: "thread-1", initialState: clone(initialState ?? {}),
                              ...(held ? { initialMessages: held } : {}) });
    agent.script = events;
    let fatal = null;
    // what reaches the application: the events a subscriber is told of, after middleware and
    // enforcement (delivered versus dropped, for the conformance corpus's event keys)
    const delivered = [];
    const onEvent = ({ event }) => void delivered.push(clone(event));
    where = () => Math.max(agent.emitted, 0);
    try {
      await agent.runAgent({ runId: "run-1" }, { onEvent });
    } catch (error) {
      fatal = { atEvent: Math.max(agent.emitted, 0), detail: describeError(error) };
    }
    where = () => null;
    const messages = clone(agent.messages);
    const state = clone(agent.state);
    const first = agent.inputs.length ? clone(agent.inputs[0]) : null;
    const request = first && enforceOutgoingInput ? enforceOutgoingInput(first) : first;
    // What the client sends next: a second run, whose input reaches the agent after the
    // middleware chain; the outgoing enforcement a transport applies is applied to it.
    agent.script = [
      { type: EventType.RUN_STARTED, threadId: "thread-1", runId: "run-next" },
      { type: EventType.RUN_FINISHED, threadId: "thread-1", runId: "run-next" },
    ];
    let runInput;
    try {
      await agent.runAgent({ runId: "run-next" });
      const sent = clone(agent.inputs[agent.inputs.length - 1]);
      runInput = clone((enforceOutgoingInput ? enforceOutgoingInput(sent) : sent).messages);
    } catch (error) {
      // The client refuses to send its next input: the run input is not observable.
      runInput = null;
      captured?.push({ method: "error", text: `next run input refused: ${describeError(error)}`, atEvent: null });
    }
    return { messages, state, fatal, runInput, events: delivered, request };
  }

  async function handle(line) {
    const { id, request, answer } = readRequest(line, describeError);
    if (answer) return answer;
    captured = [];
    try {
      const run = mode === "reducer" ? runReducer : runPipeline;
      const result = await run(clone(request.events), request.state ?? request.input?.state,
                               request.input, request.client);
      // only the lines printed while the trace was consumed are the trace's warnings
      const during = captured.filter((l) => l.atEvent !== null);
      const { warnings, unmapped } = mapWarnings(during, compiled, request.events);
      const complete = unmapped.length === 0;
      return {
        id,
        peer: PEER,
        messages: result.messages,
        warnings: complete ? warnings : null,
        warningsComplete: complete,
        ...(complete ? {} : { warningsMapped: warnings, warningsUnmapped: unmapped }),
        fatal: result.fatal,
        runInput: result.runInput,
        state: result.state,
        // conformance members (pipeline mode): delivered events, the run input sent
        ...(result.events ? { events: result.events, request: result.request, observes: ["state"] } : {}),
        log: captured.map((l) => (l.atEvent === null ? `${l.method}: ${l.text}` : `${l.method} @${l.atEvent}: ${l.text}`)),
      };
    } catch (error) {
      return { id, error: `adapter failure: ${describeError(error)}`, log: captured.map((l) => l.text) };
    } finally {
      captured = null;
      where = () => null;
    }
  }

  serveLines(handle);
}
