// SVG charts drawn by hand (no chart library): lines on log axes with capacity lines, horizontal bars, the
// roofline plot and the MIG packing strip. Colours and styles come from attributes and classes only
// (the page's CSP allows no inline styles). Every chart is an <svg role="img"> with a title.
import { sig } from './format.js';

const NS = 'http://www.w3.org/2000/svg';

// Okabe-Ito colours, readable on white, distinguishable with common colour-vision deficiencies.
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#7A5C00', '#56B4E9', '#000000', '#882255',
  '#44AA99', '#999933', '#AA4499', '#332288', '#117733', '#661100', '#6A3D9A', '#B15928'];
// Sixteen colours are not sixteen distinguishable ones: the second eight series are also dashed (the
// table's swatches and the legend show the same), so no two of the 16 default GPUs look alike.
export function styleOf(index) {
  return { color: PALETTE[index % PALETTE.length], dashed: index % PALETTE.length >= 8 };
}

export function svg(name, attrs = {}, children = []) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  for (const c of children) if (c) e.append(c);
  return e;
}

// The MIG instances' fill: the palette's green darkened so that their white labels reach 4.5:1 (5.4:1).
const MIG_FILL = '#007A5A';

function text(x, y, s, attrs = {}) {
  const t = svg('text', { x, y, ...attrs });
  t.textContent = s;
  return t;
}

function titled(node, s) {
  const t = svg('title');
  t.textContent = s;
  node.prepend(t);
  return node;
}

function root(w, h, label) {
  const s = svg('svg', { viewBox: `0 0 ${w} ${h}`, role: 'img', 'aria-label': label, class: 'chart', preserveAspectRatio: 'xMinYMin meet' });
  titled(s, label);
  return s;
}

/** Ticks of a log10 axis over [lo, hi]: decades, with 2 and 5 when the range is narrow. */
export function logTicks(lo, hi) {
  const out = [];
  const a = Math.floor(Math.log10(lo));
  const b = Math.ceil(Math.log10(hi));
  const steps = b - a <= 2 ? [1, 2, 5] : [1];
  for (let e = a; e <= b; e++) for (const m of steps) {
    const v = m * 10 ** e;
    if (v >= lo * 0.999 && v <= hi * 1.001) out.push(v);
  }
  return out;
}

function logScale(lo, hi, a, b) {
  const l0 = Math.log10(lo);
  const l1 = Math.log10(hi);
  return (v) => a + ((Math.log10(v) - l0) / (l1 - l0 || 1)) * (b - a);
}

function padRange(values, factor = 1.5) {
  const v = values.filter((x) => x > 0 && Number.isFinite(x));
  if (!v.length) return [1, 10];
  let lo = Math.min(...v) / factor;
  let hi = Math.max(...v) * factor;
  if (hi / lo < 10) { const m = Math.sqrt(hi * lo); lo = m / Math.sqrt(10); hi = m * Math.sqrt(10); }
  return [lo, hi];
}

function axisLabel(v, unit = '') {
  const a = Math.abs(v);
  let s;
  if (a >= 1e12) s = `${sig(v / 1e12, 2)}T`;
  else if (a >= 1e9) s = `${sig(v / 1e9, 2)}G`;
  else if (a >= 1e6) s = `${sig(v / 1e6, 2)}M`;
  else if (a >= 1e3) s = `${sig(v / 1e3, 2)}k`;
  else s = sig(v, 2);
  return s + unit;
}

/**
 * Lines on a log2 (x) / log10 (y) plot.
 * series: [{name, color, points: [[x, y]...], dashed?}], hlines: [{y, color, label}]
 */
