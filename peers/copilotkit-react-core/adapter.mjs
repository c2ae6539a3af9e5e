#!/usr/bin/env node
// activity-check adapter for CopilotKit 1.74: @copilotkit/react-core (the version pinned in this
// folder's package-lock.json), driven headless in Node over its SSE path.
//
// What it drives: CopilotKitCoreReact, the core that react-core's provider (<CopilotKit>)
// constructs and every hook reads (exported by "@copilotkit/react-core/v2/headless"; a plain class
// over @copilotkit/core 1.74 and @ag-ui/client 0.0.59, no DOM and no React render needed to run
// an agent). As in ../copilotkitnext-core/adapter.mjs, the core is given the URL of a runtime
// this process serves on 127.0.0.1 (../common/sse-runtime.mjs) and runs the agent that runtime
// lists (a ProxiedCopilotRuntimeAgent: the RunAgentInput POSTed, the trace read back as
// text/event-stream). The answer is built by copilotKitConsumer (same file): messages, state,
// fatal (the run failing, onError agent_run_failed), runInput (the next run's request body);
// warnings null. The A2UI renderer (@copilotkit/a2ui-renderer, installed with react-core) draws
// a2ui-surface activities with React in a DOM and is not driven here.

import { createRequire } from "node:module";
import { tap } from "rxjs";
import { CopilotKitCoreReact } from "@copilotkit/react-core/v2/headless";
import { serveConsumer } from "../common/adapter-kit.mjs";
import { copilotKitConsumer, startRuntime } from "../common/sse-runtime.mjs";

const require = createRequire(import.meta.url);
const VERSION = require("@copilotkit/react-core/package.json").version;
const CLIENT = require("@ag-ui/client/package.json").version;
const PEER = `@copilotkit/react-core@${VERSION}+@ag-ui/client@${CLIENT} (CopilotKitCoreReact over SSE)`;

serveConsumer(PEER, copilotKitConsumer(CopilotKitCoreReact, tap, await startRuntime()));
