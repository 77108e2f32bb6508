#!/usr/bin/env node
// The web figures of docs/benchmarks.md (section "web"): download size of wasm + JS (+ the data embedded in
// the wasm), time to the first prediction for each bundled example (node, and in headless Chromium after
// the page has loaded), the re-prediction of all GPUs x 8 batch sizes when a setting changes, and memory
// (the wasm heap, the browser's renderer processes).
//
//   node web/build.mjs && node scripts/bench_web.mjs [--runs N] [--no-browser] [--big FILE]
//
// Wall-clock figures depend on the machine's load; CPU time (node, process.cpuUsage) is printed beside
// them. The load average at the start and the end is printed too.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = resolve(process.env.PERFCARD_DIST ?? join(root, 'dist'));
const args = process.argv.slice(2);
const runs = Number(args.includes('--runs') ? args[args.indexOf('--runs') + 1] : 15);
const noBrowser = args.includes('--no-browser');
const bigFile = args.includes('--big') ? args[args.indexOf('--big') + 1] : join(root, 'build', 'bench-models', 'mlp_1gb.onnx');
const SWEEP = [1, 2, 4, 8, 16, 32, 64, 128];

if (!existsSync(join(dist, 'lib', 'perfcard_wasm.wasm'))) {
  console.error(`bench_web.mjs: ${dist} is not built: scripts/build.sh && node web/build.mjs`);
  process.exit(1);
}

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const f1 = (x) => x.toFixed(1);
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
function size(p) {
  const b = readFileSync(p);
  return { raw: b.length, gzip: gzipSync(b, { level: 9 }).length };
}

console.log(`# PerfCard web benchmark (${new Date().toISOString().slice(0, 10)})`);
console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}; node ${process.version}`);

// ---- sizes -------------------------------------------------------------------------------------------
console.log('\n## download size (what the page fetches)\n');
console.log('| file | raw | gzip -9 |');
console.log('|---|---:|---:|');
const core = ['lib/perfcard_wasm.wasm', 'lib/perfcard_wasm.js', 'lib/perfcard.js'];
const page = readdirSync(dist).filter((f) => /\.(html|js|css|svg)$/.test(f) && f !== 'accuracy.html');
let coreTotal = { raw: 0, gzip: 0 };
let pageTotal = { raw: 0, gzip: 0 };
for (const f of core) {
  const s = size(join(dist, f));
  coreTotal = { raw: coreTotal.raw + s.raw, gzip: coreTotal.gzip + s.gzip };
  console.log(`| ${f} | ${kib(s.raw)} | ${kib(s.gzip)} |`);
}
console.log(`| **wasm + JS API** | **${kib(coreTotal.raw)}** | **${kib(coreTotal.gzip)}** |`);
for (const f of page) {
  const s = size(join(dist, f));
  pageTotal = { raw: pageTotal.raw + s.raw, gzip: pageTotal.gzip + s.gzip };
}
console.log(`| page + widget (${page.length} files: html, js, css, svg) | ${kib(pageTotal.raw)} | ${kib(pageTotal.gzip)} |`);
console.log(`| **everything the page loads** | **${kib(coreTotal.raw + pageTotal.raw)}** | **${kib(coreTotal.gzip + pageTotal.gzip)}** |`);
for (const f of ['lib/perfcard_learned.wasm', 'lib/perfcard_learned.js']) {
  const s = size(join(dist, f));
  console.log(`| ${f} (with the first learned predictor's file) | ${kib(s.raw)} | ${kib(s.gzip)} |`);
}
let weights = { raw: 0, gzip: 0 };
// As the module embeds them: the catalog and the roofline constants without the texts the core never shows
// (cmake/PageData.mjs writes them into the wasm build), the carbon regions as committed.
const pageData = (f) => [join(root, 'build', 'wasm', 'core', 'page_data', f), join(root, 'weights', f)].find((p) => existsSync(p));
for (const f of ['devices.json', 'carbon_regions.json', 'roofline.json']) {
  const s = size(pageData(f));
  weights = { raw: weights.raw + s.raw, gzip: weights.gzip + s.gzip };
}
console.log(`| of which data embedded in the wasm (devices.json, carbon_regions.json, roofline.json as the module holds them) | ${kib(weights.raw)} | ${kib(weights.gzip)} |`);
const examples = JSON.parse(readFileSync(join(dist, 'examples', 'index.json'), 'utf8'));
for (const ex of examples) console.log(`| examples/${ex.file} (fetched when picked) | ${kib(ex.bytes)} | ${kib(size(join(dist, 'examples', ex.file)).gzip)} |`);

