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

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { StreamProcessor, uiMessagesToWire } from "@tanstack/ai";
import { clone, renameGenerated, serveConsumer, text } from "../common/adapter-kit.mjs";

// the exports map publishes no package.json: read it next to the resolved entry (dist/esm/)
const ENTRY = fileURLToPath(import.meta.resolve("@tanstack/ai"));
const VERSION = JSON.parse(readFileSync(join(dirname(ENTRY), "..", "..", "package.json"), "utf8")).version;
const PEER = `@tanstack/ai@${VERSION} (StreamProcessor)`;

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

serveConsumer(PEER, consume);
