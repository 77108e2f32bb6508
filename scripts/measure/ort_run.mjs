// Times one model configuration with onnxruntime-node on this CPU and prints one JSON line.
//   node ort_run.mjs MODEL.onnx --threads N --dim name=value ... [--runs 10] [--min-seconds 1]
// Run one configuration per process: peak resident memory (VmHWM) then belongs to it alone.
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';

const args = process.argv.slice(2);
const model = args[0];
let threads = 1, runs = 10, minSeconds = 1.0, warmup = 3;
const dims = {};
for (let i = 1; i < args.length; i++) {
  const a = args[i];
  if (a === '--threads') threads = Number(args[++i]);
  else if (a === '--runs') runs = Number(args[++i]);
  else if (a === '--min-seconds') minSeconds = Number(args[++i]);
  else if (a === '--warmup') warmup = Number(args[++i]);
  else if (a === '--dim') { const [k, v] = args[++i].split('='); dims[k] = Number(v); }
  else throw new Error(`unknown option ${a}`);
}

function vmhwmMiB() {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : null;
}

const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all',
});

// Inputs from the model's declared types with symbolic dims bound; deterministic pseudo-random contents.
let seed = 12345;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const feeds = {};
for (const name of session.inputNames) {
  const meta = session.inputMetadata.find ? session.inputMetadata.find((m) => m.name === name) : null;
  const shape = (meta?.shape ?? []).map((d, i) => {
    if (typeof d === 'number' && d > 0) return d;
    if (typeof d === 'string' && d in dims) return dims[d];
    throw new Error(`input ${name} dim ${i} (${d}) is not bound: pass --dim ${d}=N`);
  });
  const n = shape.reduce((a, b) => a * b, 1);
  const type = meta?.type ?? 'float32';
  let data;
  if (type === 'int64') data = BigInt64Array.from({ length: n }, () => BigInt(Math.floor(rand() * 100)));
  else if (type === 'int32') data = Int32Array.from({ length: n }, () => Math.floor(rand() * 100));
  else if (type === 'bool') data = Uint8Array.from({ length: n }, () => 1);
  else data = Float32Array.from({ length: n }, () => rand() * 2 - 1);
  feeds[name] = new ort.Tensor(type, data, shape);
}

for (let i = 0; i < warmup; i++) await session.run(feeds);
const times = [];
const start = performance.now();
while (times.length < runs || (performance.now() - start) / 1000 < minSeconds) {
  const t0 = performance.now();
  await session.run(feeds);
  times.push(performance.now() - t0);
  if (times.length > 10000) break;
}
times.sort((a, b) => a - b);
const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
console.log(JSON.stringify({
  runs: times.length, median_ms: q(0.5), p10_ms: q(0.1), p90_ms: q(0.9), min_ms: times[0],
  spread: (q(0.9) - q(0.1)) / q(0.5), peak_rss_mib: vmhwmMiB(), ort_version: ort.env.versions?.node ?? null,
}));
