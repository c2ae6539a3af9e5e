#!/usr/bin/env node
// activity-check adapter for @tanstack/ai (the version pinned in this folder's
// package-lock.json), its AG-UI event handling driven headless in Node (no DOM).
//
// What it drives: StreamProcessor (exported by "@tanstack/ai"), the event-processing class the
// package's chat clients (useChat, ChatClient) feed every AG-UI event they receive: one
// processor per request, each wire event handed to processChunk() in order, then
// finalizeStream() as at the end of a stream. Its UI messages are turned into AG-UI wire
// messages by the package's own converter, uiMessagesToWire() (exported), which is also the
// shape of the next RunAgentInput.messages: that is both "messages" and "runInput".
// "fatal": an exception out of processChunk, at that event. "state": null (the processor keeps
// no agent state: STATE_SNAPSHOT and STATE_DELTA are not its concern). "warnings": null (its
// console lines go to "log"). The wall-clock stamp it adds to each message is removed
// (withoutClock), and the ids it makes up are renamed generated-<n> (renameGenerated).

import { createInterface } from "node:readline";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { StreamProcessor, uiMessagesToWire } from "@tanstack/ai";

const require = createRequire(import.meta.url);
// the exports map publishes no package.json: read it next to the resolved entry (dist/esm/)
const ENTRY = fileURLToPath(import.meta.resolve("@tanstack/ai"));
const VERSION = JSON.parse(readFileSync(join(dirname(ENTRY), "..", "..", "package.json"), "utf8")).version;
const PEER = `@tanstack/ai@${VERSION} (StreamProcessor)`;
void require;

let captured = null;
for (const method of ["log", "info", "debug", "warn", "error", "trace"]) {
  console[method] = (...args) => {
    if (captured !== null) captured.push(`${method}: ${args.map(text).join(" ")}`.slice(0, 2000));
  };
}

function text(a) {
  if (typeof a === "string") return a;
  if (a instanceof Error) return `${a.name}: ${a.message}`;
  try {
    return JSON.stringify(a);
  } catch {
    return String(a);
  }
}

function clone(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

// The processor stamps each message it creates with the wall clock (metadata.tanstack.createdAt);
// that stamp is removed (and metadata with it when nothing else is left), so that an answer
// depends on the trace alone.
function withoutClock(message) {
  const meta = message.metadata;
  if (!meta || typeof meta !== "object" || !meta.tanstack || typeof meta.tanstack !== "object") return message;
  const { createdAt, ...tanstack } = meta.tanstack;
  void createdAt;
  const { tanstack: _, ...rest } = meta;
  const metadata = Object.keys(tanstack).length ? { ...rest, tanstack } : rest;
  const { metadata: __, ...out } = message;
  return Object.keys(metadata).length ? { ...out, metadata } : out;
}

// Rename the ids no event carries (messages the processor makes up itself, e.g. on RUN_ERROR:
// msg-<clock>-<random>) in order of appearance, so that an answer depends on the trace alone.
function renameGenerated(messages, events) {
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

function consume(events) {
  const processor = new StreamProcessor();
  let fatal = null;
  for (let i = 0; i < events.length && fatal === null; i++) {
    try {
      processor.processChunk(events[i]);
    } catch (error) {
      fatal = { atEvent: i, detail: text(error).slice(0, 1000) };
    }
  }
  if (fatal === null) {
    try {
      processor.finalizeStream();
    } catch (error) {
      fatal = { atEvent: Math.max(events.length - 1, 0), detail: text(error).slice(0, 1000) };
    }
  }
  const wire = renameGenerated(clone(uiMessagesToWire(processor.getMessages())).map(withoutClock), events);
  return { messages: wire, runInput: clone(wire), fatal };
}

function handle(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    return { id: null, error: `request is not JSON: ${text(error)}` };
  }
  const id = request && typeof request === "object" ? request.id ?? null : null;
  if (!request || typeof request !== "object" || !Array.isArray(request.events)) {
    return { id, error: "request needs an 'events' array" };
  }
  captured = [];
  try {
    const r = consume(clone(request.events));
    return { id, peer: PEER, messages: r.messages, warnings: null, fatal: r.fatal,
             runInput: r.runInput, state: null, log: captured };
  } catch (error) {
    return { id, error: `adapter failure: ${text(error)}`.slice(0, 1000), log: captured };
  } finally {
    captured = null;
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (!line.trim()) return;
  process.stdout.write(JSON.stringify(handle(line)) + "\n");
});
