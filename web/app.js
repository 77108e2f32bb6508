// The PerfCard page: settings, the device table, charts, MIG view, export. All model work happens in
// worker.js (the wasm core in a Web Worker); this file only talks to it and draws.
import * as F from './format.js';
import { PALETTE, barChart, lineChart, migStrip, roofline, styleOf } from './charts.js';
import { MEMBERS } from './predictors.js';
import { MAX_HOST_US, SWEEP, parseFragment, predictOptions, toFragment } from './state.js';

const $ = (sel) => document.querySelector(sel);

function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

// ---- the worker -------------------------------------------------------------------------------------

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
let nextId = 1;
const pending = new Map();

function call(type, payload = {}, onProgress = null, transfer = []) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress });
    worker.postMessage({ id, type, ...payload }, transfer);
  });
}

worker.onmessage = ({ data }) => {
  const p = pending.get(data.id);
  if (!p) return;
  if (data.type === 'progress') { p.onProgress?.(data); return; }
  pending.delete(data.id);
  if (data.type === 'done') p.resolve(data.result);
  else {
    const e = new Error(data.error.message);
    Object.assign(e, data.error);
    p.reject(e);
  }
};
worker.onerror = (ev) => {
  ev.preventDefault?.();
  const e = new Error(`the predictor failed to start: ${ev.message || 'worker error'}`);
  for (const p of pending.values()) p.reject(e);
  pending.clear();
  showError(e.message);
  setStatus('error', e.message);
};

// ---- state ------------------------------------------------------------------------------------------

let settings = parseFragment(location.hash);
let catalog = null;       // devices(): devices, regions, runtimes, predictor
let catalogLoaded;        // resolves once catalog is set and the form is built
const catalogReady = new Promise((resolve) => { catalogLoaded = resolve; });
let examples = [];        // examples/index.json
let model = null;         // {name, label, fileBytes, analysis, batchSymbol, example}
let result = null;        // {table, sweep, options, here}
let probe = null;         // "this device": what probeMachine() measured in the worker (this tab, reloads included)
let busy = false;
let queued = false;

const perf = (window.__perfcard = { timings: [], ready: false });  // read by the tests and the benchmark

// The default view: the GPUs the catalog marks for it (the CLI's --device all); the others (older or
// rarer cards that public measurements used) are one click away in the device list.
function gpuIds() {
  return catalog.devices.filter((d) => d.kind === 'gpu' && d.default_view !== false).map((d) => d.id);
}

function selectedIds() {
  if (!settings.devices) return gpuIds();
  const known = new Set(catalog.devices.map((d) => d.id));
  return settings.devices.filter((id) => known.has(id));
}

function device(id) {
  return catalog.devices.find((d) => d.id === id);
}

function setStatus(state, message) {
  const s = $('#status');
  s.dataset.state = state;
  s.textContent = message;
}

function showError(message) {
  const e = $('#error');
  e.textContent = message;
  e.hidden = !message;
}

function syncFragment() {
  const f = toFragment(settings);
  if (f !== location.hash && !(f === '' && location.hash === '')) {
    history.replaceState(null, '', f || location.pathname + location.search);
  }
}

// ---- model loading ----------------------------------------------------------------------------------

function showProgress(p) {
  const box = $('#progress');
  const bar = $('#progress-bar');
  const txt = $('#progress-text');
  if (!p) { box.hidden = true; return; }
  box.hidden = false;
  const words = { download: 'Downloading', copy: 'Reading into WebAssembly memory', parse: 'Parsing and analyzing' };
  if (p.total > 0 && p.phase !== 'parse') {
    bar.max = p.total;
    bar.value = p.loaded;
    txt.textContent = `${words[p.phase]}: ${F.bytes(p.loaded)} of ${F.bytes(p.total)}`;
  } else {
    bar.removeAttribute('value');
    txt.textContent = `${words[p.phase] ?? 'Working'}…`;
  }
}

async function openModel(source) {
  showError('');
  setStatus('busy', `Opening ${source.label}…`);
  showProgress({ phase: 'copy', loaded: 0, total: source.file?.size ?? 0 });
  const t0 = performance.now();
  let summary;
  try {
    summary = await call('open', source.file ? { file: source.file, name: source.label } : { url: source.url, name: source.label }, showProgress);
  } catch (e) {
    showProgress(null);
    showError(`Could not open ${source.label}: ${e.message}`);
    setStatus(result ? 'ready' : 'error', result ? `Still showing ${model.label}.` : 'No model open.');
    return false;
  }
  showProgress(null);
  performance.mark('perfcard:opened');
  await catalogReady;
  model = { ...summary, label: source.label, example: source.example ?? null, openMs: performance.now() - t0 };
  settings.example = source.example ?? null;
  // Symbolic dims other than the batch become fields; an example brings its own defaults.
  const ex = examples.find((x) => x.name === source.example);
  const prior = source.keepDims ? settings.dims : {};
  const dims = {};
  for (const s of summary.analysis.symbols) {
    if (s.name === summary.batchSymbol) continue;
    dims[s.name] = prior[s.name] ?? ex?.dims?.[s.name] ?? (/seq|len|token/i.test(s.name) ? 128 : 1);
  }
  settings.dims = dims;
  renderModelInfo();
  renderDimFields();
  await predict();
  perf.timings.push({ model: model.label, open: summary.ms, firstPrediction: performance.now() - t0, readyAt: performance.now(), startedAt: t0 });
  return true;
}

function openExample(name, keepDims = false) {
  const ex = examples.find((x) => x.name === name);
  if (!ex) { showError(`There is no example named '${name}'.`); return Promise.resolve(false); }
  return openModel({ url: new URL(`examples/${ex.file}`, location.href).href, label: ex.file, example: ex.name, keepDims });
}

function renderModelInfo() {
  const a = model.analysis;
  const t = a.totals;
  const inputs = a.model.inputs.map((i) => `${i.name} ${i.dtype}[${(i.dims ?? []).map((d) => d ?? '?').join(', ')}]`).join('; ');
  const box = $('#model-info');
  box.hidden = false;
  box.replaceChildren(
    h('p', { class: 'model-name' }, h('strong', { text: model.label }), ` · ${F.bytes(model.fileBytes)} · opset ${a.model.opsets[''] ?? a.model.opsets['ai.onnx'] ?? '?'} · ${a.model.producer || 'unknown producer'}`),
    h('dl', { class: 'stats' },
      h('div', {}, h('dt', { text: 'Parameters' }), h('dd', { text: F.count(t.params) })),
      h('div', {}, h('dt', { text: 'Weights' }), h('dd', { text: F.bytes(t.weight_bytes) + (t.external_weight_bytes ? ' (external)' : '') })),
      h('div', {}, h('dt', { text: 'FLOPs (dims = 1)' }), h('dd', { text: F.count(t.flops) })),
      h('div', {}, h('dt', { text: 'Nodes' }), h('dd', { text: String(t.nodes) })),
      h('div', {}, h('dt', { text: 'Batch dim' }), h('dd', { text: model.batchSymbol ?? 'fixed in the graph' }))),
    h('p', { class: 'inputs' }, h('span', { class: 'muted', text: 'Inputs: ' }), inputs));
  document.title = `${model.label} · PerfCard`;
}

// Removing a focused field fires its change event (Chromium): while the fields are replaced, the form's
// handlers would read the previous model's value into the new model's settings.
let replacingFields = false;
function renderDimFields() {
  const box = $('#dims');
  replacingFields = true;
  try {
    box.replaceChildren(...Object.entries(settings.dims).map(([name, v]) => h('label', {},
      `${name} `,
      h('input', { type: 'number', min: 1, step: 1, value: v, 'data-dim': name, inputmode: 'numeric', name: `dim.${name}` }))));
  } finally {
    replacingFields = false;
  }
  $('#batch').disabled = model && !model.batchSymbol;
  $('#batch').title = model && !model.batchSymbol ? 'This model has a fixed batch' : '';
}

