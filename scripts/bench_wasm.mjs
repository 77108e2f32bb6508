// The wasm half of scripts/bench.sh: one JSON line per model, comparable with perfcard_bench's.
//   node --no-experimental-fetch scripts/bench_wasm.mjs MODEL.onnx [--reps 10]
// read_once_ms: streaming the file into wasm memory (a node Blob backed by the file, copied chunk by
// chunk, as the page does with a dropped File); load_plus_analyze_ms: parse + analyze from bytes
// already in wasm memory (median); peak figures are the process's RSS and the wasm memory size.
import { openAsBlob } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { createPerfCard } = await import(path.join(root, 'build/wasm/dist/perfcard.js'));
const model = process.argv[2];
const reps = process.argv.includes('--reps') ? Number(process.argv[process.argv.indexOf('--reps') + 1]) : 10;

let peakRss = 0;
const sample = () => { peakRss = Math.max(peakRss, process.memoryUsage().rss); };
const rssBefore = process.memoryUsage().rss;
const card = await createPerfCard();
sample();
const blob = await openAsBlob(model);
const opts = { dims: { batch: 1 } };

// First call: stream the bytes in, parse, analyze.
let t0 = performance.now();
const session = await card.openModel(blob);
const openMs = performance.now() - t0;
sample();
const times = [];
let macs = 0;
for (let i = 0; i < reps; i++) {
  t0 = performance.now();
  const a = session.analyze(opts);
  times.push(performance.now() - t0);
  macs = a.totals.macs;
  sample();
}
session.close?.();
const streamPeak = peakRss;
// Parse + analyze from bytes already in JS memory: wasm cannot see them, so each call copies them in
// first; that copy is the floor for any wasm loader.
const bytes = new Uint8Array(await blob.arrayBuffer());
sample();
const full = [];
for (let i = 0; i < Math.min(reps, 5); i++) {
  t0 = performance.now();
  await card.analyze(bytes, opts);
  full.push(performance.now() - t0);
  sample();
}
times.sort((a, b) => a - b);
full.sort((a, b) => a - b);
const mb = blob.size / 2 ** 20;
console.log(JSON.stringify({
  model, file_mb: Number(mb.toFixed(2)), open_stream_parse_analyze_ms: Number(openMs.toFixed(2)),
  analyze_only_ms: Number(times[times.length >> 1].toFixed(3)),
  copy_parse_analyze_from_memory_ms: Number(full[full.length >> 1].toFixed(3)),
  peak_rss_mb_streaming_session: Number((streamPeak / 2 ** 20).toFixed(1)),
  peak_rss_over_file_streaming: Number(((streamPeak - rssBefore) / blob.size).toFixed(3)),
  peak_rss_mb_with_js_copy: Number((peakRss / 2 ** 20).toFixed(1)), rss_before_mb: Number((rssBefore / 2 ** 20).toFixed(1)),
  wasm_memory_mb: Number((card.memoryBytes / 2 ** 20).toFixed(1)), macs,
}));
