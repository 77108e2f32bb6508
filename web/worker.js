// The page's one adapter to the wasm core, in a Web Worker: the main thread never parses or predicts, so a
// 1 GB file does not freeze the page. The file is streamed chunk by chunk into wasm memory (no second full
// copy), parsed once, and kept open: a setting change only re-runs shape inference and prediction.
//
// Learned predictors' files are fetched when a prediction first needs them (predictors.js).
//
// Messages in:  {id, type: 'init'} | {id, type: 'open', file?: File|Blob, url?: string, name}
//               | {id, type: 'predict', table: options, sweep?: options, replay?: options, here?: options,
//                  focus?: device id (the table row that carries per-kernel rows; the first row without it)}
//               | {id, type: 'kernels', table: options, device}   (another row's kernels: the breakdown's device)
//               | {id, type: 'probe'}   ("this device": ~0.5 s of measurement, here in the worker)
// Messages out: {id, type: 'progress', phase: 'download'|'copy'|'parse'|'predictor', loaded, total}
//               | {id, type: 'progress', phase: 'table', table, replay, here, ms, predictorNote}   (before the sweep)
//               | {id, type: 'done', result} | {id, type: 'error', error: {name, message, detail, byteOffset?}}
//   predict's result: {name, table, replay, here, sweep, ms, memoryBytes, predictorNote: string|null}
//   replay: the GPUs' rows under another runtime (the page asks for CUDA graph replay beside eager), or null
//   here: the "this device" row (the probed machine with onnxruntime-web), or null
import { createPerfCard } from './lib/perfcard.js';
import { withPredictors } from './predictors.js';

let card = null;
let model = null;        // the OpenModel in use
let modelName = '';
let ready = createPerfCard();

function post(msg) {
  self.postMessage(msg);
}

function errorOf(e) {
  const out = { name: e?.name ?? 'Error', message: e?.message ?? String(e) };
  for (const k of ['detail', 'byteOffset', 'node', 'opType', 'graph']) if (e?.[k] !== undefined) out[k] = e[k];
  return out;
}

async function download(id, url) {
  const r = await fetch(url, { credentials: 'same-origin' });
  if (!r.ok) throw new Error(`cannot load ${url}: HTTP ${r.status}`);
  const total = Number(r.headers.get('content-length')) || 0;
  if (!r.body) return r.blob();
  const reader = r.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    post({ id, type: 'progress', phase: 'download', loaded, total });
  }
  return new Blob(chunks);
}

// Throttled progress: at most one message per 50 ms, and always the last.
function progress(id, phase) {
  let last = 0;
  return (loaded, total) => {
    const now = performance.now();
    if (loaded < total && now - last < 50) return;
    last = now;
    post({ id, type: 'progress', phase, loaded, total });
  };
}

function summarize(name, m, analysis, batchSymbol, ms) {
  const { nodes, ...rest } = analysis;
  return { name, fileBytes: m.fileBytes, analysis: rest, batchSymbol, ms };
}

async function open(id, msg, blobPromise, t0) {
  const blob = await blobPromise;
  card ??= await ready;
  const t1 = performance.now();
  const next = await card.openModel(blob, { onProgress: progress(id, 'copy') });
  const t2 = performance.now();
  post({ id, type: 'progress', phase: 'parse', loaded: 1, total: 1 });
  let analysis;
  let probe;
  try {
    analysis = next.analyze({});
    // Which symbolic dim --batch binds (the core decides; the page makes the rest into fields).
    const first = card.devices().devices[0].id;
    probe = next.predict({ devices: [first], batch: [1] });
  } catch (e) {
    next.close();
    throw e;
  }
  model?.close();  // the previous model goes only once the new one is good
  model = next;
  modelName = msg.name;
  const t3 = performance.now();
  return summarize(msg.name, next, analysis, probe.batch_symbol,
    { download: t1 - t0, copyAndParse: t2 - t1, analyze: t3 - t2, total: t3 - t0 });
}

async function predict(id, msg) {
  if (!model) throw new Error('no model is open');
  let { options, note } = await withPredictors(card, msg.table, self.location.href,
    (n) => post({ id, type: 'progress', phase: 'predictor', loaded: n, total: n }));
  const t0 = performance.now();
  const table = model.predict(options);
  let replay = null;
  try {
    replay = msg.replay ? model.predict(msg.replay) : null;
  } catch (e) {  // the companion column only: the table stands without it, and says why
    note = [note, `The CUDA graphs column could not be predicted: ${e?.message ?? e}`].filter(Boolean).join(' ');
  }
  let here = null;
  try {
    here = msg.here ? model.predict({ ...msg.here, predictor: options.predictor }) : null;
  } catch (e) {  // the visitor's row only: the table stands without it, and says why
    note = [note, `This device could not be predicted: ${e?.message ?? e}`].filter(Boolean).join(' ');
  }
  withKernels(table, options, here, msg.here && { ...msg.here, predictor: options.predictor }, msg.focus);
  const t1 = performance.now();
  // The table goes out first, so the page can draw it while the batch sweep is computed.
  if (msg.sweep) post({ id, type: 'progress', phase: 'table', table, replay, here, ms: t1 - t0, predictorNote: note });
  const sweep = msg.sweep ? model.predict({ ...msg.sweep, predictor: options.predictor }) : null;
  const t2 = performance.now();
  // With a sweep the table went out already (progress 'table'): not cloned a second time.
  return {
    name: modelName, table: msg.sweep ? null : table, replay: msg.sweep ? null : replay, here: msg.sweep ? null : here,
    sweep, ms: { table: t1 - t0, sweep: t2 - t1 },
    memoryBytes: card.memoryBytes, predictorNote: note,
  };
}

// Per-kernel rows for the one device the breakdown shows (this device's row too): for all 16 GPUs they are
// ~0.4 MB of JSON for ResNet-50 and made the table ten times slower to predict and to hand to the page.
function withKernels(table, options, here, hereOptions, focus) {
  const mine = here?.predictions.find((r) => r.device === focus);
  if (mine) {
    mine.kernels = kernelsOf(hereOptions, mine.device);
    return;
  }
  const row = table.predictions.find((r) => r.device === focus) ?? table.predictions[0];
  if (row) row.kernels = kernelsOf(options, row.device);
}
function kernelsOf(options, device) {
  return model.predict({ ...options, devices: [device], kernels: true }).predictions[0]?.kernels ?? null;
}

async function kernels(msg) {
  if (!model) throw new Error('no model is open');
  const { options } = await withPredictors(card, msg.table, self.location.href, () => {});
  return kernelsOf(options, msg.device);
}

self.onmessage = async ({ data: msg }) => {
  const { id } = msg;
  try {
    let result;
    if (msg.type === 'open') {
      // The download starts while the wasm module may still be compiling.
      const t0 = performance.now();
      result = await open(id, msg, msg.file ? Promise.resolve(msg.file) : download(id, msg.url), t0);
    } else {
      card ??= await ready;
      if (msg.type === 'init') result = { catalog: card.devices(), version: card.version };
      else if (msg.type === 'predict') result = await predict(id, msg);
      else if (msg.type === 'kernels') result = await kernels(msg);
      else if (msg.type === 'probe') result = await card.probeMachine();
      else throw new Error(`unknown message type ${msg.type}`);
    }
    post({ id, type: 'done', result });
  } catch (e) {
    if (card?.broken) {  // a trap (out of memory): the next message starts a fresh instance
      card = null;
      model = null;
      ready = createPerfCard();
    }
    post({ id, type: 'error', error: errorOf(e) });
  }
};
