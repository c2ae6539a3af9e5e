#!/usr/bin/env node
// activity-check adapter for @assistant-ui/react-ag-ui (the version pinned in this folder's
// package-lock.json), its AG-UI event handling driven headless in Node: no DOM, no React render.
//
// What it drives: AgUiThreadRuntimeCore, the plain class the package's only exported runtime
// entry point, the React hook useAgUiRuntime(), builds and keeps (a hook cannot be called
// outside a React render, and the package's exports map publishes nothing else that consumes
// events; the class is loaded by its path in the installed package, dist/runtime/). The core is
// given an @ag-ui/client AbstractAgent (the client version the package depends on) whose run()
// streams the trace one event per macrotask; core.reload(null) starts a run as the UI's
// "regenerate" does: the client's runAgent() pipeline, then assistant-ui's subscriber, event
// parser (parseAgUiEvent), run aggregator and message repository.
//
// Answer: "messages" are the thread in AG-UI wire form as the package itself converts it
// (toAgUiMessages, exported), which is also what it sends as the next run input ("runInput":
// buildRunInput() of the next run); "state" is the core's agent state snapshot; "fatal" is the
// run failing (the core reports it through onError), placed at the event last delivered (an
// onError for the producer's own RUN_ERROR is not the consumer failing: it goes to "log");
// "warnings" null (the package logs through a logger, whose lines go to "log"). The conformance
// members: "events" are the events a subscriber the application adds to the agent it hands the
// runtime (AbstractAgent.subscribe, the one event channel this stack gives an application: the
// runtime itself publishes none, only its thread) is told of, the same events the runtime's own
// subscriber receives from the client's runAgent() pipeline; "request" is the RunAgentInput the
// runtime built (buildRunInput) and the agent's run() was handed. A request's "input" (the
// corpus's RunAgentInput) seeds the thread before the run through the core's own import of
// AG-UI messages (importMessagesSnapshot: fromAgUiMessages, then the thread replaced), as a
// MESSAGES_SNAPSHOT would. The run id the runtime makes up for the request is renamed
// "generated-run" and the request's generated message ids as the answer's. Ids the package
// generates for its own assistant placeholders are random: they are renamed "generated-<n>" in
// order of appearance so that an answer depends on the trace alone.

import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Observable } from "rxjs";
import { AbstractAgent } from "@ag-ui/client";
import { toAgUiMessages } from "@assistant-ui/react-ag-ui";
import { clone, renameGenerated, scriptedAgentClass, serveConsumer, text } from "../common/adapter-kit.mjs";

const require = createRequire(import.meta.url);
// the package's exports map publishes "." alone (dist/index.js): its folder is found from there
const DIST = dirname(fileURLToPath(import.meta.resolve("@assistant-ui/react-ag-ui")));
const VERSION = JSON.parse(readFileSync(join(DIST, "..", "package.json"), "utf8")).version;
const CLIENT_VERSION = require("@ag-ui/client/package.json").version;
const { AgUiThreadRuntimeCore } = await import(
  pathToFileURL(join(DIST, "runtime", "AgUiThreadRuntimeCore.js")).href
);
const PEER = `@assistant-ui/react-ag-ui@${VERSION}+@ag-ui/client@${CLIENT_VERSION} (runtime core)`;

const ScriptedAgent = scriptedAgentClass(AbstractAgent, Observable);

async function consume(events, initialState, log, input) {
  const agent = new ScriptedAgent({ threadId: "thread-1", initialState: clone(initialState ?? {}) }, events);
  const delivered = [];
  agent.subscribe({ onEvent: ({ event }) => void delivered.push(clone(event)) });
  let failure = null;
  // The core reports through onError both its own failure and a RUN_ERROR the producer sent;
  // the latter ends the run as the producer said (the model's lifecycle.run-error), it is not
  // the consumer failing the run: it goes to the log.
  const fail = (error) => {
    const at = Math.max(agent.emitted, 0);
    if (events[at] && events[at].type === "RUN_ERROR") {
      log(`onError @${at} (the producer's RUN_ERROR): ${text(error)}`);
    } else if (failure === null) {
      failure = { atEvent: at, detail: text(error).slice(0, 1000) };
    }
  };
  const logger = {
    debug: (...a) => log(`debug: ${a.map(text).join(" ")}`),
    error: (...a) => log(`error: ${a.map(text).join(" ")}`),
  };
  const core = new AgUiThreadRuntimeCore({
    agent,
    logger,
    showThinking: true,
    onError: (error) => fail(error),
    notifyUpdate: () => {},
  });
  if (initialState !== undefined && initialState !== null) core.stateSnapshot = clone(initialState);
  if (Array.isArray(input?.messages) && input.messages.length) {
    core.importMessagesSnapshot(clone(input.messages), undefined);
  }
  try {
    await core.reload(null);
  } catch (error) {
    fail(error); // the core reports the failure (onError) and rethrows it
  }
  const thread = core.getMessages();
  // ids the trace or the run input carry are kept; the others are the package's own
  const known = [...events, ...(Array.isArray(input?.messages) ? input.messages : [])];
  const messages = renameGenerated(clone(toAgUiMessages(thread)), known);
  const runInput = renameGenerated(clone(core.buildRunInput("run-next", {}, thread).messages), known);
  let request = agent.inputs.length ? clone(agent.inputs[0]) : null;
  if (request) {
    // the runtime's run id is random (generateId): renamed, so an answer depends on the trace
    if (typeof request.runId === "string") request.runId = "generated-run";
    if (Array.isArray(request.messages)) request = { ...request, messages: renameGenerated(request.messages, known) };
  }
  return { messages, runInput, state: clone(core.getState() ?? null), fatal: failure,
           events: delivered, request };
}

serveConsumer(PEER, consume);