// ---- prediction -------------------------------------------------------------------------------------

async function predict() {
  if (!model) return;
  if (busy) { queued = true; return; }
  busy = true;
  queued = false;
  const ids = selectedIds();
  syncFragment();
  if (!ids.length) {
    busy = false;
    result = null;
    renderAll();
    setStatus('ready', 'No device chosen: pick some under Devices.');
    return;
  }
  renderSettingsSummary();
  const table = predictOptions(settings, ids);
  const sweep = model.batchSymbol ? { ...table, batch: SWEEP } : null;
  const replay = replayOptions(table);
  const here = hereOptions(table);
  setStatus('busy', 'Predicting…');
  performance.mark('perfcard:predict');
  const t0 = performance.now();
  try {
    let earlyTable = null;
    let drawn = null;
    let tableDrawn = null;  // ms from this prediction's start to its table on screen
    const early = (p) => {
      if (p.phase !== 'table') return;
      performance.mark('perfcard:table-received');
      // The table now; the breakdown and MIG view in the next task (the table shows first); the sweep
      // charts when the sweep arrives.
      const r0 = performance.now();
      earlyTable = p.table;
      result = { table: p.table, replay: p.replay, replayOptions: replay, here: p.here, hereOptions: here, sweep: null, options: table, ms: { table: p.ms, sweep: 0 }, pendingSweep: true, predictorNote: p.predictorNote, model: model.label };
      showStale(null);
      // Exports wait for the sweep: a CSV or JSON taken now would lack its batch sizes without saying so.
      $('#export-json').disabled = true;
      $('#export-csv').disabled = true;
      renderTable();
      renderWarnings();
      renderCli();
      perf.firstTableAt ??= performance.now();
      perf.renderTableMs = performance.now() - r0;
      tableDrawn = performance.now() - t0;
      drawn = new Promise((resolve) => setTimeout(() => {
        renderFocusSelect();
        renderBreakdown();
        renderMig();
        resolve();
      }, 0));
    };
    const r = await call('predict', { table, sweep, replay, here, focus: settings.focus }, early);
    await drawn;
    result = { ...r, table: r.table ?? earlyTable, replay: r.table ? r.replay : result.replay, replayOptions: replay,
      here: r.table ? r.here : result.here, hereOptions: here, options: table, roundTrip: performance.now() - t0, model: model.label };
    showError('');
    showStale(null);
    const r1 = performance.now();
    if (earlyTable) {
      renderSweep();
      renderProvenance();
      $('#export-json').disabled = false;
      $('#export-csv').disabled = false;
    } else {
      renderAll();
    }
    perf.renderRestMs = performance.now() - r1;
    const n = result.table.predictions.length;
    setStatus('ready', `${n} device${n === 1 ? '' : 's'}${result.here ? ' and this device' : ''} at batch ${result.table.predictions[0]?.batch ?? settings.batch}` +
      ` · predicted in ${F.sig(r.ms.table, 2)} ms` + (sweep ? ` (+ ${SWEEP.length} batch sizes in ${F.sig(r.ms.sweep, 2)} ms)` : ''));
    perf.ready = true;
    perf.last = { table: r.ms.table, sweep: r.ms.sweep, roundTrip: result.roundTrip, tableDrawn: tableDrawn ?? result.roundTrip, memoryBytes: r.memoryBytes };
  } catch (e) {
    // Never one model's figures under another's name: a result of the model before is cleared; a result
    // of this model at other settings stays, greyed, saying which settings it is for.
    if (result && result.model !== model.label) {
      result = null;
      renderAll();
    }
    // Said once: by the field the error names, else in the error box.
    const field = showStale(e);
    showError(field ? '' : e.message);
    const why = field ? `see the ${field} field` : e.message;
    setStatus('error', result ? `These settings could not be predicted (${why}). The greyed table is for the last settings that could.`
      : `${model.label} could not be predicted with these settings: ${why}`);
  } finally {
    busy = false;
    if (queued) predict();
  }
}

// Beside PyTorch eager, the GPUs' latency with the same kernels replayed from a CUDA graph (no host
// dispatch per op): what a deployer gets from CUDA graphs or torch.compile's reduce-overhead mode, and
// where eager is host-bound the figure that tells the GPUs apart. Inference only; the roofline predicts it
// (no learned predictor trained on graph replay, and the core says so when asked).
const REPLAY_RUNTIME = 'pytorch-cuda-graphs';
function replayOptions(table) {
  if (settings.mode !== 'inference' || (settings.runtime && settings.runtime !== 'pytorch-eager')) return null;
  const gpus = table.devices.filter((id) => device(id)?.kind === 'gpu');
  if (!gpus.length) return null;
  const { hostUs, ...rest } = table;  // eager's host time per kernel: graph replay issues no kernels from the host
  return { ...rest, devices: gpus, runtime: REPLAY_RUNTIME, predictor: 'roofline' };
}

// "This device": the visitor's machine as the probe measured it, with onnxruntime-web's wasm backend on
// one thread (the page is not cross-origin isolated: no SharedArrayBuffer, no wasm threads), with the
// table's predictor: the roofline's browser family (fitted relative to the probe, docs/this-device.md) and,
// where a learned predictor trained on onnxruntime-web rows beats it on held-out families, its correction
// ("auto" picks per device family; a predictor never trained on the runtime leaves the row to the roofline
// and says so). Its own prediction beside the table's, so that the table stays the document
// `perfcard predict` prints for the catalog devices.
const HERE_RUNTIME = 'onnxruntime-web';
function hereOptions(table) {
  if (!probe || settings.mode !== 'inference') return null;  // onnxruntime-web runs inference only
  const { runtime, ...rest } = table;
  return { ...rest, devices: [probe.device.id], extraDevices: [probe.device], cpuRuntime: HERE_RUNTIME, threads: 1 };
}

function replayRow(r) {
  return result?.replay?.predictions.find((x) => x.device === r.device && x.batch === r.batch) ?? null;
}

// The table's columns: the shared ones (format.js, also the CSV's) and the replay column when there is one.
function tableColumns() {
  const cols = F.COLUMNS.filter((c) => c.key !== 'batch' && c.key !== 'uncertainty');
  if (!result?.replay) return cols;
  const at = cols.findIndex((c) => c.key === 'latency_ms') + 1;
  const replay = { key: 'replay_ms', label: 'CUDA graphs', get: (r) => replayRow(r)?.latency_ms ?? null };
  return [...cols.slice(0, at), replay, ...cols.slice(at)];
}

// Typing waits for a pause (each keystroke would re-predict); a discrete control (a select, a checkbox, a
// button) re-predicts at once: the worker takes 4-26 ms for ResNet-50, a fixed wait would be most of the
// time to the update.
let timer = 0;
function predictSoon() {
  clearTimeout(timer);
  timer = setTimeout(predict, 120);
}
function predictNow() {
  clearTimeout(timer);
  predict();
}
const typed = (el) => el.matches?.('input[type="text"], input[type="number"], input:not([type])') ?? false;

// ---- rendering --------------------------------------------------------------------------------------

// Charts are drawn at the width they are shown (text stays readable on a phone), between 300 and max.
// The width is the one the last layout reported: reading clientWidth after a render has changed the page
// forces a layout there and then, one per chart (~40 ms of each setting change for ResNet-50 on our VM).
const widths = new WeakMap();
const sizes = new ResizeObserver((entries) => {
  for (const e of entries) widths.set(e.target, e.target.clientWidth);  // laid out already: no extra layout
});
function widthOf(el, max) {
  if (!widths.has(el)) {
    sizes.observe(el);
    widths.set(el, el.clientWidth);
  }
  return Math.round(Math.max(300, Math.min(max, widths.get(el) || max)));
}

