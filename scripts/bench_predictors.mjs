// The learned predictors' cost in the wasm core, next to the roofline's, on an open model:
//   node scripts/bench_predictors.mjs [MODEL.onnx] [--reps 15] [--cold]
// One JSON line per predictor: predict() of the default-view GPUs x 8 batch sizes (median and best ms of
// --reps calls each, thread time not isolated: run on a quiet machine), and the difference to the roofline,
// which is what the learned predictor adds (features + trees). Aim (issue 11): trees < 1 ms for 16 GPUs x 8
// batches. Also the one-off cost of loadPredictor (sha256, format checks, struct-of-arrays load).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// PERFCARD_DIST: another build's dist/ (to compare builds, e.g. with and without wasm SIMD).
const dist = process.env.PERFCARD_DIST ?? path.join(root, 'build/wasm/dist');
const { createPerfCard } = await import(path.join(dist, 'perfcard.js'));
const args = process.argv.slice(2);
const reps = args.includes('--reps') ? Number(args[args.indexOf('--reps') + 1]) : 31;
const modelPath = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--reps') ?? path.join(root, 'public/examples/resnet50.onnx');

const card = await createPerfCard();
const trees = readFileSync(path.join(root, 'weights/trees.pcwt'));
let t0 = performance.now();
await card.loadPredictor(trees, 'trees.pcwt');
const loadMs = performance.now() - t0;
const model = card.openModelSync(readFileSync(modelPath));
const options = { devices: 'all', batch: [1, 2, 4, 8, 16, 32, 64, 128] };

// The predictors take turns call by call, so that drift on a shared machine reaches all of them alike.
// "auto" runs with every learned file loaded, as the CLI and the page load them.
const names = ['roofline', 'trees', 'gnn', 'transformer', 'ensemble', 'auto'];
await card.loadPredictor(readFileSync(path.join(root, 'weights/gnn.pcwt')), 'gnn.pcwt');
await card.loadPredictor(readFileSync(path.join(root, 'weights/transformer.pcwt')), 'transformer.pcwt');
await card.loadPredictor(readFileSync(path.join(root, 'weights/ensemble.pcwt')), 'ensemble.pcwt');
const times = Object.fromEntries(names.map((n) => [n, []]));
const rows = {};
for (const n of names) rows[n] = model.predict({ ...options, predictor: n }).predictions.length;  // warm-up
for (let i = 0; i < reps; i++) {
  for (const n of names) {
    const s = performance.now();
    model.predict({ ...options, predictor: n });
    times[n].push(performance.now() - s);
  }
}
const median = (t) => [...t].sort((a, b) => a - b)[t.length >> 1];
for (const n of names) {
  const t = times[n];
  console.log(JSON.stringify({
    model: path.relative(root, modelPath), predictor: n, rows: rows[n], median_ms: Number(median(t).toFixed(3)),
    best_ms: Number(Math.min(...t).toFixed(3)),
    // Per call pair, so that both sides of a difference saw the same moment of the machine.
    over_roofline_median_ms: Number(median(t.map((v, i) => v - times.roofline[i])).toFixed(3)),
  }));
}
console.log(JSON.stringify({ load_predictor_ms: Number(loadMs.toFixed(2)), file_bytes: trees.length,
  note: 'the first loadPredictor() also instantiates the learned runtime (perfcard_learned.wasm)' }));