export function lineChart({ title, xLabel, yLabel, series, hlines = [], width = 640, height = 320, xTicks, yUnit = '' }) {
  const m = { l: 58, r: width < 420 ? 84 : 118, t: 16, b: 44 };
  const s = root(width, height, title);
  const xs = series.flatMap((x) => x.points.map((p) => p[0]));
  const ys = series.flatMap((x) => x.points.map((p) => p[1])).concat(hlines.map((h) => h.y));
  if (!xs.length) {
    s.append(text(width / 2, height / 2, 'no data', { 'text-anchor': 'middle', class: 'muted' }));
    return s;
  }
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const [y0, y1] = padRange(ys, 1.6);
  const X = (v) => m.l + ((Math.log2(v) - Math.log2(x0)) / (Math.log2(x1) - Math.log2(x0) || 1)) * (width - m.l - m.r);
  const Y = logScale(y0, y1, height - m.b, m.t);
  const grid = svg('g', { class: 'grid' });
  for (const v of logTicks(y0, y1)) {
    grid.append(svg('line', { x1: m.l, x2: width - m.r, y1: Y(v), y2: Y(v) }));
    grid.append(text(m.l - 6, Y(v) + 4, axisLabel(v, yUnit), { 'text-anchor': 'end', class: 'tick' }));
  }
  for (const v of xTicks ?? [...new Set(xs)].sort((a, b) => a - b)) {
    grid.append(svg('line', { x1: X(v), x2: X(v), y1: m.t, y2: height - m.b }));
    grid.append(text(X(v), height - m.b + 16, String(v), { 'text-anchor': 'middle', class: 'tick' }));
  }
  s.append(grid);
  s.append(text(m.l + (width - m.l - m.r) / 2, height - 6, xLabel, { 'text-anchor': 'middle', class: 'axis-label' }));
  s.append(text(14, m.t + (height - m.t - m.b) / 2, yLabel, {
    'text-anchor': 'middle', class: 'axis-label', transform: `rotate(-90 14 ${m.t + (height - m.t - m.b) / 2})`,
  }));
  // Capacity lines, labelled at the right; labels nudged apart when they collide.
  let lastY = -Infinity;
  const sortedH = [...hlines].filter((h) => h.y >= y0 && h.y <= y1).sort((a, b) => Y(b.y) - Y(a.y));
  for (const h of sortedH) {
    const y = Y(h.y);
    s.append(titled(svg('line', { x1: m.l, x2: width - m.r, y1: y, y2: y, stroke: h.color, 'stroke-dasharray': '6 4', 'stroke-width': 1.5 }), h.label));
    let ly = y + 4;
    if (Math.abs(ly - lastY) < 12) ly = lastY - 12;
    lastY = ly;
    s.append(text(width - m.r + 6, ly, h.label, { class: 'hline-label' }));  // dark text: small labels need 4.5:1
  }
  for (const ser of series) {
    const pts = ser.points.filter((p) => p[1] > 0);
    const g = svg('g', { class: 'series', 'data-series': ser.name });
    g.append(svg('polyline', {
      points: pts.map((p) => `${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(' '),
      fill: 'none', stroke: ser.color, 'stroke-width': 2, 'stroke-dasharray': ser.dashed ? '4 3' : null,
    }));
    for (const p of pts) {
      const c = svg('circle', { cx: X(p[0]).toFixed(1), cy: Y(p[1]).toFixed(1), r: 3.5, fill: p[2] === false ? '#fff' : ser.color, stroke: ser.color, 'stroke-width': 1.5 });
      titled(c, `${ser.name}, batch ${p[0]}: ${axisLabel(p[1], yUnit)}${p[2] === false ? ' (does not fit)' : ''}`);
      g.append(c);
    }
    s.append(g);
  }
  return s;
}

/** Horizontal bars: items [{label, value, note?, color?}], values formatted by fmt. */
export function barChart({ title, items, fmt, width = 520, color = PALETTE[0] }) {
  const rowH = 24;
  const labelW = width < 420 ? 140 : 190;
  const valueW = width < 420 ? 118 : 124;
  const height = Math.max(1, items.length) * rowH + 8;
  const s = root(width, height, title);
  const max = Math.max(...items.map((i) => i.value), 1e-30);
  items.forEach((it, i) => {
    const y = 4 + i * rowH;
    const w = Math.max(1, (it.value / max) * (width - labelW - valueW - 8));
    const g = svg('g', { class: 'bar' });
    const maxChars = Math.floor((labelW - 10) / 7.2);
    const label = it.label.length > maxChars ? `…${it.label.slice(-(maxChars - 1))}` : it.label;
    g.append(text(labelW - 8, y + 16, label, { 'text-anchor': 'end', class: 'bar-label' }));
    g.append(svg('rect', { x: labelW, y: y + 3, width: w.toFixed(1), height: rowH - 8, fill: it.color ?? color, rx: 2 }));
    g.append(text(labelW + w + 6, y + 16, fmt(it.value) + (it.note ? ` ${it.note}` : ''), { class: 'bar-value' }));
    titled(g, `${it.label}: ${fmt(it.value)}${it.note ? ` ${it.note}` : ''}`);
    s.append(g);
  });
  return s;
}

/**
 * The roofline of one device with the model's kernels placed on it.
 * roofs: [{name, flops (FLOP/s)}], bandwidth (B/s), kernels: [{name, op_type, flops, bytes, time_ms, compute_ms, memory_ms}]
 */
export function roofline({ title, roofs, bandwidth, kernels, width = 640, height = 360 }) {
  const m = { l: 64, r: 24, t: 16, b: 44 };
  const s = root(width, height, title);
  // Kernels without FLOPs (copies, transposes, concatenations) have no place on a log-log roofline.
  const pts = kernels.filter((k) => k.time_ms > 0 && k.bytes > 0 && k.flops > 0).map((k) => ({
    k, i: k.flops / k.bytes, p: k.flops / (k.time_ms * 1e-3),
  }));
  const peak = Math.max(...roofs.map((r) => r.flops));
  const ridge = peak / bandwidth;
  const xs = pts.map((p) => p.i).concat([ridge / 100, ridge * 10]);
  const x0 = 10 ** Math.floor(Math.log10(Math.min(...xs)));
  const x1 = 10 ** Math.ceil(Math.log10(Math.max(...xs)));
  const y1 = peak * 3;
  const y0 = 10 ** Math.floor(Math.log10(Math.min(...pts.map((p) => p.p), bandwidth * x0, peak / 1e4)));
  const X = logScale(x0, x1, m.l, width - m.r);
  const Y = logScale(y0, y1, height - m.b, m.t);
  const grid = svg('g', { class: 'grid' });
  for (const v of logTicks(x0, x1)) {
    grid.append(svg('line', { x1: X(v), x2: X(v), y1: m.t, y2: height - m.b }));
    grid.append(text(X(v), height - m.b + 16, axisLabel(v), { 'text-anchor': 'middle', class: 'tick' }));
  }
  for (const v of logTicks(y0, y1)) {
    grid.append(svg('line', { x1: m.l, x2: width - m.r, y1: Y(v), y2: Y(v) }));
    grid.append(text(m.l - 6, Y(v) + 4, axisLabel(v), { 'text-anchor': 'end', class: 'tick' }));
  }
  s.append(grid);
  s.append(text(m.l + (width - m.l - m.r) / 2, height - 6, 'arithmetic intensity (FLOP/byte)', { 'text-anchor': 'middle', class: 'axis-label' }));
  s.append(text(14, m.t + (height - m.t - m.b) / 2, 'achieved FLOP/s', {
    'text-anchor': 'middle', class: 'axis-label', transform: `rotate(-90 14 ${m.t + (height - m.t - m.b) / 2})`,
  }));
  roofs.forEach((r, idx) => {
    const knee = r.flops / bandwidth;
    const a = Math.max(x0, y0 / bandwidth);
    const line = [[a, bandwidth * a], [knee, r.flops], [x1, r.flops]].map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(' ');
    s.append(titled(svg('polyline', { points: line, fill: 'none', stroke: idx === 0 ? '#222' : '#777', 'stroke-width': idx === 0 ? 2 : 1.5, 'stroke-dasharray': idx === 0 ? null : '6 4' }),
      `${r.name}: ${axisLabel(r.flops)}FLOP/s peak, ${axisLabel(bandwidth)}B/s`));
    s.append(text(X(x1) - 4, Y(r.flops) - 5, `${r.name} ${axisLabel(r.flops)}FLOP/s`, { 'text-anchor': 'end', class: 'roof-label' }));
  });
  const total = pts.reduce((a, p) => a + p.k.time_ms, 0) || 1;
  const g = svg('g', { class: 'kernels' });
  for (const p of pts) {
    const r = Math.max(2.5, Math.min(14, Math.sqrt(p.k.time_ms / total) * 40));
    const bound = p.k.compute_ms >= p.k.memory_ms ? 'compute' : 'memory';
    const c = svg('circle', { cx: X(p.i).toFixed(1), cy: Y(p.p).toFixed(1), r: r.toFixed(1), fill: bound === 'compute' ? PALETTE[1] : PALETTE[0], 'fill-opacity': 0.55, stroke: '#fff', 'stroke-width': 0.5 });
    titled(c, `${p.k.name} (${p.k.op_type}): ${sig(p.k.time_ms)} ms, ${sig(p.i)} FLOP/B, ${bound}-bound`);
    g.append(c);
  }
  s.append(g);
  return s;
}

/**
 * The MIG strip: the GPU's compute slices, filled with as many instances of a profile as fit.
 */
export function migStrip({ title, slicesTotal, profile, instances, width = 360, height = 44 }) {
  const s = root(width, height, title);
  const w = (width - 2) / slicesTotal;
  for (let i = 0; i < slicesTotal; i++) {
    s.append(svg('rect', { x: 1 + i * w, y: 6, width: w - 2, height: height - 12, fill: '#f1f3f5', stroke: '#adb5bd', rx: 3 }));
  }
  if (profile) {
    for (let n = 0; n < instances; n++) {
      const x = 1 + n * profile.compute_slices * w;
      s.append(titled(svg('rect', { x: x + 2, y: 9, width: profile.compute_slices * w - 6, height: height - 18, fill: MIG_FILL, rx: 3 }),
        `instance ${n + 1}: ${profile.name}`));
      const label = profile.compute_slices * w - 8 > profile.name.length * 6.5 ? profile.name : String(n + 1);
      s.append(text(x + (profile.compute_slices * w) / 2, height / 2 + 4, label, { 'text-anchor': 'middle', class: 'mig-label' }));
    }
  }
  return s;
}