function styleOfDevice(id) {
  return styleOf(Math.max(0, selectedIds().indexOf(id)));
}
function colorOf(id) {
  return styleOfDevice(id).color;
}
function hereText() {
  return `measured here: ${F.sig(probe.gemm_gflops, 3)} GFLOP/s matrix product, ${F.sig(probe.stream_gbs, 3)} GB/s memory read · ${HERE_RUNTIME}, 1 thread`;
}

// Only when asked: about half a second of measurement in the worker, then every prediction of this visit
// has the row, a reload included (the tab's sessionStorage; not kept in the URL: a link opened elsewhere
// is another machine).
const PROBE_KEY = 'perfcard.probe';
async function measureHere() {
  const b = $('#probe-device');
  b.disabled = true;
  setStatus('busy', 'Measuring this device (about half a second)…');
  try {
    probe = await call('probe');
    b.textContent = 'Measure this device again';
    try { sessionStorage.setItem(PROBE_KEY, JSON.stringify(probe)); } catch { /* storage refused: this page only */ }
  } catch (e) {
    showError(`This device could not be measured: ${e.message}`);
  } finally {
    b.disabled = false;
  }
  if (model) predictNow();
  else setStatus('idle', probe ? 'This device is measured: open a model to see its row.' : 'Open a model or pick an example.');
}

// This visit's measurement, if it made one before a reload; anything malformed is dropped, not trusted.
function storedProbe() {
  try {
    const p = JSON.parse(sessionStorage.getItem(PROBE_KEY) ?? 'null');
    return p && p.gemm_gflops > 0 && p.stream_gbs > 0 && typeof p.device?.id === 'string' ? p : null;
  } catch {
    return null;
  }
}

// A device's swatch: its colour, dashed for the second eight (as its line in the charts).
function swatch(id) {
  const { color, dashed } = styleOfDevice(id);
  const sw = h('span', { class: dashed ? 'swatch dashed' : 'swatch', 'aria-hidden': 'true', 'data-color': color });
  if (dashed) sw.style.borderTopColor = color;
  else sw.style.background = color;
  return sw;
}

function sortedRows() {
  const rows = [...result.table.predictions, ...(result.here?.predictions ?? [])];
  const col = tableColumns().find((c) => c.key === settings.sort) ?? F.COLUMNS[3];
  const dir = settings.dir === 'desc' ? -1 : 1;
  rows.sort((a, b) => {
    const x = col.get(a);
    const y = col.get(b);
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * dir;
  });
  return rows;
}

function renderTable() {
  const thead = $('#table thead');
  const tbody = $('#table tbody');
  const cols = tableColumns();
  thead.replaceChildren(h('tr', {}, cols.map((c) => {
    const active = settings.sort === c.key;
    return h('th', { scope: 'col', 'aria-sort': active ? (settings.dir === 'asc' ? 'ascending' : 'descending') : 'none', 'data-key': c.key },
      h('button', { type: 'button', class: 'sort', 'data-sort': c.key, title: `Sort by ${c.label}` },
        c.label, c.unit ? h('span', { class: 'unit', text: ` ${c.unit}` }) : null,
        h('span', { class: 'arrow', 'aria-hidden': 'true', text: active ? (settings.dir === 'asc' ? ' ▲' : ' ▼') : '' })));
  })));
  if (!result) { tbody.replaceChildren(); return; }
  const used = [...new Set(result.table.predictions.map((r) => `${r.predictor.name} (${r.predictor.version})`))];
  const runtimes = [...new Set(result.table.predictions.map((r) => r.runtime))];
  $('#table-caption').textContent = `Predictions per device at batch ${result.table.predictions[0]?.batch ?? settings.batch}`;
  $('#table-note').replaceChildren('Predicted (not measured) by ',
    h('strong', { text: used.length > 1 ? `${used.slice(0, -1).join(', ')} and ${used.at(-1)}` : used[0] ?? 'the predictor' }), used.length > 1 ? ' (each row names its own: auto picks per device family; for devices on one footing, pick one predictor)' : '',
    '. Latency: end to end with runtime ', h('strong', { text: runtimes.join(' (GPUs) and ') + (runtimes.length > 1 ? ' (CPUs)' : '') }),
    RUNTIME_WORDS[runtimes[0]] ? ` (${runtimes.length > 1 ? `${runtimes[0]}: ` : ''}${RUNTIME_WORDS[runtimes[0]]})` : '',
    result.replay ? '; CUDA graphs: the same kernels replayed from a CUDA graph.' : '.');
  $('#table-about').replaceChildren('Latency ± the predictor\'s held-out error for that device family, or the ensemble\'s 80% band (', h('a', { href: 'accuracy.html', text: 'accuracy' }),
    '). Host-bound: the device computes less than half of the latency (its busy time is the kernel floor) and waits on the host issuing kernels the rest.',
    result.replay ? ` CUDA graphs: runtime ${REPLAY_RUNTIME} (CUDA graphs, torch.compile's reduce-overhead), predicted by the roofline with its issue time per kernel and per step fitted on our H200's reduce-overhead rows (its held-out error on the accuracy page; Inductor's fusion not modelled).` : '',
    result.here ? ` This device: ${HERE_RUNTIME} (wasm, 1 thread) on the rates measured here, predicted by ${result.here.predictions[0]?.predictor.name ?? 'the roofline'}: the roofline's browser family, fitted on our onnxruntime-web measurements, and a learned correction only where one beat it on a machine it never trained on (see the accuracy page).` : '',
    ' * = the device lacks the requested precision.');
  tbody.replaceChildren(...sortedRows().map((r) => {
    const cap = r.device_memory_gb * 1e9 / 2 ** 20;
    const frac = cap > 0 ? Math.min(1, r.peak_memory_mb / cap) : 0;
    const bar = h('span', { class: `membar ${r.fits ? '' : 'over'}`, 'aria-hidden': 'true' }, h('span', { class: 'fill' }));
    bar.firstChild.style.width = `${(frac * 100).toFixed(1)}%`;
    const cell = (key, value, ...content) => h('td', { 'data-key': key, 'data-value': value === null ? 'null' : String(value) }, ...content);
    const warn = r.warnings.length ? h('span', { class: 'warn-dot', title: r.warnings.join('\n'), 'aria-label': `${r.warnings.length} note(s)` , text: ' ⚑' }) : null;
    return h('tr', { 'data-device': r.device, 'data-batch': r.batch, class: r.fits ? '' : 'nofit' },
      h('th', { scope: 'row', 'data-key': 'device', 'data-value': r.device },
        r.device === probe?.device.id ? h('span', { class: 'swatch here', 'aria-hidden': 'true' }) : swatch(r.device), r.device_name, warn,
        h('small', { class: 'id', text: r.device === probe?.device.id ? hereText() : r.device })),
      cell('precision', r.precision, r.precision + (r.precision !== r.precision_requested ? '*' : '')),
      cell('latency_ms', r.latency_ms, F.stepText(r) ? h('span', { class: 'step', title: F.stepText(r), text: F.ms(r.latency_ms) }) : F.ms(r.latency_ms), h('small', { class: 'unc', ...F.bandText(r) }),
        F.hostBoundText(r) ? h('small', { class: 'hostbound', 'data-busy-ms': r.device_busy_ms, title: F.hostBoundTitle(r), text: F.hostBoundText(r) }) : null),
      result.replay ? cell('replay_ms', replayRow(r)?.latency_ms ?? null, replayRow(r) ? F.ms(replayRow(r).latency_ms) : '–') : null,
      cell('throughput_per_s', r.throughput_per_s, F.rate(r.throughput_per_s)),
      cell('peak_memory_mb', r.peak_memory_mb, h('span', { class: 'memtext', title: F.memoryParts(r) + (cap > 0 ? ` · capacity ${F.sig(r.device_memory_gb)} GB = ${F.mib(cap)}` : ''), text: F.mib(r.peak_memory_mb) + (cap > 0 ? ` / ${F.mib(cap)}` : '') }), cap > 0 ? bar : null),
      cell('fits', r.fits, h('span', { class: r.fits ? 'yes' : 'no', text: r.fits ? 'yes' : 'no' })),
      cell('energy_j_per_sample', r.energy_j_per_sample, h('span', { title: powerSources(r.device), text: r.energy_j_per_sample === null ? '–' : `${F.sig(r.energy_j_per_sample)} J` })),
      cell('carbon_g_per_1000', r.carbon_g_per_1000, r.carbon_g_per_1000 === null ? '–' : `${F.sig(r.carbon_g_per_1000)} g`),
      cell('mig', r.mig ? r.mig.recommended : null, F.migText(r)),
      cell('predictor', r.predictor.name, h('span', { class: r.out_of_distribution ? 'ood' : '', title: r.predictor.version + (r.out_of_distribution ? `: outside the predictor's training data (${F.oodText(r)}), its error may be larger than stated` : ''), text: r.predictor.name + (r.out_of_distribution ? ' (out of distribution)' : '') })));
  }));
}