// ---- node --------------------------------------------------------------------------------------------
console.log('\n## node (the wasm module, no browser)\n');
const api = await import(pathToFileURL(join(dist, 'lib', 'perfcard.js')).href);
console.log('| example | first prediction (fresh instance: compile + open + 16 GPUs at batch 1) | re-predict 16 GPUs x 8 batches: median wall | best wall | CPU per call | predictions |');
console.log('|---|---:|---:|---:|---:|---:|');
const nodeFigures = {};
for (const ex of examples) {
  const bytes = readFileSync(join(dist, 'examples', ex.file));
  const t0 = performance.now();
  const card = await api.createPerfCard({ wasmBinary: readFileSync(join(dist, 'lib', 'perfcard_wasm.wasm')) });
  const model = card.openModelSync(bytes);
  model.predict({ devices: 'all', batch: [1], dims: ex.dims });
  const first = performance.now() - t0;
  const options = { devices: 'all', batch: SWEEP, dims: ex.dims };
  for (let i = 0; i < 3; i++) model.predict(options);  // optimizing tiers
  const walls = [];
  const c0 = process.cpuUsage();
  let n = 0;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    n = model.predict(options).predictions.length;
    walls.push(performance.now() - t);
  }
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1000 / runs;
  nodeFigures[ex.name] = { first, median: median(walls), best: Math.min(...walls), cpu };
  console.log(`| ${ex.file} | ${f1(first)} ms | ${f1(median(walls))} ms | ${f1(Math.min(...walls))} ms | ${f1(cpu)} ms | ${n} |`);
  model.close();
}

