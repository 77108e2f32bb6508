// <perf-card>: a compact PerfCard for any page, from one script import.
//
//   <script type="module" src="https://YOUR.SITE/perfcard/widget.js"></script>
//   <perf-card src="model.onnx" devices="h100-sxm5-80gb,l4" batch="1,8"></perf-card>
//
// Attributes mirror `perfcard predict`: src (the model, fetched from the host page's origin), devices
// (ids, "all", "cpus"), batch ("1,8"), precision, mode, region, dims ("sequence=128,..."), latency-target,
// runtime, predictor (default auto: learned where it beats the roofline for the device; its file is fetched from beside
// this script), title. The numbers are the page's and the CLI's: the same wasm core computes them, in the
// reader's browser. Nothing is sent anywhere; the model is fetched from `src` only.
import { createPerfCard } from './lib/perfcard.js';
import * as F from './format.js';
import { withPredictors } from './predictors.js';

const CSS = `
:host { display: block; max-width: 720px; font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
  font-size: 14px; line-height: 1.4; color: #1b1f24; }
.card { border: 1px solid #d0d7de; border-radius: 10px; background: #fff; overflow: hidden; box-sizing: border-box;
  display: flex; flex-direction: column; max-height: 100%; }
header, footer { flex: none; }
header { display: flex; justify-content: space-between; align-items: baseline; gap: 8px; padding: 10px 12px 6px;
  border-bottom: 1px solid #e3e7eb; flex-wrap: wrap; }
h2 { margin: 0; font-size: 15px; }
.sub { color: #545d68; font-size: 12px; }
.wrap { overflow: auto; min-height: 0; flex: 0 1 auto; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { padding: 5px 7px; text-align: right; white-space: nowrap; border-bottom: 1px solid #eef1f4; }
th:first-child, td:first-child { text-align: left; white-space: normal; min-width: 7em; }
thead th { background: #f6f7f9; font-size: 12px; color: #3d444d; font-weight: 600; }
.unc { color: #545d68; font-size: 11px; }
.hb { display: block; color: #8a5a00; font-size: 11px; white-space: normal; max-width: 12em; margin-left: auto; }
.yes { color: #146c2e; font-weight: 600; }
.no { color: #b3261e; font-weight: 600; }
footer { padding: 6px 12px 8px; color: #545d68; font-size: 11.5px; display: flex; justify-content: space-between; gap: 8px; flex-wrap: wrap; }
.msg { padding: 12px; color: #545d68; }
.err { padding: 12px; color: #7a1712; background: #fdecea; }
a { color: #0b5cad; }
`;

let cardPromise = null;
function core() {
  cardPromise ??= createPerfCard().catch((e) => { cardPromise = null; throw e; });
  return cardPromise;
}

function parseDims(s) {
  const dims = {};
  for (const part of (s ?? '').split(',')) {
    const [k, v] = part.split('=').map((x) => x?.trim());
    if (k && v) dims[k] = v;
  }
  return dims;
}

/** The predict() options an element's attributes ask for (also used by embed.html). */
export function optionsFrom(get) {
  const o = {};
  const devices = get('devices');
  o.devices = devices ? devices.split(',').map((d) => d.trim()).filter(Boolean) : 'all';
  if (Array.isArray(o.devices) && o.devices.length === 1 && /^(all|cpus|every|gpus)$/.test(o.devices[0])) o.devices = o.devices[0];
  o.batch = (get('batch') ?? '1').split(',').map((b) => b.trim()).filter(Boolean).map(Number);
  for (const [attr, key] of [['precision', 'precision'], ['mode', 'mode'], ['region', 'region'], ['runtime', 'runtime'], ['predictor', 'predictor']]) {
    const v = get(attr);
    if (v) o[key] = v;
  }
  const target = get('latency-target');
  if (target) o.latencyTargetMs = Number(target);
  const dims = parseDims(get('dims'));
  if (Object.keys(dims).length) o.dims = dims;
  return o;
}

export class PerfCardElement extends HTMLElement {
  static observedAttributes = ['src', 'devices', 'batch', 'precision', 'mode', 'region', 'dims', 'latency-target', 'runtime', 'predictor', 'title'];