// The energy cell's tooltip: the power model's two figures for the device and where each comes from.
function powerSources(id) {
  const d = device(id);
  if (!d?.power_sources) return '';
  const one = (what, w, src) => `${what}: ${w === null ? 'not in the catalog' : `${F.sig(w)} W`}${src ? ` (${src})` : ''}`;
  return [one('TDP', d.tdp_w, d.power_sources.tdp_w), one('Idle', d.idle_w, d.power_sources.idle_w)].join('\n');
}

function renderWarnings() {
  const list = $('#warnings');
  if (!result) { list.replaceChildren(); return; }
  const seen = new Map();
  if (result.predictorNote) seen.set(result.predictorNote, []);
  for (const w of result.table.warnings) seen.set(w, []);
  for (const r of result.table.predictions) for (const w of r.warnings) {
    if (!seen.has(w)) seen.set(w, []);
    seen.get(w).push(r.device);
  }
  list.replaceChildren(...[...seen].map(([w, devs]) => h('li', {}, w, devs.length > 1 ? h('span', { class: 'muted', text: ` (${devs.length} devices)` }) : null)));
}

function renderSweep() {
  const tp = $('#chart-throughput');
  const mem = $('#chart-memory');
  const legend = $('#legend');
  if (!result?.sweep) {
    tp.replaceChildren(h('p', { class: 'muted', text: result ? 'This model has a fixed batch: there is nothing to sweep.' : '' }));
    mem.replaceChildren();
    legend.replaceChildren();
    return;
  }
  const by = new Map();
  for (const r of result.sweep.predictions) {
    if (!by.has(r.device)) by.set(r.device, []);
    by.get(r.device).push(r);
  }
  const series = (f) => [...by].map(([id, rows]) => ({ name: rows[0].device_name, ...styleOfDevice(id), points: rows.map((r) => [r.batch, f(r), r.fits]) }));
  // One dashed line per capacity; devices with equal memory share it.
  const capsByY = new Map();
  for (const [id, rows] of by) {
    const gb = rows[0].device_memory_gb;
    if (!(gb > 0)) continue;
    const c = capsByY.get(gb) ?? { y: gb * 1e9 / 2 ** 20, color: colorOf(id), ids: [] };
    c.ids.push(id);
    capsByY.set(gb, c);
  }
  for (const [, c] of capsByY) c.label = `${F.mib(c.y)}${c.ids.length > 1 ? ` ×${c.ids.length}` : ''}`;  // the axis's unit
  tp.replaceChildren(h('figcaption', { text: 'Throughput (samples/s)' }),
    lineChart({ title: 'Throughput vs batch', xLabel: 'batch', yLabel: 'samples/s', series: series((r) => r.throughput_per_s), xTicks: SWEEP, width: widthOf(tp, 640) }));
  mem.replaceChildren(h('figcaption', { text: 'Peak memory (MiB) with capacities' }),
    lineChart({ title: 'Peak memory vs batch', xLabel: 'batch', yLabel: 'MiB', series: series((r) => r.peak_memory_mb), hlines: [...capsByY.values()], xTicks: SWEEP, width: widthOf(mem, 640) }));
  legend.replaceChildren(...[...by].map(([id, rows]) => {
    return h('li', { 'data-device': id }, swatch(id), rows[0].device_name);
  }));
}

// The rows the breakdown can show: the table's, and this device's where it was measured.
function focusRows() {
  return [...(result?.table.predictions ?? []), ...(result?.here?.predictions ?? [])];
}

function focusRow() {
  const rows = focusRows();
  return rows.find((r) => r.device === settings.focus) ?? rows[0] ?? null;
}

// A device entry as the breakdown reads it: the catalog's, or this device's (the probe's entry, whose figures
// carry their sources) with its measured rates.
function deviceOf(id) {
  if (id !== probe?.device.id) return device(id);
  const d = probe.device;
  return { id: d.id, name: d.name, kind: d.kind, memory_bandwidth_gbs: d.memory_bandwidth_gbs.value,
    peak_fp32_gflops: d.peak_fp32_gflops.value, peak_tflops: { fp32: d.peak_fp32_gflops.value / 1e3 } };
}

function renderFocusSelect() {
  const sel = $('#focus');
  const rows = focusRows();
  const cur = focusRow();
  sel.replaceChildren(...rows.map((r) => h('option', { value: r.device, selected: cur && r.device === cur.device, text: r.device === probe?.device.id ? 'This device (browser)' : r.device_name })));
  sel.disabled = rows.length === 0;
}

// The prediction carries the kernels of one row (the worker's predict): another row's are asked for, and
// the breakdown drawn again when they arrive, unless a newer prediction has replaced this one.
let kernelsAsked = null;
function loadKernels(r) {
  if (kernelsAsked === r) return;
  kernelsAsked = r;
  const shown = result;
  const options = r.device === probe?.device.id ? result.hereOptions : result.options;
  call('kernels', { table: options, device: r.device }).then((kernels) => {
    if (result?.table !== shown.table) return;
    r.kernels = kernels ?? [];
    renderBreakdown();
  }, (err) => showError(err.message)).finally(() => { if (kernelsAsked === r) kernelsAsked = null; });
}

