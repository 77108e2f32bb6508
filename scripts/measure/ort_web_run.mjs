// Times one model configuration with onnxruntime-web's wasm backend (one thread) and prints one JSON line
// with the fields of ort_run.mjs, plus `env` and, in Chromium, `browser`.
//   node ort_web_run.mjs MODEL.onnx --env node|chromium --dim name=value ... [--runs 10] [--min-seconds 1]
//        [--warmup 3] [--external-data FILE ...]
// External weights: FILE (repeatable), else MODEL.onnx.weights / MODEL.weights next to the model if present
// (the name graph-only zoo files reference, which materialize.py fills in).
// node: onnxruntime-web's node entry in this process. chromium: Debian's headless Chromium through
// playwright-core (tests/web/harness.mjs), the page and ORT's wasm files served from a temporary folder on
// loopback; the timing loop runs inside the page. One thread means no SharedArrayBuffer, so no COOP/COEP.
import { copyFileSync, existsSync, linkSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { timeModel } from './time_model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ORT_DIST = join(HERE, 'node_modules', 'onnxruntime-web', 'dist');
// The plain wasm build (no WebGPU/WebNN glue) and the one wasm binary it loads.
const ORT_FILES = ['ort.wasm.min.mjs', 'ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm'];

const args = process.argv.slice(2);
const opts = { model: args[0], env: 'node', runs: 10, minSeconds: 1.0, warmup: 3, dims: {}, external: [] };
for (let i = 1; i < args.length; i++) {
  const a = args[i];
  if (a === '--env') opts.env = args[++i];
  else if (a === '--runs') opts.runs = Number(args[++i]);
  else if (a === '--min-seconds') opts.minSeconds = Number(args[++i]);
  else if (a === '--warmup') opts.warmup = Number(args[++i]);
  else if (a === '--dim') { const [k, v] = args[++i].split('='); opts.dims[k] = Number(v); }
  else if (a === '--external-data') opts.external.push(args[++i]);
  else if (a === '--threads') { if (Number(args[++i]) !== 1) throw new Error('only --threads 1 (no COOP/COEP)'); }
  else throw new Error(`unknown option ${a}`);
}
if (!opts.model || !['node', 'chromium'].includes(opts.env)) {
  throw new Error('usage: node ort_web_run.mjs MODEL.onnx --env node|chromium [--dim k=v ...]');
}
if (!opts.external.length) {
  for (const cand of [`${opts.model}.weights`, opts.model.replace(/\.onnx$/, '.weights')]) {
    if (existsSync(cand)) { opts.external.push(cand); break; }
  }
}

// Session options of the wasm backend: one thread, no proxy worker; external weights by file name.
function webOptions(o, externalData) {
  return { ...o, versionKey: 'web',
    sessionOptions: { executionProviders: ['wasm'], graphOptimizationLevel: 'all', executionMode: 'sequential', externalData } };
}

function vmhwmMiB() {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) / 1024 : null;
}

async function inNode() {
  const ort = await import('onnxruntime-web');
  const external = opts.external.map((p) => ({ path: basename(p), data: new Uint8Array(readFileSync(p)) }));
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  const r = await timeModel(ort, new Uint8Array(readFileSync(opts.model)), webOptions(opts, external));
  return { ...r, peak_rss_mib: vmhwmMiB(), env: 'node' };
}

function place(src, dir) {
  const dst = join(dir, basename(src));
  try { linkSync(src, dst); } catch { copyFileSync(src, dst); }
}

async function inChromium() {
  const harness = await import(join(HERE, '..', '..', 'tests', 'web', 'harness.mjs'));
  const site = mkdtempSync(join(tmpdir(), 'perfcard-ortweb-'));
  let server = null;
  let browser = null;
  try {
    for (const f of ORT_FILES) place(join(ORT_DIST, f), site);
    place(resolve(opts.model), site);
    for (const p of opts.external) place(resolve(p), site);
    writeFileSync(join(site, 'index.html'),
      '<!doctype html><meta charset="utf-8"><title>ort-web timing</title><script type="module" src="run.mjs"></script>\n');
    writeFileSync(join(site, 'run.mjs'), `import * as ort from './ort.wasm.min.mjs';
ort.env.wasm.wasmPaths = new URL('./', import.meta.url).href;
ort.env.wasm.numThreads = 1;
ort.env.wasm.proxy = false;
${timeModel.toString()}
${webOptions.toString()}
window.measure = async (o) => {
  const get = async (name) => new Uint8Array(await (await fetch(name)).arrayBuffer());
  const external = [];
  for (const name of o.externalNames) external.push({ path: name, data: await get(name) });
  return timeModel(ort, await get(o.modelName), webOptions(o, external));
};
window.measureReady = true;
`);
    server = await harness.serve(site);
    browser = await harness.launch();
    const guard = await harness.guard(browser.context, server.origin);
    const page = await browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${server.origin}/index.html`);
    await page.waitForFunction(() => window.measureReady === true, null, { timeout: 60000 }).catch((e) => {
      throw new Error(`runner page did not load: ${errors.join('; ') || e.message}`);
    });
    const r = await page.evaluate((o) => window.measure(o), {
      ...opts, modelName: basename(opts.model), externalNames: opts.external.map((p) => basename(p)),
    });
    if (guard.foreign.length) throw new Error(`the page asked for other origins: ${guard.foreign.join(', ')}`);
    const browserVersion = await page.evaluate(() => navigator.userAgent.match(/(?:Headless)?Chrome\/[\d.]+/)?.[0] ?? null);
    // The renderer's resident peak is not visible from here; null rather than the node driver's.
    return { ...r, peak_rss_mib: null, env: 'chromium', browser: browserVersion };
  } finally {
    if (browser) await browser.close();
    if (server) await server.stop();
    rmSync(site, { recursive: true, force: true });
  }
}

const result = opts.env === 'node' ? await inNode() : await inChromium();
console.log(JSON.stringify(result));
