// Pieces the Node producer scripts share (./produce.mjs, ./mastra/produce-mastra.mjs): Node
// built-ins only, imported by relative path, so that each script's folder resolves its own
// packages.

/** Every console method writes to stderr: stdout carries the stream lines only. */
export function quietConsole() {
  for (const m of ["log", "info", "debug", "warn", "error", "trace"]) {
    console[m] = (...a) => process.stderr.write(`${m}: ${a.map(String).join(" ")}\n`);
  }
}

/** Rename every UUID in a stream "uuid-<n>" in order of appearance, and `hash` (when given)
 * "serverhash-canned". */
export function renameUuids(events, hash = null) {
  const names = new Map();
  const re = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  let text = JSON.stringify(events);
  if (hash) text = text.split(hash).join("serverhash-canned");
  text = text.replace(re, (u) => {
    if (!names.has(u)) names.set(u, `uuid-${names.size + 1}`);
    return names.get(u);
  });
  return JSON.parse(text);
}

/** Write one stream line: {producer, version, scenario, about, events, error}. */
export function emitStream(producer, version, scenario, about, events, error, hash = null) {
  process.stdout.write(JSON.stringify({ producer, version, scenario, about,
    events: renameUuids(JSON.parse(JSON.stringify(events)), hash), error }) + "\n");
}