function renderBreakdown() {
  const r = focusRow();
  if (r && !r.kernels) loadKernels(r);
  const note = $('#breakdown-note');
  const ops = $('#chart-optypes');
  const ks = $('#chart-kernels');
  const rl = $('#chart-roofline');
  if (!r || !r.kernels) {
    note.textContent = '';
    ops.replaceChildren(); ks.replaceChildren(); rl.replaceChildren();
    return;
  }
  const kernels = r.kernels;
  const busyMs = kernels.reduce((a, k) => a + k.time_ms, 0);
  const dev = deviceOf(r.device);
  note.textContent = `${r.device_name}, batch ${r.batch}, ${r.precision}, ${r.runtime}: ${kernels.length} kernels, ` +
    `${F.ms(busyMs)} of device time in a predicted latency of ${F.ms(r.latency_ms)}` +
    (busyMs < 0.8 * r.latency_ms && dev.kind === 'gpu' ? ' — the rest is the runtime issuing kernels from the host (launch-bound at this batch).' : '.');
  const byType = new Map();
  for (const k of kernels) byType.set(F.kernelType(k), (byType.get(F.kernelType(k)) ?? 0) + k.time_ms);
  const types = [...byType].sort((a, b) => b[1] - a[1]);
  const top = types.slice(0, 9).map(([label, value]) => ({ label, value, note: `${Math.round((value / busyMs) * 100)}%` }));
  const rest = types.slice(9).reduce((a, [, v]) => a + v, 0);
  if (rest > 0) top.push({ label: `${types.length - 9} other types`, value: rest, note: `${Math.round((rest / busyMs) * 100)}%`, color: '#868e96' });
  ops.replaceChildren(barChart({ title: `Predicted time by op type on ${r.device_name}`, items: top, fmt: F.ms, width: widthOf(ops, 560) }));
  const slow = [...kernels].sort((a, b) => b.time_ms - a.time_ms).slice(0, 10)
    .map((k) => ({ label: F.kernelLabel(k), value: k.time_ms, note: k.compute_ms >= k.memory_ms ? 'compute' : 'memory', color: k.compute_ms >= k.memory_ms ? PALETTE[1] : PALETTE[0] }));
  ks.replaceChildren(barChart({ title: `Slowest kernels on ${r.device_name}`, items: slow, fmt: F.ms, width: widthOf(ks, 560) }));
  const peak = (dev.peak_tflops[r.precision] ?? dev.peak_tflops.fp32 ?? (dev.peak_fp32_gflops ?? 0) / 1e3) * 1e12;
  const roofs = [{ name: r.precision, flops: peak }];
  if (r.precision !== 'fp32' && dev.peak_tflops.fp32) roofs.push({ name: 'fp32', flops: dev.peak_tflops.fp32 * 1e12 });
  if (peak > 0 && dev.memory_bandwidth_gbs) {
    const noFlops = kernels.filter((k) => !(k.flops > 0));
    const noFlopsMs = noFlops.reduce((a, k) => a + k.time_ms, 0);
    rl.replaceChildren(h('figcaption', { text: `${r.device_name}: datasheet roofs (${F.sig(dev.memory_bandwidth_gbs)} GB/s)` +
      (noFlops.length ? `; ${noFlops.length} data-movement kernels without FLOPs (${F.ms(noFlopsMs)}) are not placed` : '') }),
      roofline({ title: `Roofline of ${r.device_name} with the model's kernels`, roofs, bandwidth: dev.memory_bandwidth_gbs * 1e9, kernels, width: widthOf(rl, 760), height: widthOf(rl, 760) < 500 ? 300 : 380 }));
  } else {
    rl.replaceChildren(h('p', { class: 'muted', text: `No peak figures for ${r.device_name}.` }));
  }
}

// What the recommended profile's total assumes: one process per instance. Host-bound, each process keeps
// one CPU core busy issuing kernels: the total needs that many free cores (and is the whole GPU's
// throughput times the instances only because the GPU idles either way).
function migSummary(r, rec) {
  if (rec.instances === 1) return `One instance of ${rec.name}: ${F.rate(rec.total_throughput_per_s)}, the most this model gets from MIG on this GPU (the whole GPU: ${F.rate(r.throughput_per_s)}).`;
  const base = `${rec.instances} instances of ${rec.name}: ${F.rate(rec.total_throughput_per_s)} in total vs ${F.rate(r.throughput_per_s)} on the whole GPU,` +
    ` assuming ${rec.instances} processes, one per instance.`;
  if (!r.host_bound) return base;
  // Host-bound, each instance's throughput is its own process's issue rate: c free cores run c instances.
  const per = rec.total_throughput_per_s / rec.instances;
  const breakEven = Math.floor(r.throughput_per_s / per) + 1;
  return base + ` Host-bound at this batch (${F.busyText(r)}): each process keeps a CPU core busy issuing kernels,` +
    ` so the total needs ${rec.instances} free host cores; with c of them, c instances give c × ${F.rate(per)}` +
    (breakEven > 1 ? `; with fewer than ${breakEven}, one process on the whole GPU (${F.rate(r.throughput_per_s)}) does as well or better.` : '.') +
    ' A larger batch or CUDA graphs use the whole GPU better.';
}

function renderMig() {
  const box = $('#mig');
  const rows = (result?.table.predictions ?? []).filter((r) => r.mig);
  if (!rows.length) {
    box.replaceChildren(h('p', { class: 'muted', text: 'None of the chosen devices supports MIG (A100, A30, H100, H200, B200 do).' }));
    return;
  }
  const target = result.options.latencyTargetMs ?? null;  // the table's, which these rows answer
  box.replaceChildren(...rows.map((r) => {
    const dev = device(r.device);
    const rec = r.mig.profiles.find((p) => p.name === r.mig.recommended);
    const recProfile = dev.mig.profiles.find((p) => p.name === r.mig.recommended);
    const noProfile = r.mig.profiles.some((p) => p.fits) ? 'no profile meets the target' : 'no profile fits';
    return h('article', { class: 'mig-card', 'data-device': r.device },
      h('h3', {}, r.device_name, h('span', { class: rec ? 'badge ok' : 'badge no', text: rec ? `recommended: ${rec.name}` : noProfile })),
      migStrip({ title: rec ? `${rec.instances} × ${rec.name} on one ${r.device_name}` : `${r.device_name}: ${noProfile}`,
        slicesTotal: dev.mig.compute_slices_total, profile: recProfile, instances: rec ? rec.instances : 0 }),
      h('p', { class: 'explain', text: rec ? migSummary(r, rec) : `No profile to recommend: ${F.migText(r)}.` }),
      h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': `MIG profiles of ${r.device_name}` },
        h('table', { class: 'mig-table' },
          h('thead', {}, h('tr', {}, ['Profile', 'Memory', 'Fits', 'Target', 'Latency', 'Instances', 'Total'].map((t) => h('th', { scope: 'col', text: t })))),
          h('tbody', {}, r.mig.profiles.map((p) => h('tr', { class: p.name === r.mig.recommended ? 'rec' : '' },
            h('th', { scope: 'row', text: p.name }),
            h('td', { text: `${F.sig(p.memory_gb)} GB` }),
            h('td', {}, h('span', { class: p.fits ? 'yes' : 'no', text: p.fits ? 'yes' : 'no' })),
            h('td', { text: target ? (p.meets_target ? 'met' : 'missed') : '–' }),
            h('td', { text: F.ms(p.latency_ms) }),
            h('td', { text: String(p.instances) }),
            h('td', { text: F.rate(p.total_throughput_per_s) })))))));
  }));
}

// docs/eager-floor.json (scripts/training/eager_floor.py): the eager floor against public measurements at
// the smallest batches they have. Fetched once, when the provenance is first drawn.
let eagerFloor = null;
function eagerFloorFigures() {
  eagerFloor ??= fetch('eager-floor.json', { credentials: 'same-origin' })
    .then((r) => (r.ok ? r.json() : null)).catch(() => null);
  return eagerFloor;
}

