#!/usr/bin/env node
// activity-check adapter for @copilotkitnext/core (the version pinned in this folder's
// package-lock.json), CopilotKit 2's headless core, driven over its SSE path in Node.
//
// What it drives: the path an application takes. A CopilotKitCore is given the URL of a
// runtime (../common/sse-runtime.mjs, an HTTP server on 127.0.0.1 this process starts); the core
// fetches <runtime>/info, builds a ProxiedCopilotRuntimeAgent for the agent it lists, and
// core.runAgent() makes that agent POST its RunAgentInput to <runtime>/agent/default/run and
// read the trace back as text/event-stream, through the @ag-ui/client it runs on (0.0.48: SSE
// parsing, chunk expansion, verification, the reducer), then the core's own run handling (tool
// follow-ups, suggestions). The core only connects to a runtime when `window` is defined (a
// browser); no DOM is needed, so `window` is the global object itself.
//
// Answer: "messages" and "state" are the agent's after the run; "runInput" the messages of the
// next run as they reach the runtime (the body of a second run's request); "fatal" the run failing
// as the core reports it (onError with agent_run_failed), placed at the event the client took
// last (the server waits for each to be taken); a producer's RUN_ERROR reported back
// (agent_run_error_event) and the core's other errors go to "log"; "warnings" null.

import { createRequire } from "node:module";
import { tap } from "rxjs";
import { CopilotKitCore } from "@copilotkitnext/core";
import { serveConsumer } from "../common/adapter-kit.mjs";
import { copilotKitConsumer, startRuntime } from "../common/sse-runtime.mjs";

const require = createRequire(import.meta.url);
const VERSION = require("@copilotkitnext/core/package.json").version;
const CLIENT = createRequire(require.resolve("@copilotkitnext/core"))("@ag-ui/client/package.json").version;
const PEER = `@copilotkitnext/core@${VERSION}+@ag-ui/client@${CLIENT} (runAgent over SSE)`;

serveConsumer(PEER, copilotKitConsumer(CopilotKitCore, tap, await startRuntime()));