  #root;
  #generation = 0;
  #bytes = null;
  #bytesSrc = null;
  /** The last prediction document (the same as `perfcard predict --json`). */
  prediction = null;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    this.#root.adoptedStyleSheets = [sheet];
  }

  connectedCallback() {
    this.#render();
  }

  attributeChangedCallback() {
    if (this.isConnected) this.#render();
  }

  #show(...nodes) {
    this.#root.replaceChildren(...nodes);
  }

  #el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  async #render() {
    const gen = ++this.#generation;
    const src = this.getAttribute('src');
    this.setAttribute('aria-busy', 'true');
    this.dataset.state = 'busy';
    if (!src) {
      this.#show(this.#el('div', 'err', 'perf-card: set src="model.onnx"'));
      this.dataset.state = 'error';
      return;
    }
    const name = src.split(/[?#]/)[0].split('/').pop() || src;
    this.#show(this.#el('div', 'msg', `Predicting ${name}…`));
    try {
      const url = new URL(src, document.baseURI).href;
      if (this.#bytesSrc !== url) {
        const r = await fetch(url, { credentials: 'same-origin' });
        if (!r.ok) throw new Error(`cannot load ${name}: HTTP ${r.status}`);
        this.#bytes = new Uint8Array(await r.arrayBuffer());
        this.#bytesSrc = url;
      }
      const card = await core();
      const { options, note } = await withPredictors(card, optionsFrom((a) => this.getAttribute(a)), import.meta.url);
      const doc = card.predictSync(this.#bytes, options);
      if (gen !== this.#generation) return;
      this.prediction = doc;
      this.#show(this.#card(doc, name, options, note));
      this.dataset.state = 'ready';
      this.dispatchEvent(new CustomEvent('perfcard-ready', { detail: doc }));
    } catch (e) {
      if (gen !== this.#generation) return;
      this.#show(this.#el('div', 'err', `PerfCard: ${e.message}`));
      this.dataset.state = 'error';
      this.dispatchEvent(new CustomEvent('perfcard-error', { detail: e }));
    } finally {
      if (gen === this.#generation) this.removeAttribute('aria-busy');
    }
  }

  #card(doc, name, options, note) {
    const box = this.#el('section', 'card');
    box.setAttribute('aria-label', `PerfCard predictions for ${name}`);
    const head = this.#el('header');
    head.append(this.#el('h2', null, this.getAttribute('title') || name));
    const prec = options.precision ?? 'fp16 GPU / fp32 CPU';
    const dims = Object.entries(options.dims ?? {}).map(([k, v]) => `${k} ${v}`).join(', ');
    head.append(this.#el('span', 'sub', [options.mode ?? 'inference', prec, dims].filter(Boolean).join(' · ')));
    box.append(head);
    const wrap = this.#el('div', 'wrap');
    const table = this.#el('table');
    const thead = this.#el('thead');
    const tr = this.#el('tr');
    for (const t of ['Device', 'Batch', 'Latency', 'Throughput', 'Memory', 'Fits', 'J/sample', 'gCO₂e/1k', 'MIG']) {
      const th = this.#el('th', null, t);
      th.scope = 'col';
      tr.append(th);
    }
    thead.append(tr);
    table.append(thead);
    const tbody = this.#el('tbody');
    for (const r of doc.predictions) {
      const row = this.#el('tr');
      row.dataset.device = r.device;
      row.dataset.batch = r.batch;
      const th = this.#el('th', null, r.device_name.replace(/^NVIDIA (GeForce |Tesla )?/, ''));
      th.title = r.device_name;
      th.scope = 'row';
      row.append(th);
      const lat = this.#el('td', null, F.ms(r.latency_ms));
      lat.append(this.#el('span', 'unc', ` ${F.pct(r.uncertainty)}`));
      if (r.host_bound) lat.append(this.#el('span', 'hb', F.hostBoundText(r, false)));  // narrow: the page says the host
      lat.dataset.value = r.latency_ms;
      const cells = [
        this.#el('td', null, String(r.batch)), lat,
        this.#el('td', null, F.rate(r.throughput_per_s)),
        this.#el('td', null, F.mib(r.peak_memory_mb)),
        this.#el('td', r.fits ? 'yes' : 'no', r.fits ? 'yes' : 'no'),
        this.#el('td', null, r.energy_j_per_sample === null ? '–' : F.sig(r.energy_j_per_sample)),
        this.#el('td', null, r.carbon_g_per_1000 === null ? '–' : F.sig(r.carbon_g_per_1000)),
        this.#el('td', null, F.migText(r)),
      ];
      row.append(...cells);
      tbody.append(row);
    }
    table.append(tbody);
    wrap.append(table);
    box.append(wrap);
    const foot = this.#el('footer');
    // Every predictor that made a row (auto chooses per device family), by name: the versions are in the rows' JSON.
    const by = [...new Set(doc.predictions.map((r) => r.predictor.name))].join(', ');
    const versions = [...new Set(doc.predictions.map((r) => r.predictor.version))].join(', ');
    const runtimes = [...new Set(doc.predictions.map((r) => r.runtime))].join(' / ');
    const said = this.#el('span', null, `Predicted, not measured · ${runtimes} · by ${by} · memory: ${doc.predictions[0]?.memory_protocol ?? 'inference'} · ± = held-out error · carbon: ${doc.carbon.region}, ${F.sig(doc.carbon.grid_g_per_kwh)} g/kWh, PUE ${doc.carbon.pue}`);
    said.title = `predictor versions: ${versions}`;
    foot.append(said);
    const link = this.#el('a', null, 'PerfCard');
    link.href = new URL('./', import.meta.url).href;
    link.target = '_blank';
    link.rel = 'noopener';
    foot.append(link);
    box.append(foot);
    if (note) box.append(this.#el('div', 'msg note', note));
    return box;
  }
}

if (!customElements.get('perf-card')) customElements.define('perf-card', PerfCardElement);