function eagerFloorBlock(figures) {
  if (!figures) return h('p', { class: 'muted', text: 'The eager floor\'s check against public measurements is not in this build.' });
  const pct = (x) => (x === null || x === undefined ? '–' : `${(x * 100).toFixed(1)}%`);
  return h('div', { id: 'eager-floor' },
    h('p', {}, 'At small batch eager PyTorch is host-bound: the latency is per-op dispatch, so the roofline gives most GPUs the same figure (the learned predictors differ by the hosts their rows were measured on). ' +
      'That floor checked against public eager measurements at the smallest batches they have (roofline on every row; ' +
      'auto, the default here, on model families it never trained on):'),
    h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Eager floor against measurements' },
      h('table', { class: 'acc-table' },
        h('thead', {}, h('tr', {}, ['Measured rows', 'Rows', 'Devices', 'Host-bound', 'Roofline MAPE', 'Predicted ÷ measured', 'Auto MAPE (held-out)']
          .map((t) => h('th', { scope: 'col', text: t })))),
        h('tbody', {}, figures.checks.filter((c) => c.rows > 0).map((c) => h('tr', { 'data-source': c.source },
          h('th', { scope: 'row', text: c.what }),
          h('td', { text: String(c.rows) }),
          h('td', { text: c.devices.join(', ') }),
          h('td', { text: pct(c.host_bound_share) }),
          h('td', { text: pct(c.roofline_mape) }),
          h('td', { text: c.roofline_median_ratio.toFixed(2) }),
          h('td', { text: c.auto_heldout_rows ? `${pct(c.auto_heldout_mape)} (${c.auto_heldout_rows})` : 'none held out' })))))));
}

function renderProvenance() {
  const box = $('#provenance');
  if (!catalog) return;
  const p = catalog.predictor;
  const doc = result?.table;
  const region = doc ? catalog.regions.find((r) => r.code === doc.carbon.region) : null;
  const fams = new Map();
  for (const id of selectedIds()) {
    const d = device(id);
    const f = d.family ?? '?';
    if (!fams.has(f)) fams.set(f, []);
    fams.get(f).push(d.id);
  }
  box.replaceChildren(
    h('p', {}, 'Baseline: ', h('strong', { text: `${p.name} ${p.version}` }),
      ' — a roofline model: each kernel (as the runtime fuses them) takes the longer of its compute and memory time at fitted, achievable fractions of datasheet peaks, and the runtime\'s host dispatch is simulated. Constants are fitted on public measurements.'),
    h('p', {}, 'Learned: ', h('strong', { text: 'trees' }),
      ' — gradient-boosted trees over the core\'s features that correct the roofline (they predict measured ÷ roofline latency); ',
      h('strong', { text: 'GNN' }),
      ' — a graph neural network over the operator graph (each node\'s op type and per-sample costs, message passing along the edges) with a head that reads the same features, predicting the same correction; ',
      h('strong', { text: 'transformer' }),
      ' — a small transformer over the kernels the runtime runs, in order, after its fusion (attention within windows of 32 consecutive kernels), with the same head; ',
      h('strong', { text: 'ensemble' }),
      ' — the roofline and learned predictors (those that earned a weight: ' + MEMBERS.ensemble.join(' and ') + ') combined with weights fitted on rows none of them trained on, with an 80% band (wider where the learned predictors disagree) and an out-of-distribution flag when the model is far from every model trained on. With predictor "auto" each device gets the learned predictor with the lowest measured error among those that beat the roofline where it stands (held-out model families on a device they trained on, leave-one-device-out rows on one they never saw, such as most of the catalog and this device), else the roofline; the table names the predictor of every row, and rows outside the training data are marked "out of distribution" with a doubled error band. The family figures below are the roofline\'s; the learned ones are on the ',
      h('a', { href: 'accuracy.html', text: 'accuracy page' }), '.'),
    h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Uncertainty by device family' },
      h('table', { class: 'acc-table' },
        h('caption', { text: 'Uncertainty shown with each latency: held-out error (MAPE) of the predictor for the device family' }),
        h('thead', {}, h('tr', {}, ['Family', 'Held-out MAPE', 'Rows', 'From', 'Chosen devices'].map((t) => h('th', { scope: 'col', text: t })))),
        h('tbody', {}, [...fams].map(([f, ids]) => {
          const a = p.accuracy[f];
          return h('tr', {}, h('th', { scope: 'row', text: f }), h('td', { text: a ? `${(a.mape * 100).toFixed(1)}%` : 'not evaluated' }),
            h('td', { text: a ? String(a.rows) : '–' }), h('td', { text: a ? a.source : 'no public measurements yet' }), h('td', { text: ids.join(', ') }));
        })))),
    doc ? h('p', {}, `Carbon: ${doc.carbon.region === 'custom' ? 'custom grid intensity' : region?.name ?? doc.carbon.region}, ${F.sig(doc.carbon.grid_g_per_kwh)} gCO₂e/kWh` +
      (region ? ` (${region.year}; ${region.source})` : '') + `; PUE ${doc.carbon.pue} (${catalog.pue_source || 'default'}).`) : null,
    h('p', { class: 'muted', text: 'Energy = power × latency, where power = idle + (TDP − idle) × busy fraction × intensity^γ on GPUs, and idle + (TDP − idle) × busy fraction × threads ÷ cores on CPUs (the package; their idle power is mostly estimated: each energy cell\'s tooltip gives the device\'s TDP and idle power with their sources). GPU energy is checked against ML.ENERGY on the accuracy page; CPU energy is not validated against measurements.' }),
    h('div', { id: 'eager-floor-box' }));
  eagerFloorFigures().then((f) => box.querySelector('#eager-floor-box')?.replaceChildren(eagerFloorBlock(f)));
}

function cliOptions(o) {
  return settings.devices ? o : { ...o, devices: 'all' };  // every GPU: the CLI's --device all, same rows
}

function renderCli() {
  $('#cli').textContent = result ? F.cliCommand(model.example ? `public/examples/${model.label}` : model.label, cliOptions(result.options)) : '';
}

// A failed prediction greys the table and disables export (what they show is not for these settings), and
// where the core names a setting (a dim the graph cannot take) the message stands by that field, whose
// name it returns (null: the error box says it).
function showStale(error) {
  $('#results').classList.toggle('stale', Boolean(error) && Boolean(result));
  $('#export-json').disabled = Boolean(error) || !result;
  $('#export-csv').disabled = Boolean(error) || !result;
  for (const note of document.querySelectorAll('.field-error[data-from="predict"]')) note.remove();
  const named = error?.message?.match(/dim '([^']+)'/);
  if (!named || !model) return null;
  const el = named[1] === model.batchSymbol ? $('#batch') : document.querySelector(`#dims input[data-dim="${CSS.escape(named[1])}"]`);
  if (!el) return null;
  const note = h('span', { class: 'field-error', role: 'status', 'data-from': 'predict', id: `${el.id || `dim-${named[1]}`}-limit`,
    text: (error.detail ?? error.message).replace(/^cannot broadcast dims \d+ and \d+: /, '').replace(/ \[node .*$/, '') +
      (error.node ? ` (node '${error.node.replace(/^'|'$/g, '')}'${error.opType ? `, ${error.opType}` : ''})` : '') });
  el.closest('label').after(note);
  return el === $('#batch') ? 'batch' : named[1];
}

function renderAll() {
  renderTable();
  renderWarnings();
  renderSweep();
  renderFocusSelect();
  renderBreakdown();
  renderMig();
  renderProvenance();
  renderCli();
  $('#export-json').disabled = !result;
  $('#export-csv').disabled = !result;
}

// ---- settings form ----------------------------------------------------------------------------------

function fillForm() {
  $('#batch').value = settings.batch;
  $('#precision').value = settings.precision;
  $('#mode').value = settings.mode;
  $('#optimizer').value = settings.optimizer;
  $('#optimizer-label').hidden = settings.mode !== 'training';
  $('#region').value = settings.region || catalog.default_region;
  $('#runtime').value = settings.runtime || 'pytorch-eager';
  $('#runtime').title = RUNTIME_WORDS[$('#runtime').value] ?? '';
  $('#predictor').value = settings.predictor;
  $('#pue').value = settings.pue ?? '';
  $('#target').value = settings.target ?? '';
  $('#host').value = settings.hostUs ?? '';
  const ids = new Set(selectedIds());
  for (const cb of document.querySelectorAll('#device-list input')) cb.checked = ids.has(cb.value);
  const more = $('#device-list details');
  if (more && [...more.querySelectorAll('input')].some((cb) => cb.checked)) more.open = true;
  renderDeviceSummary();
}