// ---- browser -----------------------------------------------------------------------------------------
if (noBrowser) process.exit(0);
const { unavailable, serve, launch } = await import(pathToFileURL(join(root, 'tests', 'web', 'harness.mjs')).href);
const why = await unavailable();
if (why) {
  console.log(`\nbrowser figures skipped: ${why}`);
  process.exit(0);
}
const server = await serve();
const browser = await launch();
const profileProcs = () => {
  // Peak resident memory (VmHWM) of the Chromium processes of this profile: renderer, GPU, utility.
  let total = 0;
  let max = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('perfcard-chromium-')) continue;
      const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
      total += hwm;
      if (cmd.includes('--type=renderer')) max = Math.max(max, hwm);
    } catch { /* gone */ }
  }
  return { total, renderer: max };
};
console.log('\n## headless Chromium (Debian chromium, the page served on 127.0.0.1)\n');
console.log('| example | page loaded -> first table | -> all charts | of which: fetch + read + parse + analyze in the worker | re-predict after a setting change: 16 GPUs x 8 batches in the worker | table (16 GPUs; one row with its kernels) | setting change -> table drawn | round trip to a redrawn page | wasm memory | JS heap |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
try {
  for (const ex of examples) {
    const page = await browser.context.newPage();
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.goto(`${server.origin}/#example=${ex.name}`);
    await page.waitForFunction(() => window.__perfcard?.ready, null, { timeout: 300_000 });
    const load = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const t = window.__perfcard.timings[0];
      return { loadEnd: nav.loadEventEnd, readyAt: t.readyAt, tableAt: window.__perfcard.firstTableAt ?? t.readyAt, open: t.open };
    });
    // Setting changes: batch 1 -> 2 -> 4 ..., each re-predicting table + sweep in the worker.
    const sweeps = [];
    const tables = [];
    const trips = [];
    const drawnTables = [];
    for (let i = 0; i < Math.min(runs, 8); i++) {
      const b = String(2 + (i % 6));
      await page.fill('#batch', b);
      await page.waitForFunction((bb) => document.querySelector('#status').dataset.state === 'ready'
        && document.querySelector('#cli').textContent.includes(`--batch ${bb} `), b, { timeout: 120_000 });
      const last = await page.evaluate(() => window.__perfcard.last);
      sweeps.push(last.sweep);
      tables.push(last.table);
      trips.push(last.roundTrip);
      drawnTables.push(last.tableDrawn);
    }
    const metrics = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    const last = await page.evaluate(() => window.__perfcard.last);
    const first = load.tableAt - load.loadEnd;
    console.log(`| ${ex.file} | ${f1(first)} ms | ${f1(load.readyAt - load.loadEnd)} ms | ${f1(load.open.total)} ms | median ${f1(median(sweeps))} ms, best ${f1(Math.min(...sweeps))} ms | ${f1(median(tables))} ms | ${f1(median(drawnTables))} ms | ${f1(median(trips))} ms | ${(last.memoryBytes / 2 ** 20).toFixed(0)} MiB | ${(metrics.JSHeapUsedSize / 2 ** 20).toFixed(1)} MiB |`);
    await page.close();
  }
  // The learned predictors in the page's worker (issue 12's budgets): the first sweep after the model is
  // open (16 GPUs x 8 batches; every embedding computed: 8 batches, nothing cached) and the sweeps of
  // later setting changes (embeddings cached), each predictor chosen by the URL fragment as a user would.
  // The difference of a network's first sweep to the trees' first sweep, / 8, is what one embedding costs.
  console.log('\n| example, predictor (page worker, 16 GPUs x 8 batches) | first sweep after open | re-predicted sweep: median | best | per embedding over the trees |');
  console.log('|---|---:|---:|---:|---:|');
  for (const ex of examples.filter((e) => /resnet50|llama/.test(e.name))) {
    const firstOf = {};
    for (const predictor of ['trees', 'gnn', 'transformer', 'ensemble']) {
      const page = await browser.context.newPage();
      await page.goto(`${server.origin}/#example=${ex.name}&predictor=${predictor}`);
      await page.waitForFunction(() => window.__perfcard?.ready, null, { timeout: 300_000 });
      const first = await page.evaluate(() => window.__perfcard.last.sweep);
      const again = [];
      for (let i = 0; i < Math.min(runs, 6); i++) {
        const b = String(2 + (i % 6));
        await page.fill('#batch', b);
        await page.waitForFunction((bb) => document.querySelector('#status').dataset.state === 'ready'
          && document.querySelector('#cli').textContent.includes(`--batch ${bb} `), b, { timeout: 120_000 });
        again.push(await page.evaluate(() => window.__perfcard.last.sweep));
      }
      // Which predictors made the table's rows (a family the learned one has no held-out rows of is the roofline's).
      const used = await page.evaluate(() => [...new Set([...document.querySelectorAll('#table tbody td[data-key="predictor"]')].map((td) => td.dataset.value))]);
      firstOf[predictor] = first;
      const per = predictor === 'trees' ? '' : `${f1((first - firstOf.trees) / SWEEP.length)} ms`;
      console.log(`| ${ex.file}, ${predictor} (rows by ${used.join(', ') || '?'}) | ${f1(first)} ms | ${f1(median(again))} ms | ${f1(Math.min(...again))} ms | ${per} |`);
      await page.close();
    }
  }

  // The same worker code with the page idle: a second instance of the page's worker.js, driven as the page
  // drives it (open, then predict with the table and the sweep) from a page that draws nothing meanwhile.
  // Above, the sweep runs while the main thread draws the table, on this machine's 2 cores; here it says
  // what the predictors themselves cost in Chromium's worker.
  console.log('\n| example, predictor (a second page worker, the page idle; 16 GPUs x 8 batches) | re-predicted sweep: median | best |');
  console.log('|---|---:|---:|');
  for (const ex of examples.filter((e) => /resnet50|llama/.test(e.name))) {
    const page = await browser.context.newPage();
    await page.goto(`${server.origin}/`);
    await page.waitForFunction(() => window.__perfcard?.ready, null, { timeout: 300_000 });
    const sweeps = await page.evaluate(async ({ file, runs, batches }) => {
      const w = new Worker('./worker.js', { type: 'module' });
      let next = 0;
      const call = (msg) => new Promise((resolve, reject) => {
        const id = `bench-${++next}`;
        const on = ({ data }) => {
          if (data.id !== id || (data.type !== 'done' && data.type !== 'error')) return;
          w.removeEventListener('message', on);
          if (data.type === 'done') resolve(data.result);
          else reject(new Error(data.error.message));
        };
        w.addEventListener('message', on);
        w.postMessage({ ...msg, id });
      });
      try {
        const { catalog } = await call({ type: 'init' });
        const gpus = catalog.devices.filter((d) => d.kind === 'gpu' && d.default_view !== false).map((d) => d.id);
        await call({ type: 'open', url: `examples/${file}`, name: file });
        const out = {};
        for (const predictor of ['roofline', 'trees', 'gnn', 'transformer', 'ensemble']) {
          const table = { devices: gpus, batch: [1], predictor };
          out[predictor] = [];
          // The first call loads the predictor's files and embeds: not a re-prediction.
          for (let i = 0; i <= runs; i++) {
            const r = await call({ type: 'predict', table, sweep: { ...table, batch: batches } });
            if (i > 0) out[predictor].push(r.ms.sweep);
          }
        }
        return out;
      } finally {
        w.terminate();
      }
    }, { file: ex.file, runs, batches: SWEEP });
    for (const [predictor, t] of Object.entries(sweeps))
      console.log(`| ${ex.file}, ${predictor} | ${f1(median(t))} ms | ${f1(Math.min(...t))} ms |`);
    await page.close();
  }

  const procs = profileProcs();
  console.log(`\nChromium processes of the benchmark profile: peak resident ${(procs.total / 2 ** 20).toFixed(0)} MiB summed, largest renderer ${(procs.renderer / 2 ** 20).toFixed(0)} MiB`);

  if (existsSync(bigFile)) {
    const page = await browser.context.newPage();
    await page.goto(`${server.origin}/`);
    await page.waitForFunction(() => window.__perfcard?.ready, null, { timeout: 300_000 });
    await page.evaluate(() => {
      window.__stall = { max: 0, last: performance.now() };
      window.__stallTimer = setInterval(() => {
        const now = performance.now();
        window.__stall.max = Math.max(window.__stall.max, now - window.__stall.last);
        window.__stall.last = now;
      }, 20);
    });
    const t0 = Date.now();
    const name = bigFile.split('/').pop();
    await page.setInputFiles('#file', bigFile);
    await page.waitForFunction((n) => window.__perfcard.timings.some((t) => t.model === n), name, { timeout: 600_000 });
    const s = (Date.now() - t0) / 1000;
    const stall = await page.evaluate(() => { clearInterval(window.__stallTimer); return window.__stall.max; });
    const t = await page.evaluate((n) => window.__perfcard.timings.find((x) => x.model === n), name);
    const mem = await page.evaluate(() => window.__perfcard.last.memoryBytes);
    const procs2 = profileProcs();
    console.log(`\n${name} (${(statSync(bigFile).size / 2 ** 30).toFixed(2)} GiB) dropped on the page: first table after ${s.toFixed(1)} s ` +
      `(worker: read into wasm memory + parse ${(t.open.copyAndParse / 1000).toFixed(1)} s, analyze ${(t.open.analyze / 1000).toFixed(2)} s); ` +
      `longest main-thread stall ${stall.toFixed(0)} ms; wasm memory ${(mem / 2 ** 30).toFixed(2)} GiB; ` +
      `Chromium peak resident ${(procs2.total / 2 ** 30).toFixed(2)} GiB summed`);
    await page.close();
  } else {
    console.log(`\n(no ${bigFile}: scripts/fixtures/make_bench_models.py makes the 1 GB model)`);
  }
} finally {
  await browser.close();
  await server.stop();
}
console.log(`\nload average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
