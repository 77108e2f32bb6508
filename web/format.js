// Number formatting, CSV and the CLI command equivalent to a set of options: shared by the page, the
// widget and the tests. No DOM here.

/** x with `digits` significant digits, grouped thousands, no exponent for everyday magnitudes. */
export function sig(x, digits = 3) {
  if (x === null || x === undefined || Number.isNaN(x)) return '–';
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e15 || a < 1e-4) return x.toExponential(digits - 1);
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(a)));
  return grouped(decimals).format(x);
}

// One formatter per number of decimals: toLocaleString with options builds a new Intl.NumberFormat on every
// call (~0.1 ms each in Chromium), and a setting change formats a few thousand numbers (table, charts).
const formatters = [];
function grouped(decimals) {
  return formatters[decimals] ??= new Intl.NumberFormat('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

export function ms(x) {
  if (x === null || x === undefined) return '–';
  if (x >= 1000) return `${sig(x / 1000)} s`;
  if (x < 0.1) return `${sig(x * 1000)} µs`;
  return `${sig(x)} ms`;
}

export function rate(x) {
  if (x === null || x === undefined) return '–';
  if (x >= 1e6) return `${sig(x / 1e6)} M/s`;
  if (x >= 1e4) return `${sig(x / 1e3)} k/s`;
  return `${sig(x)}/s`;
}

/** MiB -> "393 MiB" / "12.6 GiB". */
export function mib(x) {
  if (x === null || x === undefined) return '–';
  if (x >= 1024) return `${sig(x / 1024)} GiB`;
  return `${sig(x)} MiB`;
}

/** The parts of a row's peak memory, for its tooltip: "training (adam): weights 44.6 MiB + activations ...",
 *  then the two figures they make: the tensors the framework allocates, and what the device reports. */
export function memoryParts(r) {
  const m = r.memory_mb;
  const tensors = m.weights + m.activations + m.gradients + m.optimizer + m.optimizer_update;
  const parts = [['weights', m.weights], ['activations', m.activations], ['weight gradients', m.gradients],
    ['optimizer state', m.optimizer], ['optimizer update', m.optimizer_update], ['allocator segments (estimate)', m.allocator], ['workspace', m.workspace], ['context', m.context]]
    .filter(([, v]) => v > 0).map(([k, v]) => `${k} ${mib(v)}`);
  const saved = m.saved_activations > 0 ? `; of the activations, ${mib(m.saved_activations)} kept for the backward` : '';
  const what = r.memory_protocol === 'training' ? `training step (${r.optimizer})` : r.memory_protocol;
  return `${what}: ${parts.join(' + ')}${saved}. Tensors allocated ${mib(tensors)}; the device reports ${mib(r.peak_memory_mb)}`;
}

export function bytes(n) {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return i === 0 ? `${n} B` : `${sig(n)} ${units[i]}`;
}

/** 1.2e12 -> "1.2 T" (FLOPs, parameters). */
export function count(n) {
  if (n === null || n === undefined) return '–';
  const units = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [f, u] of units) if (Math.abs(n) >= f) return `${sig(n / f)} ${u}`;
  return sig(n);
}

export function pct(x) {
  if (!x) return '?';
  return `±${Math.round(x * 100)}%`;
}

// The columns of the device table and of the CSV export, with how each reads from a prediction row.
export const COLUMNS = [
  { key: 'device', label: 'Device', get: (r) => r.device_name, text: (r) => r.device_name, num: false },
  { key: 'batch', label: 'Batch', get: (r) => r.batch, text: (r) => String(r.batch) },
  { key: 'precision', label: 'Precision', get: (r) => r.precision, text: (r) => r.precision + (r.precision !== r.precision_requested ? '*' : ''), num: false },
  { key: 'latency_ms', label: 'Latency', get: (r) => r.latency_ms, text: (r) => ms(r.latency_ms) },
  { key: 'throughput_per_s', label: 'Throughput', unit: 'samples/s', get: (r) => r.throughput_per_s, text: (r) => rate(r.throughput_per_s) },
  { key: 'peak_memory_mb', label: 'Peak memory', get: (r) => r.peak_memory_mb, text: (r) => mib(r.peak_memory_mb) },
  { key: 'fits', label: 'Fits', get: (r) => (r.fits ? 1 : 0), text: (r) => (r.fits ? 'yes' : 'no') },
  { key: 'energy_j_per_sample', label: 'Energy', unit: 'J/sample', get: (r) => r.energy_j_per_sample, text: (r) => (r.energy_j_per_sample === null ? '–' : `${sig(r.energy_j_per_sample)} J`) },
  { key: 'carbon_g_per_1000', label: 'Carbon', unit: 'gCO₂e/1k', get: (r) => r.carbon_g_per_1000, text: (r) => (r.carbon_g_per_1000 === null ? '–' : `${sig(r.carbon_g_per_1000)} g`) },
  { key: 'mig', label: 'MIG', get: (r) => migText(r), text: (r) => migText(r), num: false },
  { key: 'uncertainty', label: '±', get: (r) => r.uncertainty, text: (r) => pct(r.uncertainty) },
  { key: 'predictor', label: 'Predictor', get: (r) => predictorText(r), text: (r) => predictorText(r), num: false },
];

/** The latency's band as the table shows it beside the latency: a calibrated band as a range
 *  ("4.1–5.0 ms"), else the held-out error ("±12%", "±?" where none was measured); and its tooltip. */
export function bandText(r) {
  if (r.latency_band_coverage) {
    const [lo, hi] = r.latency_band_ms.map(ms);
    const unit = (t) => t.split(' ').pop();
    const low = unit(lo) === unit(hi) ? lo.slice(0, -unit(lo).length - 1) : lo;
    return { text: ` ${low}–${hi}`, title: `${Math.round(r.latency_band_coverage * 100)}% of held-out measurements fell inside the predictor's band (wider where the learned predictors disagree, doubled out of distribution)` };
  }
  if (r.uncertainty) return { text: ` ${pct(r.uncertainty)}`, title: 'held-out error of the predictor for this device family' };
  return { text: ' ±?', title: 'no held-out measurements for this device family yet' };
}

/** Which predictor made a row, by name and version; '(out of distribution)' where the row is outside its
 *  training data. */
export function predictorText(r) {
  if (!r.predictor) return '';
  return `${r.predictor.name} ${r.predictor.version}` + (r.out_of_distribution ? ' (out of distribution)' : '');
}

// The core's out-of-distribution reasons (ood_reasons), in the table's words.
const OOD_WORDS = {
  'training-step': 'a training step: the learned predictors trained on inference runs',
  'untrained-runtime': 'a runtime the learned predictor never trained on',
  'no-held-out-rows': 'no held-out rows of this device family measure the learned error',
  'untrained-device-family': 'a device family it never trained on',
  'feature-range': 'features outside the training rows\' range',
  'unknown-ops': 'op types it has no embedding for',
  'embedding-distance': 'a model far from every model it trained on',
};

/** Why a row is out of distribution, in words ('' when it is not); an unknown reason is shown as given. */
export function oodText(r) {
  return (r.ood_reasons ?? []).map((k) => OOD_WORDS[k] ?? k).join('; ');
}

/** Where a row is host-bound (the device idles most of the latency while the runtime issues kernels),
 *  the words the table shows under its latency: the device-busy time and the idle share, and (`withHost`)
 *  the host time per kernel the roofline assumed, where the roofline made the row (a learned row corrects
 *  that roofline by what its measured hosts did: the assumed figure would not add up to its latency);
 *  else null. */
export function hostBoundText(r, withHost = true) {
  if (!r.host_bound || !(r.latency_ms > 0)) return null;
  const host = withHost && byRoofline(r) && r.host_us_per_kernel ? `, host ${sig(r.host_us_per_kernel)} µs/kernel` : '';
  return `host-bound: ${busyText(r)}${host}`;
}

const byRoofline = (r) => r.predictor?.name === 'roofline';

/** The tooltip of a host-bound row: what it means, and whose host time the latency carries. */
export function hostBoundTitle(r) {
  const what = 'The runtime issues kernels from the host more slowly than the device runs them: a faster device does not help at this batch; a larger batch or graph replay does.';
  if (!r.host_us_per_kernel) return what;
  return byRoofline(r)
    ? `${what} The roofline assumes ${sig(r.host_us_per_kernel)} µs of host time per kernel (the fitted constant, or the "Host" field).`
    : `${what} The ${r.predictor?.name} predictor corrects the roofline (${sig(r.host_us_per_kernel)} µs of host time per kernel) by what its measured rows did, hosts included: GPUs measured on faster hosts come out faster here.`;
}

/** A kernel's type in the breakdown: its op type, with the training phase beside it when not the
 *  forward ("Conv (backward)"); an optimizer pass or a cast that has no op: "optimizer update", "autocast". */
export function kernelType(k) {
  if (!k.op_type) return k.phase === 'update' ? 'optimizer update' : 'autocast casts';
  return !k.phase || k.phase === 'forward' ? k.op_type : `${k.op_type} (${k.phase})`;
}

/** A kernel's name in "slowest kernels": its node, marked when it is the node's backward. */
export function kernelLabel(k) {
  return k.phase === 'backward' && k.op_type ? `${k.name} (backward)` : k.name;
}

/** A training row's step split over its phases, for the latency's tooltip ("training step: device time
 *  forward 70.8 ms, backward 133 ms, optimizer update 1.61 ms"); null for other rows. */
export function stepText(r) {
  const p = r.device_busy_ms_by_phase;
  if (!p) return null;
  return `training step: device time forward ${ms(p.forward)}, backward ${ms(p.backward)}, optimizer update ${ms(p.update)}`;
}

/** "GPU busy 98.5 µs, idle 98%": the device's busy time within a row's latency and the idle share. */
export function busyText(r) {
  const idle = Math.round((1 - r.device_busy_ms / r.latency_ms) * 100);
  return `${r.threads ? 'CPU' : 'GPU'} busy ${ms(r.device_busy_ms)}, idle ${idle}%`;
}

/** The MIG column: the recommended profile, or why there is none (the model does not fit any profile's
 *  memory, or the profiles it fits miss the latency target). */
export function migText(r) {
  if (!r.mig) return '–';
  if (r.mig.recommended) return r.mig.recommended;
  const fitting = r.mig.profiles.filter((p) => p.fits);
  if (!fitting.length) {
    const largest = Math.max(...r.mig.profiles.map((p) => p.memory_gb));
    return `none fits: needs ${sig(r.peak_memory_mb * 2 ** 20 / 1e9)} GB, the largest slice ${largest} GB less 10% headroom`;
  }
  const best = Math.min(...fitting.map((p) => p.latency_ms));
  return `none meets the target: best ${ms(best)}`;
}

function csvCell(v) {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** The prediction rows as CSV, full precision, one line per device and batch. */
export function toCsv(doc) {
  const head = ['device', 'device_name', 'batch', 'precision', 'precision_requested', 'runtime', 'latency_ms',
    'device_busy_ms', 'host_bound', 'host_us_per_kernel', 'throughput_per_s', 'uncertainty', 'peak_memory_mb', 'weights_mb', 'activations_mb', 'device_memory_gb', 'fits',
    'power_w', 'energy_j_per_sample', 'carbon_g_per_1000', 'mig_recommended', 'predictor', 'predictor_version'];
  const lines = [head.join(',')];
  for (const r of doc.predictions) {
    lines.push([r.device, r.device_name, r.batch, r.precision, r.precision_requested, r.runtime, r.latency_ms,
      r.device_busy_ms, r.host_bound, r.host_us_per_kernel, r.throughput_per_s, r.uncertainty, r.peak_memory_mb, r.memory_mb.weights, r.memory_mb.activations,
      r.device_memory_gb, r.fits, r.power_w, r.energy_j_per_sample, r.carbon_g_per_1000,
      r.mig ? r.mig.recommended ?? 'none' : '', r.predictor.name, r.predictor.version].map(csvCell).join(','));
  }
  return lines.join('\n') + '\n';
}

/** The `perfcard predict` command line that gives the same document as these options. */
export function cliCommand(file, o) {
  const q = (s) => (/^[\w.,=/:+-]+$/.test(s) ? s : `'${String(s).replaceAll("'", "'\\''")}'`);
  const a = ['perfcard', 'predict', q(file)];
  if (o.devices !== undefined) a.push('--device', q(Array.isArray(o.devices) ? o.devices.join(',') : o.devices));
  if (o.batch !== undefined) a.push('--batch', q(Array.isArray(o.batch) ? o.batch.join(',') : String(o.batch)));
  if (o.precision) a.push('--precision', o.precision);
  if (o.mode && o.mode !== 'inference') a.push('--mode', o.mode);
  if (o.optimizer) a.push('--optimizer', o.optimizer);
  for (const [k, v] of Object.entries(o.dims ?? {})) a.push('--dim', q(`${k}=${v}`));
  if (o.region) a.push('--region', q(o.region));
  if (o.gridGPerKwh !== undefined) a.push('--grid-g-per-kwh', String(o.gridGPerKwh));
  if (o.pue !== undefined) a.push('--pue', String(o.pue));
  if (o.latencyTargetMs !== undefined) a.push('--latency-target-ms', String(o.latencyTargetMs));
  if (o.runtime) a.push('--runtime', q(o.runtime));
  if (o.hostUs !== undefined) a.push('--host-us', String(o.hostUs));
  if (o.predictor) a.push('--predictor', q(o.predictor));
  a.push('--json');
  return a.join(' ');
}

/** The document without per-kernel data: what `perfcard predict --json` prints without --kernels. */
export function withoutKernels(doc) {
  return { ...doc, predictions: doc.predictions.map(({ kernels, ...r }) => r) };
}