// The closed settings panel (on a phone it starts closed, so the table is on the first screen) says
// what the table is for in one line.
function renderSettingsSummary() {
  const parts = [`batch ${settings.batch}`, ...Object.entries(settings.dims).map(([k, v]) => `${k} ${v}`),
    settings.precision || 'fp16 GPU / fp32 CPU', settings.mode === 'training' ? `training (${settings.optimizer})` : settings.mode, settings.runtime || 'pytorch-eager',
    `predictor ${settings.predictor || 'auto'}`, $('#devices-summary').textContent];
  $('#settings-summary').textContent = parts.join(' · ');
}

function renderDeviceSummary() {
  const ids = selectedIds();
  const gpus = gpuIds();
  const all = ids.length === gpus.length && ids.every((id) => gpus.includes(id));
  $('#devices-summary').textContent = all ? `all ${gpus.length} GPUs` : `${ids.length} chosen`;
}

// What each GPU runtime's figures are, in the select (memory included: only the PyTorch runtimes hold a CUDA
// context and workspace, the others time kernels alone).
const RUNTIME_WORDS = {
  'pytorch-eager': 'PyTorch eager, host dispatch per op',
  'pytorch-cuda-graphs': 'CUDA graphs / torch.compile reduce-overhead',
  'pytorch-op': 'one op at a time, synchronized (harness timing, no context memory)',
  kernel: 'the kernels alone (the GPU floor: no host time, no context memory)',
};

function buildForm() {
  $('#region').replaceChildren(...catalog.regions.map((r) => h('option', { value: r.code, text: `${r.name} (${F.sig(r.g_per_kwh)} g)`, title: `${F.sig(r.g_per_kwh)} gCO₂e/kWh` })));
  $('#runtime').replaceChildren(...catalog.runtimes.filter((r) => r.kind === 'gpu').map((r) => h('option', { value: r.name, text: r.name, title: RUNTIME_WORDS[r.name] ?? '' })));
  const item = (d) => h('li', {},
    h('label', {}, h('input', { type: 'checkbox', value: d.id, name: 'device' }), ` ${d.name}`,
      d.memory_gb ? h('span', { class: 'muted', text: ` ${F.sig(d.memory_gb)} GB` }) : null));
  const gpus = catalog.devices.filter((d) => d.kind === 'gpu');
  const more = gpus.filter((d) => d.default_view === false);
  $('#device-list').replaceChildren(
    h('div', { class: 'device-group' }, h('h3', { text: 'GPUs' }), h('ul', {}, gpus.filter((d) => d.default_view !== false).map(item))),
    more.length ? h('details', { class: 'device-group more-gpus' },
      h('summary', { text: `${more.length} more GPUs (older or rarer cards that public measurements used)` }),
      h('ul', {}, more.map(item))) : null,
    h('div', { class: 'device-group' }, h('h3', { text: 'CPUs' }), h('ul', {}, catalog.devices.filter((d) => d.kind === 'cpu').map(item))));
}

// A field the core cannot take: the table keeps the last settings that predicted (its field says so), and
// nothing is exported under settings it was not predicted for.
function invalidSettings() {
  clearTimeout(timer);
  for (const id of ['#export-json', '#export-csv']) $(id).disabled = true;
}

function readForm() {
  const num = (el, int) => {
    const v = el.value.trim();
    if (v === '') return null;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0 || (int && !Number.isInteger(n))) return undefined;
    return n;
  };
  let ok = true;
  // An invalid field says what it takes, next to it, and what the table shows meanwhile (the last
  // settings that predicted): a value is never silently replaced.
  const mark = (el, good, takes) => {
    el.setAttribute('aria-invalid', good ? 'false' : 'true');
    ok &&= good;
    const id = `${el.id || `dim-${el.dataset.dim}`}-error`;
    let msg = document.getElementById(id);
    if (!msg) {
      msg = h('span', { id, class: 'field-error', role: 'status' });
      el.closest('label').after(msg);
      el.setAttribute('aria-describedby', id);
    }
    msg.textContent = good ? '' : `${el.closest('label').firstChild.textContent.trim()}: ${takes}. The table still shows the last settings that could be predicted.`;
  };
  const b = num($('#batch'), true);
  mark($('#batch'), b !== undefined && b !== null && b <= 2 ** 24, `a whole number from 1 to ${(2 ** 24).toLocaleString('en')}`);
  if (b && b <= 2 ** 24) settings.batch = b;
  for (const input of document.querySelectorAll('#dims input')) {
    const v = num(input, true);
    mark(input, v !== undefined && v !== null, 'a whole number of at least 1');
    if (v) settings.dims[input.dataset.dim] = v;
  }
  settings.precision = $('#precision').value;
  settings.mode = $('#mode').value;
  settings.optimizer = $('#optimizer').value;
  $('#optimizer-label').hidden = settings.mode !== 'training';
  settings.region = $('#region').value === catalog.default_region ? '' : $('#region').value;
  settings.runtime = $('#runtime').value === 'pytorch-eager' ? '' : $('#runtime').value;
  $('#runtime').title = RUNTIME_WORDS[$('#runtime').value] ?? '';
  settings.predictor = $('#predictor').value;
  const pue = num($('#pue'), false);
  mark($('#pue'), pue === null || (pue !== undefined && pue >= 1), 'a number of at least 1, or empty for the region\'s default');
  settings.pue = pue && pue >= 1 ? pue : null;
  const target = num($('#target'), false);
  mark($('#target'), target !== undefined, 'a number of milliseconds above 0, or empty for none');
  settings.target = target ?? null;
  const host = num($('#host'), false);
  mark($('#host'), host === null || (host !== undefined && host <= MAX_HOST_US),
    `microseconds per kernel above 0, at most ${MAX_HOST_US.toLocaleString('en')}, or empty for the fitted constant`);
  settings.hostUs = host && host <= MAX_HOST_US ? host : null;
  return ok;
}

function readDevices() {
  const ids = [...document.querySelectorAll('#device-list input:checked')].map((c) => c.value);
  const gpus = gpuIds();
  settings.devices = ids.length === gpus.length && ids.every((id) => gpus.includes(id)) ? null : ids;
  renderDeviceSummary();
}

function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function exportBase() {
  return (model?.label ?? 'model').replace(/\.onnx$/i, '').replace(/[^\w.-]+/g, '_');
}

function exportDoc() {
  return {
    perfcard: { version: catalog.version, predictor: catalog.predictor.version, page: location.href.split('#')[0] },
    model: { name: model.label, example: model.example, file_bytes: model.fileBytes, batch_symbol: model.batchSymbol, totals: model.analysis.totals },
    settings: { ...settings },
    options: result.options,
    cli: F.cliCommand(model.label, cliOptions(result.options)),
    prediction: F.withoutKernels(result.table),  // the document `perfcard predict --json` prints for `cli`
    sweep: result.sweep,
    // The CUDA graphs column: its own command and document (the GPUs only, by the roofline).
    replay: result.replay ? { cli: F.cliCommand(model.label, result.replayOptions), prediction: result.replay } : null,
    // This device: the probe, the device entry it made, and the prediction (the CLI reproduces it with the
    // entry in a file: perfcard predict MODEL --extra-devices FILE --device this-device --cpu-runtime onnxruntime-web).
    this_device: result.here ? { probe: { gemm_gflops: probe.gemm_gflops, stream_gbs: probe.stream_gbs }, device: probe.device,
      options: result.hereOptions, prediction: result.here } : null,
  };
}