// The trees' own inference (issue 11's budget: < 1 ms in wasm for 16 GPUs x 8 batches): the learned
// module's margins() over the feature rows of the table's 128 rows, one call per batch's 16 rows as the
// core's module asks the model for a batch's verdicts, without the feature rows' making, the roofline or
// the crossing from the core's module (those are in over_roofline_median_ms above); and margin() one row a
// call, as the core asked before verdicts came in batches. The feature names' order comes from the native
// CLI. (Skipped for a build from before the learned module existed, when comparing builds through
// PERFCARD_DIST.)
const cli = path.join(root, 'build/native/core/perfcard');
if (existsSync(cli) && existsSync(path.join(dist, 'perfcard_learned.js'))) {
  const schema = JSON.parse(execFileSync(cli, ['features', '--schema', '--json'], { encoding: 'utf8' })).features.map((f) => f.name);
  const doc = model.predict({ ...options, predictor: 'trees', features: true });
  const rows = doc.predictions.map((r) => Float32Array.from(schema, (n) => r.features?.[n] ?? NaN));
  const { default: factory } = await import(path.join(dist, 'perfcard_learned.js'));
  const wasm = readFileSync(path.join(dist, 'perfcard_learned.wasm'));
  const mod = await factory({
    instantiateWasm(imports, done) {
      WebAssembly.instantiate(wasm, imports).then(({ instance, module }) => done(instance, module));
      return {};
    },
  });
  const file = mod._malloc(trees.length);
  mod.HEAPU8.set(trees, file);
  const loaded = mod.loadNetwork(file, trees.length, 'trees', schema.length);
  if (!loaded.ok) throw new Error(loaded.message);
  const width = schema.length * 4;
  const base = mod._malloc(rows.length * width);
  rows.forEach((r, i) => mod.HEAPU8.set(new Uint8Array(r.buffer), base + i * width));
  const batch = options.batch.length ? rows.length / options.batch.length : rows.length;
  const out = mod._malloc(batch * 8);
  const walks = { batches: [], rows: [] };
  let sum = 0;
  for (let rep = 0; rep < reps + 1; rep++) {
    let s = performance.now();
    for (let i = 0; i < rows.length; i += batch) {
      if (!mod.margins(loaded.handle, base + i * width, batch * schema.length, batch, out)) throw new Error(mod.lastError().message);
      sum += mod.HEAPF64[out / 8];
    }
    if (rep > 0) walks.batches.push(performance.now() - s);  // the first pass warms up
    s = performance.now();
    for (let i = 0; i < rows.length; i++) sum += mod.margin(loaded.handle, base + i * width, schema.length);
    if (rep > 0) walks.rows.push(performance.now() - s);
  }
  if (!Number.isFinite(sum)) throw new Error('a margin was not finite');
  for (const [how, t] of [[`margins(), ${batch} rows a call`, walks.batches], ['margin(), one row a call', walks.rows]]) {
    console.log(JSON.stringify({
      trees_inference: `${rows.length} feature rows x ${schema.length} features`, how, median_ms: Number(median(t).toFixed(3)),
      best_ms: Number(Math.min(...t).toFixed(3)),
    }));
  }
}
model.close();

// --cold: the first prediction after a model is opened, where the GNN and the transformer embed the model
// once per batch (their caches are empty): each rep opens the model in a fresh card with every file loaded.
// Issue 12's budget for the encoders is per embedding (< 10 ms on a 1,000-node graph): the difference to
// the trees' first prediction over the 8 batches, divided by 8, is printed as per_batch_over_trees_ms.
if (args.includes('--cold')) {
  const files = ['trees', 'gnn', 'transformer', 'ensemble'].map((n) => [readFileSync(path.join(root, `weights/${n}.pcwt`)), `${n}.pcwt`]);
  const bytes = readFileSync(modelPath);
  const cold = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < Math.max(3, Math.min(reps, 9)); i++) {
    for (const n of names) {
      const fresh = await createPerfCard();
      for (const [b, f] of files) await fresh.loadPredictor(b, f);
      const m = fresh.openModelSync(bytes);
      const s = performance.now();
      m.predict({ ...options, predictor: n });
      cold[n].push(performance.now() - s);
      m.close();
    }
  }
  for (const n of names) {
    console.log(JSON.stringify({
      model: path.relative(root, modelPath), predictor: n, first_prediction_median_ms: Number(median(cold[n]).toFixed(3)),
      per_batch_over_trees_ms: Number(((median(cold[n]) - median(cold.trees)) / options.batch.length).toFixed(3)),
    }));
  }
}
