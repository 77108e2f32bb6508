// The page's settings <-> the URL fragment, so a view can be shared. Only settings and an example's name
// go into the fragment, never model bytes or a local file's name.
//
//   #example=bert_base&batch=8&devices=h100-sxm5-80gb,l4&precision=bf16&mode=training&optimizer=sgd&region=fr
//    &pue=1.2&target=5&runtime=pytorch-eager&host=20&predictor=trees&dim.sequence=128&sort=latency_ms&dir=asc&focus=l4

export const SWEEP = [1, 2, 4, 8, 16, 32, 64, 128];
// The core's bound on the host's time per kernel (options: hostUs), in microseconds.
export const MAX_HOST_US = 100000;

export function defaults() {
  return {
    example: null,     // name of a bundled example, or null for a local file
    batch: 1,
    devices: null,     // null: every GPU
    precision: '',     // '': fp16 on GPUs, fp32 on CPUs
    mode: 'inference', // the memory protocol: inference, inference-grad, training
    optimizer: 'adam', // training's optimizer state
    region: '',        // '': the carbon table's default
    pue: null,
    target: null,      // latency target, ms
    runtime: '',
    hostUs: null,      // eager's host time per kernel, us (null: the fitted constant)
    predictor: '',     // '': auto (learned where it beats the roofline for the device: docs/accuracy.md)
    dims: {},          // other symbolic dims
    sort: 'latency_ms',
    dir: 'asc',
    focus: null,       // device of the breakdown and roofline charts
  };
}

function posInt(s) {
  const n = Number(s);
  return Number.isInteger(n) && n > 0 ? n : null;
}

function posNum(s) {
  const n = Number(s);
  return Number.isFinite(n) && n > 0 ? n : null;
}

const token = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Reads a fragment ("#a=b&..."); unknown or malformed entries are ignored. */
export function parseFragment(hash) {
  const s = defaults();
  const p = new URLSearchParams(String(hash).replace(/^#/, ''));
  for (const [k, v] of p) {
    if (k === 'example' && token.test(v)) s.example = v;
    else if (k === 'batch' && posInt(v)) s.batch = Math.min(posInt(v), 1 << 24);
    else if (k === 'devices') s.devices = v.split(',').filter((d) => token.test(d));
    else if (k === 'precision' && /^(fp32|tf32|fp16|bf16|fp8|int8)$/.test(v)) s.precision = v;
    else if (k === 'mode' && /^(inference|inference-grad|training)$/.test(v)) s.mode = v;
    else if (k === 'optimizer' && /^(adam|sgd|none)$/.test(v)) s.optimizer = v;
    else if (k === 'region' && token.test(v)) s.region = v;
    else if (k === 'pue' && posNum(v) && Number(v) >= 1) s.pue = Number(v);
    else if (k === 'target' && posNum(v)) s.target = Number(v);
    else if (k === 'runtime' && token.test(v)) s.runtime = v;
    else if (k === 'host' && posNum(v) && Number(v) <= MAX_HOST_US) s.hostUs = Number(v);
    else if (k === 'predictor' && /^(roofline|trees|gnn|transformer|ensemble)$/.test(v)) s.predictor = v;
    else if (k.startsWith('dim.') && token.test(k.slice(4)) && posInt(v)) s.dims[k.slice(4)] = posInt(v);
    else if (k === 'sort' && /^[a-z_]{1,32}$/.test(v)) s.sort = v;
    else if (k === 'dir' && /^(asc|desc)$/.test(v)) s.dir = v;
    else if (k === 'focus' && token.test(v)) s.focus = v;
  }
  return s;
}

/** The fragment for these settings (defaults left out). */
export function toFragment(s) {
  const d = defaults();
  const p = new URLSearchParams();
  if (s.example) p.set('example', s.example);
  if (s.batch !== d.batch) p.set('batch', String(s.batch));
  if (s.devices) p.set('devices', s.devices.join(','));
  if (s.precision) p.set('precision', s.precision);
  if (s.mode !== d.mode) p.set('mode', s.mode);
  if (s.mode === 'training' && s.optimizer !== d.optimizer) p.set('optimizer', s.optimizer);
  if (s.region) p.set('region', s.region);
  if (s.pue) p.set('pue', String(s.pue));
  if (s.target) p.set('target', String(s.target));
  if (s.runtime) p.set('runtime', s.runtime);
  if (s.hostUs) p.set('host', String(s.hostUs));
  if (s.predictor) p.set('predictor', s.predictor);
  for (const [k, v] of Object.entries(s.dims)) p.set(`dim.${k}`, String(v));
  if (s.sort !== d.sort) p.set('sort', s.sort);
  if (s.dir !== d.dir) p.set('dir', s.dir);
  if (s.focus) p.set('focus', s.focus);
  const str = p.toString().replaceAll('%2C', ',');
  return str ? `#${str}` : '';
}

/** The predict() options for the table (one batch) and for the batch sweep of the charts. */
export function predictOptions(s, deviceIds) {
  const o = { devices: deviceIds, batch: [s.batch] };
  if (s.precision) o.precision = s.precision;
  if (s.mode !== 'inference') o.mode = s.mode;
  if (s.mode === 'training') o.optimizer = s.optimizer;
  if (Object.keys(s.dims).length) o.dims = { ...s.dims };
  if (s.region) o.region = s.region;
  if (s.pue) o.pue = s.pue;
  if (s.target) o.latencyTargetMs = s.target;
  if (s.runtime) o.runtime = s.runtime;
  if (s.hostUs) o.hostUs = s.hostUs;
  if (s.predictor) o.predictor = s.predictor;
  return o;
}