function wire() {
  const form = $('#settings');
  form.addEventListener('submit', (e) => e.preventDefault());
  form.addEventListener('input', (e) => {
    if (replacingFields) return;
    if (e.target.name === 'device') { readDevices(); predictNow(); return; }
    if (readForm()) (typed(e.target) ? predictSoon : predictNow)();
    else invalidSettings();
  });
  // A typed field's change (Enter, leaving it) ends the pause; discrete controls were handled on input.
  form.addEventListener('change', (e) => {
    if (replacingFields || e.target.name === 'device' || !typed(e.target)) return;
    if (readForm()) predictNow();
    else invalidSettings();
  });
  $('#probe-device').addEventListener('click', measureHere);
  for (const b of document.querySelectorAll('[data-pick]')) {
    b.addEventListener('click', () => {
      const pick = b.dataset.pick;
      for (const cb of document.querySelectorAll('#device-list input')) {
        const kind = device(cb.value).kind;
        cb.checked = pick === 'every' || (pick === 'gpus' && kind === 'gpu') || (pick === 'cpus' && kind === 'cpu');
      }
      readDevices();
      predictNow();
    });
  }
  $('#table thead').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-sort]');
    if (!b) return;
    const key = b.dataset.sort;
    if (settings.sort === key) settings.dir = settings.dir === 'asc' ? 'desc' : 'asc';
    else { settings.sort = key; settings.dir = tableColumns().find((c) => c.key === key)?.num === false ? 'asc' : (key === 'throughput_per_s' ? 'desc' : 'asc'); }
    syncFragment();
    renderTable();
    document.querySelector(`#table button[data-sort="${key}"]`)?.focus();
  });
  $('#focus').addEventListener('change', (e) => {
    settings.focus = e.target.value;
    syncFragment();
    renderBreakdown();
  });
  $('#file').addEventListener('change', (e) => {
    const f = e.target.files?.[0];
    if (f) openModel({ file: f, label: f.name });
    e.target.value = '';
  });
  const drop = $('#drop');
  let depth = 0;
  document.addEventListener('dragenter', (e) => { if (e.dataTransfer?.types?.includes('Files')) { depth++; drop.classList.add('over'); } });
  document.addEventListener('dragleave', () => { if (--depth <= 0) { depth = 0; drop.classList.remove('over'); } });
  document.addEventListener('dragover', (e) => e.preventDefault());
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0;
    drop.classList.remove('over');
    const f = e.dataTransfer?.files?.[0];
    if (f) openModel({ file: f, label: f.name });
  });
  $('#export-json').addEventListener('click', () => download(`${exportBase()}.perfcard.json`, 'application/json', JSON.stringify(exportDoc(), null, 2)));
  $('#export-csv').addEventListener('click', () => {
    const rows = [...result.table.predictions];
    const have = new Set(rows.map((r) => `${r.device}|${r.batch}`));
    for (const r of result.sweep?.predictions ?? []) if (!have.has(`${r.device}|${r.batch}`)) rows.push(r);
    const order = selectedIds();
    rows.sort((a, b) => order.indexOf(a.device) - order.indexOf(b.device) || a.batch - b.batch);
    rows.push(...(result.replay?.predictions ?? []));  // the CUDA graphs column: its rows name their runtime
    download(`${exportBase()}.perfcard.csv`, 'text/csv', F.toCsv({ predictions: rows }));
  });
  $('#copy-link').addEventListener('click', async () => {
    syncFragment();
    try {
      await navigator.clipboard.writeText(location.href);
      setStatus($('#status').dataset.state, 'Link copied (settings only; a local file is not part of the link).');
    } catch {
      setStatus($('#status').dataset.state, `Link: ${location.href}`);
    }
  });
  let resizeTimer = 0;
  let lastWidth = window.innerWidth;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (!result || Math.abs(window.innerWidth - lastWidth) < 40) return;
      lastWidth = window.innerWidth;
      renderSweep();
      renderBreakdown();
    }, 200);
  });
  window.addEventListener('hashchange', () => {
    const next = parseFragment(location.hash);
    const exampleChanged = next.example && next.example !== settings.example;
    // Settings that belong to a model (its dims) do not carry over to another model: only those the link
    // names do, the rest are the new model's defaults.
    const own = Object.fromEntries(Object.entries(next.dims).filter(([k]) => k in settings.dims));
    settings = { ...next, dims: exampleChanged ? { ...next.dims } : { ...settings.dims, ...own } };
    fillForm();
    if (exampleChanged) openExample(next.example, true);
    else {
      if (model) renderDimFields();  // the link's dims in their fields, not only in the prediction
      predictSoon();
    }
  });
}

// A picked example is a step in the history: Back returns to the model before (the fragment names it).
function pickExample(name) {
  const f = toFragment({ ...settings, example: name, dims: {} });
  if (f && f !== location.hash) history.pushState(null, '', f);
  return openExample(name);
}

function renderGallery() {
  $('#gallery').replaceChildren(...examples.map((ex) => h('li', {},
    h('button', { type: 'button', class: 'example', 'data-example': ex.name, onclick: () => pickExample(ex.name) },
      h('strong', { text: ex.title }), h('span', { class: 'kind', text: ex.kind }), h('span', { class: 'desc', text: ex.description })))));
}

// Offline after one visit (web/sw.js). A newer build installs beside the one serving this page and waits:
// the page says so and reloads into it when asked, never mixing the two builds' files.
function registerOffline() {
  if (!('serviceWorker' in navigator)) return;
  navigator.serviceWorker.register('sw.js').then((reg) => {
    const offer = (sw) => {
      if (!sw || !navigator.serviceWorker.controller) return;  // the first install: nothing to replace
      const note = $('#update');
      note.hidden = false;
      note.querySelector('button').onclick = () => {
        navigator.serviceWorker.addEventListener('controllerchange', () => location.reload(), { once: true });
        sw.postMessage('activate-now');
      };
    };
    if (reg.waiting) offer(reg.waiting);
    reg.addEventListener('updatefound', () => {
      const sw = reg.installing;
      sw?.addEventListener('statechange', () => { if (sw.state === 'installed') offer(sw); });
    });
  }).catch(() => {});  // no offline copy (a file:// page, a browser that refuses): the page works online as before
}

async function main() {
  registerOffline();
  if (window.matchMedia('(max-width: 760px)').matches) $('#settings-box').open = false;
  wire();
  probe = storedProbe();
  if (probe) $('#probe-device').textContent = 'Measure this device again';
  // The worker compiles the wasm module while the examples list arrives; the default model's download
  // starts as soon as its name is known, and the form is built when the catalog arrives.
  const init = call('init');
  examples = await fetch('examples/index.json').then((r) => (r.ok ? r.json() : [])).catch(() => []);
  renderGallery();
  // The default model is preloaded: the fragment's example, else the first one.
  const name = settings.example ?? (location.hash ? null : examples[0]?.name);
  const opening = name ? openExample(name, true) : null;
  try {
    catalog = (await init).catalog;
    performance.mark('perfcard:catalog');
    $('#version').textContent = `${catalog.version} · ${catalog.predictor.version}`;
  } catch (e) {
    showError(`The predictor could not start: ${e.message}`);
    setStatus('error', 'The predictor could not start.');
    return;
  }
  buildForm();
  fillForm();
  renderTable();
  renderProvenance();
  catalogLoaded();
  if (!opening) setStatus('idle', 'Open a model or pick an example.');
  else await opening;
}

main();
