// Browser tests of the page, the widget and the embed page: headless Debian Chromium driven by
// playwright-core, against dist/ served on 127.0.0.1 by scripts/serve.mjs. The table must equal the
// CLI's `perfcard predict --json` for the same model and options; every request must be to the site's
// own origin; after load the page must keep working with the network cut. Screenshots land in
// build/screenshots/ for a reviewer.
//
//   node web/build.mjs && node --test tests/web/
//
// Skipped (with the reason) when Chromium, playwright-core or dist/ is missing; PERFCARD_CLI,
// PERFCARD_DIST and PERFCARD_CHROMIUM override where things are looked for.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { assertSameDoc } from '../wasm/same_doc.mjs';
import * as F from '../../web/format.js';
import { dist, guard, launch, root, serve, unavailable } from './harness.mjs';

const cli = resolve(process.env.PERFCARD_CLI ?? join(root, 'build', 'native', 'core', 'perfcard'));
const shots = join(root, 'build', 'screenshots');
const skip = (await unavailable()) ?? (existsSync(cli) ? false : `native CLI not built (${cli})`);
if (skip) console.log(`# browser tests skipped: ${skip}`);

const SLOW = 180_000;
const examplesJson = JSON.parse(readFileSync(join(root, 'web', 'examples.json'), 'utf8'));
let server;
let browser;
let net;

before(async () => {
  if (skip) return;
  mkdirSync(shots, { recursive: true });
  server = await serve();
  browser = await launch();
  net = await guard(browser.context, server.origin);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

function runCli(file, args) {
  const r = spawnSync(cli, ['predict', file, '--json', ...args], { encoding: 'utf8', maxBuffer: 256 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const cli0 = () => cli;

function cliError(file) {
  const r = spawnSync(cli, ['predict', file, '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  return r.stderr.trim().replace(/^perfcard: error: /, '');
}

async function newPage() {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.errors = errors;
  return page;
}

async function ready(page, label) {
  await page.waitForFunction((name) => {
    const s = document.querySelector('#status');
    const m = document.querySelector('#model-info .model-name strong');
    return s?.dataset.state === 'ready' && (!name || m?.textContent === name);
  }, label, { timeout: SLOW });
}

async function tableRows(page) {
  return page.$$eval('#table tbody tr', (rows) => rows.map((tr) => ({
    device: tr.dataset.device,
    batch: Number(tr.dataset.batch),
    cells: Object.fromEntries([...tr.querySelectorAll('[data-key]')].map((c) => [c.dataset.key, c.dataset.value])),
  })));
}

// Every figure of the table, to full precision, against the CLI's document.
function assertTableEquals(rows, doc) {
  assert.equal(rows.length, doc.predictions.length, 'one table row per CLI prediction');
  const byDevice = new Map(rows.map((r) => [r.device, r]));
  for (const p of doc.predictions) {
    const r = byDevice.get(p.device);
    assert.ok(r, `row for ${p.device}`);
    assert.equal(r.batch, p.batch);
    const s = (v) => (v === null ? 'null' : String(v));
    // Numbers to float rounding (the learned predictors' dense maths: tests/wasm/same_doc.mjs).
    const num = (cell, v, what) => assertSameDoc(cell === 'null' ? null : Number(cell), v, `${p.device} ${what}`);
    assert.equal(r.cells.precision, p.precision, `${p.device} precision`);
    num(r.cells.latency_ms, p.latency_ms, 'latency');
    num(r.cells.throughput_per_s, p.throughput_per_s, 'throughput');
    num(r.cells.peak_memory_mb, p.peak_memory_mb, 'memory');
    assert.equal(r.cells.fits, s(p.fits), `${p.device} fits`);
    num(r.cells.energy_j_per_sample, p.energy_j_per_sample, 'energy');
    num(r.cells.carbon_g_per_1000, p.carbon_g_per_1000, 'carbon');
    assert.equal(r.cells.mig, s(p.mig ? p.mig.recommended : null), `${p.device} MIG`);
  }
}

// Exports wait for the batch sweep, and a prediction queued behind the one that just finished disables them
// again until its own sweep is in: on a loaded machine `ready` alone can come a moment too early.
async function exportable(page, id) {
  await page.waitForFunction((sel) => !document.querySelector(sel).disabled && document.querySelector('#status').dataset.state === 'ready',
    `#${id}`, { timeout: SLOW });
}

async function exportJson(page) {
  await exportable(page, 'export-json');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  return JSON.parse(readFileSync(await download.path(), 'utf8'));
}

describe('the page', { skip, timeout: 20 * 60_000 }, () => {
  let page;

  test('loads with the default model preloaded, CSP in place, only same-origin requests', { timeout: SLOW }, async () => {
    page = await newPage();
    await page.goto(`${server.origin}/`);
    await ready(page, 'resnet50.onnx');
    const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'/);
    assert.doesNotMatch(csp, /unsafe-inline|\*/);
    const rows = await tableRows(page);
    assert.equal(rows.length, 16, 'every GPU by default');
    assertTableEquals(rows, runCli(join(root, 'public/examples/resnet50.onnx'), ['--device', 'all', '--batch', '1']));
    assert.match(await page.textContent('#cli'), /^perfcard predict public\/examples\/resnet50\.onnx --device all --batch 1 --json$/);
    await page.screenshot({ path: join(shots, 'page-desktop.png'), fullPage: true });
    assert.deepEqual(net.foreign, []);
    assert.deepEqual(page.errors, []);
  });

  test('host-bound rows are marked, with the device-busy time and CUDA graph replay beside eager', { timeout: SLOW }, async () => {
    const file = join(root, 'public/examples/resnet50.onnx');
    const eager = runCli(file, ['--device', 'all', '--batch', '1']);
    const replay = runCli(file, ['--device', 'all', '--batch', '1', '--runtime', 'pytorch-cuda-graphs', '--predictor', 'roofline']);
    const marks = Object.fromEntries(await page.$$eval('#table tbody tr', (rows) => rows.map((tr) => {
      const m = tr.querySelector('[data-key="latency_ms"] .hostbound');
      return [tr.dataset.device, m ? { text: m.textContent, busy: Number(m.dataset.busyMs) } : null];
    })));
    const rows = await tableRows(page);
    const replays = new Set();
    for (const p of eager.predictions) {
      assert.equal(marks[p.device] !== null, p.host_bound, `${p.device}: marked host-bound exactly when the CLI says so`);
      if (p.host_bound) {
        // The host time per kernel where the roofline made the row (a learned row corrects it: not shown).
        if (p.predictor.name === 'roofline') {
          assert.match(marks[p.device].text, /^host-bound: GPU busy [\d.]+ (µs|ms), idle \d+%, host [\d.]+ µs\/kernel$/);
          assert.ok(marks[p.device].text.endsWith(`host ${F.sig(p.host_us_per_kernel)} µs/kernel`), `${p.device}: the host time it assumed`);
        } else {
          assert.match(marks[p.device].text, /^host-bound: GPU busy [\d.]+ (µs|ms), idle \d+%$/);
        }
        assertSameDoc(marks[p.device].busy, p.device_busy_ms, `${p.device} device busy`);
      }
      const cell = rows.find((r) => r.device === p.device).cells.replay_ms;
      const want = replay.predictions.find((x) => x.device === p.device).latency_ms;
      assertSameDoc(Number(cell), want, `${p.device} CUDA graphs`);
      replays.add(Number(cell).toPrecision(3));
    }
    // Eager at batch 1 is the dispatch floor on every GPU; the replay column tells them apart.
    assert.ok(eager.predictions.filter((p) => p.host_bound).length >= 12, 'ResNet-50 at batch 1 is host-bound on most GPUs');
    assert.ok(replays.size >= 12, `graph replay differs across GPUs (${replays.size} distinct of 16)`);
    assert.match(await page.textContent('#table-note'), /runtime pytorch-eager/);
    assert.match(await page.textContent('#table-note'), /CUDA graphs: the same kernels replayed/);
    // The MIG card states what its total assumes, and what host-bound means for it.
    const mig = await page.textContent('#mig .mig-card[data-device="h100-sxm5-80gb"]');
    assert.match(mig, /assuming 7 processes, one per instance/);
    assert.match(mig, /needs 7 free host cores; with c of them, c instances give c × [\d.,]+\/s/);
    assert.match(mig, /with fewer than \d+, one process on the whole GPU \([\d.,]+\/s\) does as well or better/);
    // No target set: the profiles' target column says nothing rather than "met".
    assert.deepEqual([...new Set(await page.$$eval('#mig .mig-card[data-device="h100-sxm5-80gb"] tbody td:nth-of-type(3)', (td) => td.map((t) => t.textContent)))], ['–']);
    assert.deepEqual(page.errors, []);
  });

  test('pick an example, change settings: the table equals perfcard predict --json', { timeout: SLOW }, async () => {
    await page.click('button[data-example="bert_base"]');
    await ready(page, 'bert_base.onnx');
    assert.equal(await page.inputValue('input[data-dim="sequence"]'), '128', 'symbolic dims become fields');
    await page.fill('#batch', '8');
    await page.selectOption('#precision', 'bf16');
    await page.selectOption('#region', 'fr');
    await page.fill('#target', '5');
    await page.waitForFunction(() => document.querySelector('#cli').textContent.includes('--latency-target-ms 5'), null, { timeout: SLOW });
    await ready(page, 'bert_base.onnx');
    const file = join(root, 'public/examples/bert_base.onnx');
    const args = ['--device', 'all', '--batch', '8', '--precision', 'bf16', '--dim', 'sequence=128', '--region', 'fr', '--latency-target-ms', '5'];
    const doc = runCli(file, args);
    assertTableEquals(await tableRows(page), doc);
    const exported = await exportJson(page);
    assertSameDoc(exported.prediction, doc, 'exported JSON');
    assert.equal(exported.cli, `perfcard predict bert_base.onnx ${args.join(' ')} --json`);
    // The settings are in the fragment (never model bytes).
    const hash = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
    assert.equal(hash.get('example'), 'bert_base');
    assert.equal(hash.get('batch'), '8');
    assert.equal(hash.get('precision'), 'bf16');
    assert.equal(hash.get('dim.sequence'), '128');
    // CSV: a header and one line per device and batch (table batch + the sweep).
    await exportable(page, 'export-csv');
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    const csv = readFileSync(await dl.path(), 'utf8').trim().split('\n');
    assert.match(csv[0], /^device,device_name,batch,/);
    const runtimeAt = csv[0].split(',').indexOf('runtime');
    const byRuntime = (rt) => csv.slice(1).filter((l) => l.split(',')[runtimeAt] === rt).length;
    assert.equal(byRuntime('pytorch-eager'), 16 * 8, '16 devices x the 8 batch sizes of the sweep (which includes the table batch 8)');
    assert.equal(byRuntime('pytorch-cuda-graphs'), 16, 'and the CUDA graphs column at the table batch');
    assert.equal(csv.length - 1, 16 * 9);
    // The exported JSON carries the CUDA graphs column as its own command and document, equal to the CLI's.
    const replayArgs = exported.replay.cli.split(' ').slice(3, -1);
    assert.ok(exported.replay.cli.includes('--runtime pytorch-cuda-graphs --predictor roofline'), exported.replay.cli);
    assertSameDoc(exported.replay.prediction, runCli(file, replayArgs), 'exported CUDA graphs document');
    // The host's time per kernel: a field, in the command and the fragment, equal to the CLI's table; emptied
    // again, the fitted constant comes back.
    await page.fill('#host', '20');
    await page.waitForFunction(() => document.querySelector('#cli').textContent.includes('--host-us 20'), null, { timeout: SLOW });
    await ready(page, 'bert_base.onnx');
    assertTableEquals(await tableRows(page), runCli(file, [...args, '--host-us', '20']));
    assert.equal(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('host'), '20');
    await page.fill('#host', '');
    await page.waitForFunction(() => !document.querySelector('#cli').textContent.includes('--host-us'), null, { timeout: SLOW });
    await ready(page, 'bert_base.onnx');
    await page.screenshot({ path: join(shots, 'page-bert.png'), fullPage: false });
    assert.deepEqual(page.errors, []);
  });

  test('the memory protocol: inference, autograd on, a training step per optimizer, each equal to the CLI', { timeout: SLOW }, async () => {
    await ready(page, 'bert_base.onnx');  // as the test before left it: batch 8, bf16, fr, target 5 ms
    const file = join(root, 'public/examples/bert_base.onnx');
    assert.equal(await page.isHidden('#optimizer-label'), true, 'the optimizer is asked for training only');
    const memory = async () => Object.fromEntries((await tableRows(page)).map((r) => [r.device, Number(r.cells.peak_memory_mb)]));
    const seen = {};
    for (const [mode, optimizer] of [['inference-grad', null], ['training', 'adam'], ['training', 'sgd']]) {
      await page.selectOption('#mode', mode);
      if (optimizer) {
        assert.equal(await page.isHidden('#optimizer-label'), false);
        await page.selectOption('#optimizer', optimizer);
      }
      const flag = optimizer ? `--optimizer ${optimizer}` : `--mode ${mode}`;
      await page.waitForFunction((f) => document.querySelector('#cli').textContent.includes(f), flag, { timeout: SLOW });
      await ready(page, 'bert_base.onnx');
      const args = ['--device', 'all', '--batch', '8', '--precision', 'bf16', '--mode', mode, ...(optimizer ? ['--optimizer', optimizer] : []),
        '--dim', 'sequence=128', '--region', 'fr', '--latency-target-ms', '5'];
      const doc = runCli(file, args);
      assertTableEquals(await tableRows(page), doc);
      assert.equal(doc.predictions[0].memory_protocol, mode);
      const tip = await page.getAttribute('#table tbody tr .memtext', 'title');
      assert.match(tip, optimizer ? new RegExp(`^training step \\(${optimizer}\\): weights .* kept for the backward\\. Tensors allocated .*; the device reports .*$`) : /^inference-grad: weights .* kept for the backward\. Tensors allocated .*; the device reports .*$/);
      seen[optimizer ?? mode] = await memory();
    }
    const h100 = 'h100-sxm5-80gb';
    assert.ok(seen.sgd[h100] < seen.adam[h100] && seen['inference-grad'][h100] < seen.sgd[h100], JSON.stringify(seen));
    assert.equal(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('optimizer'), 'sgd');
    await page.selectOption('#mode', 'inference');
    await page.waitForFunction(() => !document.querySelector('#cli').textContent.includes('--mode'), null, { timeout: SLOW });
    await ready(page, 'bert_base.onnx');
    assert.equal(await page.isHidden('#optimizer-label'), true);
    assert.deepEqual(page.errors, []);
  });

  test('charts, per-layer breakdown, roofline and MIG view are drawn', { timeout: SLOW }, async () => {
    assert.ok(await page.$('#chart-throughput svg polyline'), 'throughput vs batch');
    assert.ok(await page.$$eval('#chart-memory svg line[stroke-dasharray]', (l) => l.length) > 0, 'capacity lines');
    assert.ok(await page.$$eval('#chart-optypes svg rect', (r) => r.length) >= 3, 'op-type bars');
    assert.ok(await page.$$eval('#chart-roofline svg circle', (c) => c.length) > 10, 'kernels on the roofline');
    assert.ok(await page.$$eval('#mig .mig-card', (c) => c.length) >= 5, 'MIG cards');
    // 16 GPUs, 16 looks: colour and dash in the legend and the charts' lines, the same as the table's swatches.
    const looks = await page.$$eval('#legend li .swatch', (sw) => sw.map((e) => `${e.dataset.color} ${e.classList.contains('dashed')}`));
    assert.equal(looks.length, 16);
    assert.equal(new Set(looks).size, 16, looks.join('; '));
    const lines = await page.$$eval('#chart-throughput svg g.series polyline', (ps) => ps.map((p) => `${p.getAttribute('stroke')} ${p.getAttribute('stroke-dasharray') !== null}`));
    assert.deepEqual(lines, looks);
    // Small chart text meets 4.5:1 against the white chart background.
    const contrast = await page.$$eval('svg.chart text', (ts) => {
      const lum = (c) => {
        const [r, g, b] = c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      return ts.filter((t) => parseFloat(getComputedStyle(t).fontSize) <= 12 && !t.classList.contains('mig-label'))
        .map((t) => ({ text: t.textContent, ratio: 1.05 / (lum(getComputedStyle(t).fill) + 0.05) }));
    });
    assert.ok(contrast.length > 20);
    const low = contrast.filter((c) => c.ratio < 4.5);
    assert.deepEqual(low, [], 'small chart labels below 4.5:1');
    // The MIG instances' labels sit on their slot's fill, not on white.
    const migLabels = await page.$$eval('svg.chart .mig-label', (ts) => ts.map((t) => {
      const lum = (c) => {
        const v = c.startsWith('#') ? [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)) : c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
        const [r, g, b] = v.map((x) => x / 255).map((x) => (x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4));
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      const [a, b] = [lum(getComputedStyle(t).fill), lum(t.previousElementSibling.getAttribute('fill'))];
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    }));
    assert.ok(migLabels.length > 0 && migLabels.every((r) => r >= 4.5), `MIG labels: ${migLabels.map((r) => r.toFixed(2))}`);
    // The table carries one row's kernels (the worker's predict); L4's are asked for when it is chosen.
    await page.selectOption('#focus', 'l4');
    await page.waitForFunction(() => /NVIDIA L4/.test(document.querySelector('#breakdown-note').textContent), null, { timeout: SLOW });
    assert.ok(await page.$$eval('#chart-roofline svg circle', (c) => c.length) > 10, "L4's kernels on the roofline");
    assert.equal(await page.$$eval('#table tbody tr', (rows) => rows.length), 16);
    const prov = await page.textContent('#provenance');
    assert.match(prov, /roofline-\d/);
    assert.match(prov, /held-out/i);
    // The eager floor's check against public small-batch measurements (docs/eager-floor.json), as figures.
    const floor = JSON.parse(readFileSync(join(root, 'docs', 'eager-floor.json'), 'utf8'));
    await page.waitForSelector('#eager-floor tbody tr', { timeout: SLOW });
    const shown = await page.$$eval('#eager-floor tbody tr', (rows) => rows.map((tr) => [tr.dataset.source, tr.textContent]));
    assert.equal(shown.length, floor.checks.filter((c) => c.rows > 0).length);
    const help = floor.checks.find((c) => c.source === 'help_gpu');
    const helpRow = shown.find(([src]) => src === 'help_gpu')[1];
    assert.ok(helpRow.includes(`${(help.roofline_mape * 100).toFixed(1)}%`), helpRow);
    assert.ok(helpRow.includes(`${(help.auto_heldout_mape * 100).toFixed(1)}% (${help.auto_heldout_rows})`), helpRow);
    const res = await page.request.get(`${server.origin}/accuracy.html`);
    assert.equal(res.status(), 200);
    assert.match(await res.text(), /Accuracy of the roofline predictor/);
  });

  test('keyboard: sort by a column from the keyboard', { timeout: SLOW }, async () => {
    await page.focus('button[data-sort="throughput_per_s"]');
    await page.keyboard.press('Enter');
    assert.equal(await page.getAttribute('th[data-key="throughput_per_s"]', 'aria-sort'), 'descending');
    const tp = (await tableRows(page)).map((r) => Number(r.cells.throughput_per_s));
    assert.deepEqual(tp, [...tp].sort((a, b) => b - a));
    await page.keyboard.press('Enter');
    assert.equal(await page.getAttribute('th[data-key="throughput_per_s"]', 'aria-sort'), 'ascending');
  });

  test('All CPUs: energy and carbon on every CPU the catalog gives TDP and idle power, the CLI\'s numbers', { timeout: SLOW }, async () => {
    const p = await newPage();
    await p.goto(`${server.origin}/#example=resnet50`);
    await ready(p, 'resnet50.onnx');
    await p.click('#devices-box summary');
    await p.click('button[data-pick="cpus"]');
    await p.waitForFunction(() => [...document.querySelectorAll('#table tbody tr')].every((tr) => tr.dataset.device.startsWith('cpu-')));
    await ready(p, 'resnet50.onnx');
    const rows = await tableRows(p);
    const cpus = JSON.parse(spawnSync(cli, ['devices', '--json'], { encoding: 'utf8' }).stdout).devices.filter((d) => d.kind === 'cpu');
    assert.equal(rows.length, cpus.length, 'one row per catalog CPU');
    assertTableEquals(rows, runCli(join(root, 'public/examples/resnet50.onnx'), ['--device', cpus.map((d) => d.id).join(','), '--batch', '1']));
    for (const d of cpus) {
      const r = rows.find((x) => x.device === d.id);
      const powered = d.tdp_w !== null && d.idle_w !== null;
      assert.equal(r.cells.energy_j_per_sample !== 'null', powered, `${d.id}: energy shown exactly when TDP and idle power are known`);
      assert.equal(r.cells.carbon_g_per_1000 !== 'null', powered, `${d.id}: carbon likewise`);
      // The energy cell says where the power figures come from, as the catalog has them.
      const tip = await p.getAttribute(`#table tbody tr[data-device="${d.id}"] td[data-key="energy_j_per_sample"] span`, 'title');
      if (powered) {
        assert.ok(d.power_sources.tdp_w && tip.includes(d.power_sources.tdp_w), `${d.id}: TDP source in ${tip}`);
        assert.ok(d.power_sources.idle_w && tip.includes(d.power_sources.idle_w), `${d.id}: idle source in ${tip}`);
      } else {
        assert.match(tip, /not in the catalog/);
      }
    }
    assert.ok(cpus.filter((d) => d.tdp_w !== null && d.idle_w !== null).length >= 8, 'the catalog CPUs have their power');
    await p.screenshot({ path: join(shots, 'page-cpus.png'), fullPage: false });
    assert.deepEqual(p.errors, []);
    await p.close();
  });

  test('Measure this device: a row for this machine with onnxruntime-web, equal to the CLI given the probe\'s entry', { timeout: SLOW }, async () => {
    const p = await newPage();
    await p.goto(`${server.origin}/#example=resnet50`);
    await ready(p, 'resnet50.onnx');
    assert.equal(await p.$('#table tbody tr[data-device="this-device"]'), null, 'no row before it is asked for');
    await p.click('#devices-box summary');
    await p.click('#probe-device');
    await p.waitForSelector('#table tbody tr[data-device="this-device"]', { timeout: SLOW });
    await ready(p, 'resnet50.onnx');
    const rows = await tableRows(p);
    assert.equal(rows.length, 17, 'the 16 GPUs and this device');
    const exported = await exportJson(p);
    const here = exported.this_device;
    assert.ok(here.probe.gemm_gflops > 0 && here.probe.stream_gbs > 0, 'the probe measured rates');
    assert.equal(here.device.arch, 'browser');
    assert.equal(exported.prediction.predictions.length, 16, 'the catalog table stays the CLI\'s document');
    // The CLI, given the same entry, predicts the same row, with the table's predictor (auto: the learned
    // correction where one trained on onnxruntime-web beats the roofline's browser family).
    const entry = join(shots, 'this-device.json');
    writeFileSync(entry, JSON.stringify([here.device]));
    const doc = runCli(join(root, 'public/examples/resnet50.onnx'),
      ['--extra-devices', entry, '--device', 'this-device', '--cpu-runtime', 'onnxruntime-web', '--threads', '1', '--batch', '1']);
    assertSameDoc(here.prediction, doc, 'this device\'s document');
    assertTableEquals(rows.filter((r) => r.device === 'this-device'), doc);
    assert.match(await p.textContent('#table tbody tr[data-device="this-device"] th small.id'), /measured here: .* GFLOP\/s/);
    await p.locator('#table tbody tr[data-device="this-device"]').scrollIntoViewIfNeeded();
    await p.screenshot({ path: join(shots, 'page-this-device.png'), fullPage: false });
    // Its kernels in the breakdown, on its own measured roofs.
    await p.selectOption('#focus', 'this-device');
    await p.waitForFunction(() => /onnxruntime-web/.test(document.querySelector('#breakdown-note').textContent), null, { timeout: SLOW });
    assert.ok(await p.$$eval('#chart-roofline svg circle', (c) => c.length) > 10, 'this device\'s kernels on its roofline');
    // A reload keeps this visit's measurement (the tab's storage), without measuring again.
    const cell = async () => p.$eval('#table tbody tr[data-device="this-device"] td[data-key="latency_ms"]', (td) => td.dataset.value);
    const before = await cell();
    await p.reload();
    await ready(p, 'resnet50.onnx');
    await p.waitForSelector('#table tbody tr[data-device="this-device"]', { timeout: SLOW });
    assert.equal(await cell(), before, 'the same rates, so the same row');
    assert.equal(await p.textContent('#probe-device'), 'Measure this device again');
    assert.deepEqual(p.errors, []);
    await p.close();
  });

  test('drop a file', { timeout: SLOW }, async () => {
    const file = join(root, 'tests/data/models/tiny_conv.onnx');
    const b64 = readFileSync(file).toString('base64');
    const dt = await page.evaluateHandle((data) => {
      const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
      const t = new DataTransfer();
      t.items.add(new File([bytes], 'tiny_conv.onnx'));
      return t;
    }, b64);
    await page.dispatchEvent('#drop', 'drop', { dataTransfer: dt });
    await ready(page, 'tiny_conv.onnx');
    const hash = await page.evaluate(() => location.hash);
    assert.doesNotMatch(hash, /example=|tiny_conv/, 'a local file is not part of the link');
    assertTableEquals(await tableRows(page), runCli(file, ['--device', 'all', '--batch', '8', '--precision', 'bf16', '--region', 'fr', '--latency-target-ms', '5']));
  });

  test('a bad file shows a clear error and the page keeps working', { timeout: SLOW }, async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    await page.setInputFiles('#file', { name: 'holiday.onnx', mimeType: 'application/octet-stream', buffer: png });
    await page.waitForSelector('#error:not([hidden])', { timeout: SLOW });
    const message = await page.textContent('#error');
    const tmp = join(mkdtempSync(join(tmpdir(), 'perfcard-web-')), 'holiday.onnx');
    writeFileSync(tmp, png);
    assert.equal(message, `Could not open holiday.onnx: ${cliError(tmp)}`);
    await page.screenshot({ path: join(shots, 'page-error.png') });
    assert.equal(await page.getAttribute('#status', 'data-state'), 'ready', 'the previous model is still shown');
    // Truncated model.
    const half = readFileSync(join(root, 'public/examples/resnet50.onnx')).subarray(0, 9000);
    await page.setInputFiles('#file', { name: 'half.onnx', mimeType: 'application/octet-stream', buffer: half });
    await page.waitForFunction(() => document.querySelector('#error').textContent.startsWith('Could not open half.onnx:'), null, { timeout: SLOW });
    // And it still works.
    await page.click('button[data-example="resnet50"]');
    await ready(page, 'resnet50.onnx');
    assert.equal(await page.isHidden('#error'), true);
    assert.equal((await tableRows(page)).length, 16);
  });

  test('after load, the page works with the network cut', { timeout: SLOW }, async () => {
    net.offline(true);
    await browser.context.setOffline(true);
    try {
      await page.fill('#batch', '32');
      await page.waitForFunction(() => document.querySelector('#cli').textContent.includes('--batch 32'), null, { timeout: SLOW });
      await ready(page, 'resnet50.onnx');
      const rows = await tableRows(page);
      assert.ok(rows.length > 0 && rows.every((r) => r.batch === 32));
      const file = join(root, 'tests/data/models/tiny_conv.onnx');
      await page.setInputFiles('#file', file);
      await ready(page, 'tiny_conv.onnx');
      assert.deepEqual(net.requestsWhileOffline, [], 'no request while offline');
    } finally {
      await browser.context.setOffline(false);
      net.offline(false);
    }
    assert.deepEqual(net.foreign, [], 'no request outside the site, ever');
  });

  test('an invalid batch is explained by its field; the table keeps the last settings that predicted', { timeout: SLOW }, async () => {
    const p = await newPage();
    await p.goto(`${server.origin}/#example=resnet50&batch=2&devices=l4,t4`);
    await ready(p, 'resnet50.onnx');
    const before = await tableRows(p);
    for (const bad of ['0', '-3', '2.5', '99999999']) {
      await p.fill('#batch', bad);
      await p.waitForFunction(() => document.querySelector('#batch-error')?.textContent.includes('a whole number from 1 to 16,777,216'),
        null, { timeout: SLOW });
      assert.equal(await p.getAttribute('#batch', 'aria-invalid'), 'true', bad);
      assert.equal(await p.getAttribute('#batch', 'aria-describedby'), 'batch-error');
      assert.match(await p.textContent('#batch-error'), /The table still shows the last settings that could be predicted\./);
      assert.ok(await p.$eval('#export-json', (b) => b.disabled) && await p.$eval('#export-csv', (b) => b.disabled), `${bad}: nothing exported under it`);
    }
    assert.deepEqual(await tableRows(p), before, 'nothing was predicted from an invalid batch');
    assert.ok(before.every((r) => r.batch === 2));
    await p.fill('#batch', '4');
    await p.waitForFunction(() => document.querySelector('#batch-error')?.textContent === '', null, { timeout: SLOW });
    await p.waitForFunction(() => [...document.querySelectorAll('#table tbody tr')].every((tr) => tr.dataset.batch === '4'),
      null, { timeout: SLOW });
    await exportable(p, 'export-csv');
    assert.deepEqual(p.errors, []);
    await p.close();
  });

  test('a dim the model cannot take is explained by its field; the table greys, then clears for another model', { timeout: SLOW }, async () => {
    const p = await newPage();
    await p.goto(`${server.origin}/#example=bert_base&devices=l4,t4`);
    await ready(p, 'bert_base.onnx');
    await p.fill('input[data-dim="sequence"]', '8192');
    await p.waitForFunction(() => document.querySelector('#status').dataset.state === 'error', null, { timeout: SLOW });
    const note = await p.textContent('#dim-sequence-limit');
    assert.match(note, /^dim 'sequence' = 8192 exceeds the 512 the graph fixes here .*the model takes 'sequence' up to 512 \(node '\/Add', Add\)$/);
    const cli = spawnSync(cli0(), ['predict', join(root, 'public/examples/bert_base.onnx'), '--dim', 'sequence=8192'], { encoding: 'utf8' });
    assert.ok(cli.stderr.includes("the model takes 'sequence' up to 512 [node '/Add' (Add)"), cli.stderr);
    assert.ok(await p.$eval('#results', (e) => e.classList.contains('stale')), 'the table is greyed');
    assert.equal(await p.isDisabled('#export-json'), true);
    assert.equal(await p.isDisabled('#export-csv'), true);
    assert.match(await p.textContent('#status'), /\(see the sequence field\)\. The greyed table is for the last settings that could/);
    assert.equal(await p.isHidden('#error'), true, 'said by the field, not a second time above');
    assert.ok((await tableRows(p)).every((r) => r.device === 'l4' || r.device === 't4'));
    await p.fill('input[data-dim="sequence"]', '256');
    await ready(p, 'bert_base.onnx');
    assert.equal(await p.$('#dim-sequence-limit'), null);
    assert.ok(!(await p.$eval('#results', (e) => e.classList.contains('stale'))));
    assert.equal(await p.isDisabled('#export-json'), false);
    // A link to another model with a setting that does not fit it: nothing of the model before stays.
    await p.evaluate(() => { location.hash = '#example=resnet50&devices=l4,t4'; });
    await ready(p, 'resnet50.onnx');
    assert.equal(await p.$('input[data-dim="sequence"]'), null, 'BERT\'s sequence is not a ResNet-50 setting');
    await p.evaluate(() => { location.hash = '#example=bert_base&devices=l4,t4&dim.sequence=9000'; });
    await p.waitForFunction(() => document.querySelector('#model-info .model-name strong')?.textContent === 'bert_base.onnx' &&
      document.querySelector('#status').dataset.state === 'error', null, { timeout: SLOW });
    assert.equal((await tableRows(p)).length, 0, 'ResNet-50\'s rows are not shown under BERT\'s name');
    assert.equal(await p.isDisabled('#export-json'), true);
    assert.match(await p.textContent('#status'), /^bert_base\.onnx could not be predicted with these settings/);
    assert.match(await p.textContent('#dim-sequence-limit'), /'sequence' = 9000 exceeds the 512/);
    // The example's own default when the link names none.
    await p.evaluate(() => { location.hash = '#example=resnet50&devices=l4,t4'; });
    await ready(p, 'resnet50.onnx');
    await p.evaluate(() => { location.hash = '#example=bert_base&devices=l4,t4'; });
    await ready(p, 'bert_base.onnx');
    assert.equal(await p.inputValue('input[data-dim="sequence"]'), '128');
    assert.deepEqual(p.errors, []);
    await p.close();
  });

  test('state in the URL fragment is restored', { timeout: SLOW }, async () => {
    const p = await newPage();
    await p.goto(`${server.origin}/#example=bert_base&batch=4&devices=l4,t4&precision=fp32&dim.sequence=64&sort=throughput_per_s&dir=desc`);
    await ready(p, 'bert_base.onnx');
    assert.equal(await p.inputValue('#batch'), '4');
    assert.equal(await p.inputValue('#precision'), 'fp32');
    assert.equal(await p.inputValue('input[data-dim="sequence"]'), '64');
    const rows = await tableRows(p);
    assert.deepEqual(rows.map((r) => r.device).sort(), ['l4', 't4']);
    assertTableEquals(rows, runCli(join(root, 'public/examples/bert_base.onnx'), ['--device', 'l4,t4', '--batch', '4', '--precision', 'fp32', '--dim', 'sequence=64']));
    await p.close();
  });

  test('a link to another model takes that model\'s dims, whatever field had focus; a link\'s dims fill their fields', { timeout: SLOW }, async () => {
    const p = await newPage();
    await p.goto(`${server.origin}/#example=bert_base&devices=l4`);
    await ready(p, 'bert_base.onnx');
    await p.fill('input[data-dim="sequence"]', '256');  // the field keeps the focus
    await p.waitForFunction(() => document.querySelector('#cli').textContent.includes('--dim sequence=256 '), null, { timeout: SLOW });
    await ready(p, 'bert_base.onnx');
    await p.evaluate(() => { location.hash = '#example=llama7b_decoder&devices=l4'; });
    await ready(p, 'llama7b_decoder.onnx');
    const llama = examplesJson.find((e) => e.name === 'llama7b_decoder').dims.sequence;
    assert.equal(await p.inputValue('input[data-dim="sequence"]'), String(llama));
    assert.match(await p.textContent('#cli'), new RegExp(`--dim sequence=${llama} `));
    assert.ok(!(await p.evaluate(() => location.hash)).includes('dim.sequence=256'));
    // The same model, a link naming its dim (and one it does not have): the field shows the link's value.
    await p.evaluate(() => { location.hash = '#example=llama7b_decoder&devices=l4&dim.sequence=256&dim.height=9'; });
    await p.waitForFunction(() => document.querySelector('#cli').textContent.includes('--dim sequence=256 '), null, { timeout: SLOW });
    await ready(p, 'llama7b_decoder.onnx');
    assert.equal(await p.inputValue('input[data-dim="sequence"]'), '256');
    assert.equal(await p.$$eval('#dims input', (i) => i.length), 1);
    assertTableEquals(await tableRows(p), runCli(join(root, 'public/examples/llama7b_decoder.onnx'), ['--device', 'l4', '--batch', '1', '--dim', 'sequence=256']));
    // A picked example is a step in the history: Back opens the model before, at its settings.
    await p.click('button[data-example="resnet50"]');
    await ready(p, 'resnet50.onnx');
    await p.goBack();
    await ready(p, 'llama7b_decoder.onnx');
    assert.equal(await p.inputValue('input[data-dim="sequence"]'), '256');
    assert.deepEqual(p.errors, []);
    await p.close();
  });

  test('works at phone width', { timeout: SLOW }, async () => {
    const p = await newPage();
    await p.setViewportSize({ width: 390, height: 844 });
    await p.goto(`${server.origin}/#example=llama7b_decoder&devices=h100-sxm5-80gb,a100-sxm4-80gb,l4`);
    await ready(p, 'llama7b_decoder.onnx');
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
    await p.screenshot({ path: join(shots, 'page-phone.png'), fullPage: true });
    assert.deepEqual(p.errors, []);
    await p.close();
  });

  test('the first prediction is on the first screen at 1400x900 and 390x844; on a phone the device column stays put', { timeout: SLOW }, async () => {
    for (const [width, height] of [[1400, 900], [390, 844]]) {
      const p = await newPage();
      await p.setViewportSize({ width, height });
      await p.goto(`${server.origin}/`);
      await ready(p, 'resnet50.onnx');
      const [top, bottom] = await p.$eval('#table tbody tr', (tr) => { const r = tr.getBoundingClientRect(); return [r.top, r.bottom]; });
      assert.ok(top >= 0 && bottom <= height, `${width}x${height}: the first row spans ${top}..${bottom} px`);
      // Its latency in view too, not only the device's name (host-bound notes wrap instead of widening it).
      const lat = await p.$eval('#table tbody tr [data-key="latency_ms"]', (td) => { const r = td.getBoundingClientRect(); return [r.left, r.right]; });
      assert.ok(lat[0] >= 0 && lat[1] <= width, `${width}x${height}: the first row's latency spans ${lat[0]}..${lat[1]} px`);
      if (width >= 1400) {
        const clip = await p.$eval('.results .table-wrap', (w) => w.scrollWidth - w.clientWidth);
        assert.ok(clip <= 1, `1400 px: the table is ${clip} px wider than its box (the last columns off screen)`);
      }
      await p.screenshot({ path: join(shots, `page-first-screen-${width}x${height}.png`) });
      if (width < 760) {
        assert.equal(await p.$eval('#settings-box', (d) => d.open), false, 'the settings start closed on a phone');
        assert.match(await p.textContent('#settings-summary'), /^batch 1 · .* · predictor auto · all 16 GPUs$/);
        const left = () => p.$eval('#table tbody th', (th) => th.getBoundingClientRect().left);
        const before = await left();
        const moved = await p.$eval('.results .table-wrap', (w) => { w.scrollLeft = 300; return w.scrollLeft; });
        assert.ok(moved > 100, 'the table scrolls sideways');
        assert.ok(Math.abs((await left()) - before) < 1, 'the device column stays where it was');
      }
      assert.deepEqual(p.errors, []);
      await p.close();
    }
  });

  test('a 1 GB file does not freeze the page', { timeout: 10 * 60_000 }, async (t) => {
    const big = join(root, 'build', 'bench-models', 'mlp_1gb.onnx');
    if (!existsSync(big)) return t.skip('no build/bench-models/mlp_1gb.onnx (scripts/fixtures/make_bench_models.py makes it)');
    const p = await newPage();
    await p.goto(`${server.origin}/`);
    await ready(p, 'resnet50.onnx');
    // The main thread's longest stall while the worker reads and parses the file.
    await p.evaluate(() => {
      window.__stall = { max: 0, last: performance.now(), progress: 0 };
      window.__stallTimer = setInterval(() => {
        const now = performance.now();
        window.__stall.max = Math.max(window.__stall.max, now - window.__stall.last);
        window.__stall.last = now;
        if (!document.querySelector('#progress').hidden) window.__stall.progress++;
      }, 20);
    });
    const t0 = Date.now();
    await p.setInputFiles('#file', big);
    await ready(p, 'mlp_1gb.onnx');
    const seconds = (Date.now() - t0) / 1000;
    const stall = await p.evaluate(() => { clearInterval(window.__stallTimer); return window.__stall; });
    console.log(`# 1 GB file: ${seconds.toFixed(1)} s to the first prediction, longest main-thread stall ${stall.max.toFixed(0)} ms, ${stall.progress} ticks with progress shown (${(statSync(big).size / 2 ** 30).toFixed(2)} GiB)`);
    assert.ok(stall.progress > 0, 'progress was shown');
    assert.ok(stall.max < 1000, `the main thread stalled for ${stall.max} ms`);
    await p.close();
  });
});

describe('the widget and the embed page', { skip, timeout: 10 * 60_000 }, () => {
  test('<perf-card> renders the same numbers as the CLI', { timeout: SLOW }, async () => {
    const page = await newPage();
    await page.goto(`${server.origin}/widget.html`);
    await page.waitForSelector('#w-resnet[data-state=ready]', { timeout: SLOW });
    await page.waitForSelector('#w-bert[data-state=ready]', { timeout: SLOW });
    const doc = runCli(join(root, 'public/examples/resnet50.onnx'), ['--device', 'h100-sxm5-80gb,l4', '--batch', '1,8']);
    const got = await page.$eval('#w-resnet', (el) => el.prediction);
    assertSameDoc(got, doc, 'widget');
    const rows = await page.$$eval('#w-resnet', (els) => [...els[0].shadowRoot.querySelectorAll('tbody tr')].map((tr) => [tr.dataset.device, tr.dataset.batch, tr.querySelector('td[data-value]').dataset.value]));
    assert.deepEqual(rows, got.predictions.map((p) => [p.device, String(p.batch), String(p.latency_ms)]));
    const bert = await page.$eval('#w-bert', (el) => el.prediction);
    assertSameDoc(bert, runCli(join(root, 'public/examples/bert_base.onnx'), ['--device', 'a100-sxm4-80gb,l4,t4', '--batch', '8', '--dim', 'sequence=128', '--region', 'fr']));
    await page.locator('#w-resnet').screenshot({ path: join(shots, 'widget.png') });
    await page.locator('#w-bert').screenshot({ path: join(shots, 'widget-bert.png') });
    // The iframe embed.
    const frame = page.frameLocator('#embed');
    await frame.locator('perf-card[data-state=ready]').waitFor({ timeout: SLOW });
    // At the documented 240 px the card's footer (what predicted it, the carbon region) stays in view.
    const fit = await frame.locator('perf-card').evaluate((el) => {
      const f = el.shadowRoot.querySelector('footer').getBoundingClientRect();
      return { bottom: f.bottom, height: f.height, viewport: window.innerHeight };
    });
    assert.equal(fit.viewport, 240 - 2, 'the iframe is 240 px tall (less its border)');
    assert.ok(fit.height > 0 && fit.bottom <= fit.viewport, `footer ends at ${fit.bottom} of ${fit.viewport} px`);
    await page.locator('#embed').screenshot({ path: join(shots, 'embed.png') });
    assert.deepEqual(page.errors, []);
    assert.deepEqual(net.foreign, []);
    await page.close();
    // A narrow embed (360 x 240, a phone's column): the latency stays beside the device, not off to the right.
    const narrow = await newPage();
    await narrow.setViewportSize({ width: 360, height: 240 });
    await narrow.goto(`${server.origin}/embed.html#src=examples/resnet50.onnx&devices=h100-sxm5-80gb,l4&batch=1,8`);
    await narrow.waitForSelector('perf-card[data-state=ready]', { timeout: SLOW });
    const right = await narrow.$eval('perf-card', (el) => Math.max(...[...el.shadowRoot.querySelectorAll('tbody td[data-value]')]
      .map((td) => td.getBoundingClientRect().right)));
    assert.ok(right <= 360, `the first figures end at ${right} px of 360`);
    await narrow.screenshot({ path: join(shots, 'embed-narrow.png') });
    await narrow.close();
  });

  test('a widget with a bad src says so', { timeout: SLOW }, async () => {
    const page = await newPage();
    await page.goto(`${server.origin}/embed.html#src=examples/missing.onnx`);
    await page.waitForSelector('perf-card[data-state=error]', { timeout: SLOW });
    const text = await page.$eval('perf-card', (el) => el.shadowRoot.textContent);
    assert.match(text, /cannot load missing\.onnx: HTTP 404/);
    await page.close();
  });
});

describe('perfcard card', { skip, timeout: SLOW }, () => {
  test('the SVG card renders and carries the CLI numbers', { timeout: SLOW }, async () => {
    const out = join(shots, 'card.svg');
    const r = spawnSync(cli, ['card', join(root, 'public/examples/resnet50.onnx'), '--device', 'h100-sxm5-80gb,a100-sxm4-80gb,l4,t4', '--batch', '1,8', '--title', 'ResNet-50', '--out', out], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const svgText = readFileSync(out, 'utf8');
    assert.match(svgText, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.doesNotMatch(svgText, /<script|href=/i, 'static: no scripts, no links');
    const page = await newPage();
    await page.setContent(`<!doctype html><body style="margin:0;background:#f6f7f9">${svgText}</body>`);
    const box = await page.$eval('svg', (s) => { const b = s.getBoundingClientRect(); return { w: b.width, h: b.height }; });
    assert.ok(box.w > 300 && box.h > 100);
    await page.locator('svg').screenshot({ path: join(shots, 'card.png') });
    await page.close();
  });
});

// "Offline demos at conferences": one visit, then no server at all (the browser's offline switch does not
// cover the service worker's fetches, so the server is stopped). Its own browser profile and server.
describe('offline after one visit', { skip, timeout: 10 * 60_000 }, () => {
  test('visit, stop the server, reload: the page, an example and a local file work', { timeout: 5 * 60_000 }, async () => {
    const site = await serve();
    let served = true;
    const own = await launch();
    try {
      const page = await own.context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${site.origin}/`);
      await ready(page, 'resnet50.onnx');
      const info = JSON.parse(readFileSync(join(dist, 'build-info.json'), 'utf8'));
      assert.match(info.version, /^[0-9a-f]{16}$/);
      // The service worker controls the page once the whole site is in its cache, named by the build's version.
      let cached = 0;
      for (let i = 0; i < 600 && cached < info.offline.files; i++) {
        cached = await page.evaluate(async (v) => {
          if (!navigator.serviceWorker.controller || !(await caches.has(`perfcard-${v}`))) return 0;
          return (await (await caches.open(`perfcard-${v}`)).keys()).length;
        }, info.version);
        if (cached < info.offline.files) await page.waitForTimeout(200);
      }
      assert.equal(cached, info.offline.files, 'every file of the site cached under this build\'s version');
      await site.stop();
      served = false;
      await page.reload();
      await ready(page, 'resnet50.onnx');
      assert.equal((await tableRows(page)).length, 16);
      await page.click('button[data-example="bert_base"]');
      await ready(page, 'bert_base.onnx');
      assertTableEquals(await tableRows(page), runCli(join(root, 'public/examples/bert_base.onnx'), ['--device', 'all', '--batch', '1', '--dim', 'sequence=128']));
      const local = join(root, 'tests/data/models/tiny_conv.onnx');
      await page.setInputFiles('#file', { name: 'tiny_conv.onnx', mimeType: 'application/octet-stream', buffer: readFileSync(local) });
      await ready(page, 'tiny_conv.onnx');
      assertTableEquals(await tableRows(page), runCli(local, ['--device', 'all', '--batch', '1']));
      // A learned predictor's file comes from the cache as well (it is fetched on first use).
      await page.selectOption('#predictor', 'ensemble');
      await page.waitForFunction(() => document.querySelector('#cli').textContent.includes('--predictor ensemble'), null, { timeout: SLOW });
      await ready(page, 'tiny_conv.onnx');
      assert.doesNotMatch(await page.textContent('#warnings'), /could not be loaded/);
      await page.screenshot({ path: join(shots, 'page-offline.png') });
      assert.deepEqual(errors, []);
    } finally {
      await own.close();
      if (served) await site.stop();
    }
  });

  test('a new build installs beside the one serving the page, which offers a reload into it', { timeout: 5 * 60_000 }, async () => {
    // Two builds of one site: this one, and a copy whose sw.js carries another version (what any change
    // of the site's files gives), served in turn on the same origin.
    const info = JSON.parse(readFileSync(join(dist, 'build-info.json'), 'utf8'));
    const next = mkdtempSync(join(tmpdir(), 'perfcard-next-'));
    cpSync(dist, next, { recursive: true });
    const newer = 'f'.repeat(16) === info.version ? '0'.repeat(16) : 'f'.repeat(16);
    const sw = readFileSync(join(next, 'sw.js'), 'utf8');
    writeFileSync(join(next, 'sw.js'), sw.replace(`const VERSION = '${info.version}';`, `const VERSION = '${newer}';`));
    let site = await serve();
    const port = Number(new URL(site.origin).port);
    const own = await launch();
    try {
      const page = await own.context.newPage();
      await page.goto(`${site.origin}/`);
      await ready(page, 'resnet50.onnx');
      await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: SLOW });
      assert.equal(await page.isHidden('#update'), true, 'nothing to offer on the first visit');
      await site.stop();
      site = await serve(next, port);
      assert.equal(Number(new URL(site.origin).port), port, 'the same origin serves the next build');
      await page.reload();
      await ready(page, 'resnet50.onnx');
      await page.waitForSelector('#update:not([hidden])', { timeout: SLOW });
      const keysBefore = await page.evaluate(() => caches.keys());
      assert.deepEqual(keysBefore.sort(), [`perfcard-${info.version}`, `perfcard-${newer}`].sort(), 'both builds cached while the old one serves');
      await Promise.all([page.waitForEvent('load', { timeout: SLOW }), page.click('#update button')]);
      await ready(page, 'resnet50.onnx');
      assert.deepEqual(await page.evaluate(() => caches.keys()), [`perfcard-${newer}`], 'the old build\'s cache is gone');
      assert.equal(await page.isHidden('#update'), true);
    } finally {
      await own.close();
      await site.stop();
      rmSync(next, { recursive: true, force: true });
    }
  });
});
