// predict(), devices() and openModel() of the JS API (build/wasm/dist/perfcard.js) against the native CLI:
// the same prediction documents (deep equal with `perfcard predict --json`), the same error messages.
//
//   node --test tests/wasm/
//
// Needs the wasm build (scripts/build.sh); the comparisons with the CLI also need the native build and
// are skipped without it. PERFCARD_WASM_DIST and PERFCARD_CLI override where the two are looked for.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { assertSameDoc } from './same_doc.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = resolve(process.env.PERFCARD_WASM_DIST ?? join(root, 'build', 'wasm', 'dist'));
const cli = resolve(process.env.PERFCARD_CLI ?? join(root, 'build', 'native', 'core', 'perfcard'));
const haveCli = existsSync(cli);
const noCli = haveCli ? false : `native CLI not built (${cli})`;

const tinyPath = join(root, 'tests', 'data', 'models', 'tiny_conv.onnx');
const resnetPath = join(root, 'public', 'examples', 'resnet50.onnx');
const tiny = readFileSync(tinyPath);
const resnet = readFileSync(resnetPath);
// The learned predictors the CLI carries; the page fetches them, here they are loaded into the shared
// instance so that predict() and the CLI run the same predictors.
const treesPath = join(root, 'weights', 'trees.pcwt');
const trees = readFileSync(treesPath);
const gnnPath = join(root, 'weights', 'gnn.pcwt');
const transformerPath = join(root, 'weights', 'transformer.pcwt');
const ensemblePath = join(root, 'weights', 'ensemble.pcwt');

let api;
let scratch;
before(async () => {
  const entry = join(dist, 'perfcard.js');
  assert.ok(existsSync(entry), `${entry} is missing: run scripts/build.sh`);
  api = await import(pathToFileURL(entry).href);
  await api.loadPredictor(trees, 'trees.pcwt');
  // The ensemble after its members, as the CLI loads them.
  await api.loadPredictor(readFileSync(gnnPath), 'gnn.pcwt');
  await api.loadPredictor(readFileSync(transformerPath), 'transformer.pcwt');
  await api.loadPredictor(readFileSync(ensemblePath), 'ensemble.pcwt');
  scratch = mkdtempSync(join(tmpdir(), 'perfcard-wasm-predict-'));
});
after(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

// JS options -> the CLI's flags (the mapping the page documents).
function cliArgs(o) {
  const a = [];
  if (o.devices !== undefined) a.push('--device', Array.isArray(o.devices) ? o.devices.join(',') : String(o.devices));
  if (o.batch !== undefined) a.push('--batch', Array.isArray(o.batch) ? o.batch.join(',') : String(o.batch));
  if (o.precision !== undefined) a.push('--precision', o.precision);
  if (o.mode !== undefined) a.push('--mode', o.mode);
  for (const [k, v] of Object.entries(o.dims ?? {})) a.push('--dim', `${k}=${v}`);
  if (o.region !== undefined) a.push('--region', o.region);
  if (o.gridGPerKwh !== undefined) a.push('--grid-g-per-kwh', String(o.gridGPerKwh));
  if (o.pue !== undefined) a.push('--pue', String(o.pue));
  if (o.latencyTargetMs !== undefined) a.push('--latency-target-ms', String(o.latencyTargetMs));
  if (o.runtime !== undefined) a.push('--runtime', o.runtime);
  if (o.cpuRuntime !== undefined) a.push('--cpu-runtime', o.cpuRuntime);
  if (o.kernels) a.push('--kernels');
  if (o.predictor !== undefined) a.push('--predictor', o.predictor);
  if (o.features) a.push('--features');
  if (o.extraDevices !== undefined) a.push('--extra-devices', bytesFile('extra-devices.json', JSON.stringify(o.extraDevices)));
  return a;
}

function runCli(file, options = {}) {
  const r = spawnSync(cli, ['predict', file, '--json', ...cliArgs(options)], { encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.status === 0) return { ok: true, doc: JSON.parse(r.stdout) };
  const prefix = 'perfcard: error: ';
  const line = r.stderr.trim();
  assert.equal(r.status, 1, `CLI failed on ${file} (status ${r.status}, signal ${r.signal}): ${line}`);
  assert.ok(line.startsWith(prefix), `unexpected CLI error output: ${line}`);
  return { ok: false, message: line.slice(prefix.length) };
}

async function runWasm(bytes, options) {
  try {
    return { ok: true, doc: await api.predict(bytes, options) };
  } catch (e) {
    assert.ok(e instanceof Error, 'rejects with an Error');
    assert.equal(e.name, 'PerfCardError', `not a PerfCardError: ${e.stack}`);
    return { ok: false, message: e.message };
  }
}

function bytesFile(name, bytes) {
  const p = join(scratch, name);
  writeFileSync(p, bytes);
  return p;
}

const optionSets = [
  {},
  { devices: 'all', batch: [1, 8] },
  { devices: ['h100-sxm5-80gb', 'l4', 'a100-sxm4-80gb'], batch: [1, 2, 4, 8, 16, 32, 64, 128] },
  { devices: 'every', batch: [4], precision: 'fp32' },
  { devices: 'all', batch: [2], precision: 'bf16', mode: 'training' },
  { devices: ['a30', 'h100-sxm5-80gb'], batch: [16], region: 'fr', pue: 1.2, latencyTargetMs: 3 },
  { devices: ['t4'], batch: [8], gridGPerKwh: 100, kernels: true },
  { devices: 'cpus', batch: [1] },
  { devices: 'every', batch: [1, 8], predictor: 'trees', features: true },
  { devices: 'all', batch: [4], predictor: 'roofline' },
  // A GPU the catalog lacks, described by the caller, beside one it has.
  { devices: ['my-gpu', 'h100-sxm5-80gb'], batch: [1, 8], extraDevices: [{ id: 'my-gpu', name: 'My GPU', kind: 'gpu', arch: 'Hopper',
    peak_tflops: { fp32: 60, fp16: 900 }, sm_count: 132, memory_gb: 80, memory_bandwidth_gbs: 3000, tdp_w: 700, idle_w: 70 }] },
];

describe('predict() returns the CLI document', () => {
  for (const [name, path] of [['resnet50', resnetPath], ['tiny_conv', tinyPath]]) {
    for (const options of optionSets) {
      test(`${name} ${JSON.stringify(options)}`, { skip: noCli }, async () => {
        const want = runCli(path, options);
        assert.ok(want.ok, want.message);
        const got = await runWasm(readFileSync(path), options);
        assertSameDoc(got, want);
      });
    }
  }

  test('every model under public/examples, all devices, batches 1 and 8', { skip: noCli }, async () => {
    const dir = join(root, 'public', 'examples');
    const files = readdirSync(dir).filter((f) => f.endsWith('.onnx')).sort();
    assert.ok(files.length > 0);
    for (const f of files) {
      const options = { devices: 'all', batch: [1, 8], dims: { sequence: 128 } };
      const want = runCli(join(dir, f), options);
      assert.ok(want.ok, `${f}: ${want.message}`);
      assertSameDoc(await runWasm(readFileSync(join(dir, f)), options), want, f);
    }
  });

  // The learned predictors one by one (each of the option sets above ran "auto", which chooses among them).
  for (const predictor of ['trees', 'gnn', 'transformer', 'ensemble']) {
    test(`predictor ${predictor}: the CLI's document`, { skip: noCli }, async () => {
      const options = { devices: 'every', batch: [1, 8], predictor };
      for (const path of [resnetPath, tinyPath]) {
        const want = runCli(path, options);
        assert.ok(want.ok, want.message);
        assertSameDoc(await runWasm(readFileSync(path), options), want, path);
      }
    });
  }

  test('an open model predicts the same as one call', async () => {
    const options = { devices: 'all', batch: [1, 8], kernels: true };
    const model = await api.openModel(resnet);
    try {
      assert.deepEqual(model.predict(options), await api.predict(resnet, options));
      assert.deepEqual(model.analyze({ dims: { batch: 8 } }), await api.analyze(resnet, { dims: { batch: 8 } }));
      assert.equal(model.fileBytes, resnet.length);
    } finally {
      model.close();
    }
    assert.equal(model.closed, true);
    assert.throws(() => model.predict(options), /closed/);
    model.close();  // idempotent
  });

  test('a Blob is streamed in with progress', async () => {
    const card = await api.createPerfCard();
    const seen = [];
    const model = await card.openModel(new Blob([resnet]), { onProgress: (loaded, total) => seen.push([loaded, total]) });
    assert.ok(seen.length >= 2);
    assert.deepEqual(seen.at(-1), [resnet.length, resnet.length]);
    assert.deepEqual(model.predict({ batch: [4] }), card.predictSync(resnet, { batch: [4] }));
    model.close();
    assert.equal(card.openModels, 0);
  });
});

describe('predict errors are JS Errors with the CLI text', () => {
  const bad = [
    { devices: ['nope'] },
    { precision: 'fp4' },
    { mode: 'serving' },
    { region: 'atlantis' },
    { batch: [0] },
    { batch: [1 << 25] },
    { batch: 'x' },
    { pue: 0.5 },
    { latencyTargetMs: -1 },
    { runtime: 'tensorflow' },
    { dims: { sequence: -3 } },
  ];
  for (const options of bad) {
    test(JSON.stringify(options), { skip: noCli }, async () => {
      const want = runCli(resnetPath, options);
      assert.equal(want.ok, false, 'the CLI rejects it too');
      assert.deepEqual(await runWasm(resnet, options), want);
    });
  }

  test('a file that is not a model', { skip: noCli }, async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    const want = runCli(bytesFile('png.onnx', png), {});
    assert.deepEqual(await runWasm(png, {}), want);
    await assert.rejects(api.openModel(png), (e) => e instanceof api.PerfCardError && e.message === want.message);
  });

  test('truncated model', { skip: noCli }, async () => {
    const cut = resnet.subarray(0, resnet.length >> 1);
    const want = runCli(bytesFile('cut.onnx', cut), { batch: [2] });
    assert.equal(want.ok, false);
    assert.deepEqual(await runWasm(cut, { batch: [2] }), want);
  });

  test('options the wrapper rejects', async () => {
    await assert.rejects(api.predict(tiny, { devcies: 'all' }), { name: 'PerfCardError', message: /unknown option 'devcies'/ });
    // Whole numbers only, never rounded or wrapped; a list as long as a table can show; finite numbers.
    for (const batch of [1.5, 1e300, 0, '2.5'])
      await assert.rejects(api.predict(tiny, { batch }), { name: 'PerfCardError', code: 'bad_option', message: /--batch expects a whole number/ });
    await assert.rejects(api.predict(tiny, { batch: Array.from({ length: 10000 }, (_, i) => i + 1) }),
      { code: 'bad_option', message: /--batch lists 10000 sizes; at most 64/ });
    await assert.rejects(api.predict(tiny, { pue: 'NaN' }), { code: 'bad_option', message: /--pue expects a finite number/ });
    await assert.rejects(api.predict(tiny, { kernels: 'yes' }), { name: 'PerfCardError', message: /kernels/ });
    await assert.rejects(api.predict(tiny, 'all'), TypeError);
    await assert.rejects(api.predict('model.onnx'), TypeError);
  });

  test('errors leave nothing behind', async () => {
    const card = await api.createPerfCard();
    const model = card.openModelSync(tiny);
    for (let i = 0; i < 10; i++) assert.throws(() => model.predict({ devices: ['nope'] }), api.PerfCardError);
    // The first prediction leaves its analyses with the open model for the next ones (predict_cache.h).
    model.predict({ batch: [1, 8] });
    const round = () => {
      assert.throws(() => model.predict({ region: 'x' }), api.PerfCardError);
      model.predict({ batch: [1, 8] });
      assert.throws(() => card.predictSync(tiny.subarray(0, 30)), api.PerfCardError);
    };
    // One round first: mallinfo() counts as in use the few bytes of a block too small to split off (8
    // after the first refused region, depending on which blocks earlier calls freed); a leak grows with
    // every round.
    round();
    const before = card.heapInUse;
    for (let i = 0; i < 200; i++) round();
    assert.equal(card.heapInUse, before, 'heap in use changed over 600 calls');
    model.close();
    assert.ok(card.heapInUse < before, 'close() frees the model');
  });
});

describe('loadPredictor()', () => {
  const refused = async (card, bytes, name) => {
    try {
      await card.loadPredictor(bytes, name);
    } catch (e) {
      assert.ok(e instanceof api.PerfCardError, `not a PerfCardError: ${e?.stack}`);
      assert.equal(e.code, 'bad_data');
      return e.message;
    }
    assert.fail(`${name} was accepted`);
  };

  test('the committed trees load and predict; without them a request for trees says so', async () => {
    const card = await api.createPerfCard();
    const model = card.openModelSync(resnet);
    assert.throws(() => model.predict({ predictor: 'trees' }), { name: 'PerfCardError', message: /predictor 'trees' is not available: its weights are not loaded/ });
    const auto = model.predict({ devices: 'every' });
    assert.ok(auto.predictions.every((r) => r.predictor.name === 'roofline'), 'auto without learned files is the roofline');
    const r = await card.loadPredictor(trees.buffer.slice(trees.byteOffset, trees.byteOffset + trees.length), 'trees.pcwt');
    assert.equal(r.name, 'trees');
    assert.match(r.version, /^trees-/);
    const doc = model.predict({ devices: 'every', predictor: 'trees' });
    for (const row of doc.predictions) {
      assert.equal(row.predictor.name, 'trees');
      assert.ok(row.latency_ms > 0 && row.predictor.baseline_latency_ms > 0, row.device);
    }
    model.close();
  });

  test('the ensemble loads after the members the page loads for it and gives a calibrated band; before them it is refused', async () => {
    const card = await api.createPerfCard();
    const ensemble = readFileSync(ensemblePath);
    assert.equal(await refused(card, ensemble, 'ensemble.pcwt'),
      'the ensemble combines the roofline with trees; load trees.pcwt before ensemble.pcwt');
    // Exactly web/predictors.js's list: it must name the members weights/ensemble.pcwt was fitted with.
    const { MEMBERS } = await import(pathToFileURL(join(root, 'web', 'predictors.js')).href);
    for (const m of MEMBERS.ensemble) await card.loadPredictor(readFileSync(join(root, 'weights', `${m}.pcwt`)), `${m}.pcwt`);
    assert.equal((await card.loadPredictor(ensemble, 'ensemble.pcwt')).name, 'ensemble');
    // V100 (volta): DLE's rows are ResNet-50, a training family, so no held-out rows measure the family.
    const doc = card.predictSync(resnet, { devices: ['rtx4090', 'v100-sxm2-32gb'], batch: [8], predictor: 'ensemble' });
    const [ada, volta] = doc.predictions;
    assert.equal(ada.predictor.name, 'ensemble');
    assert.equal(ada.latency_band_coverage, 0.8);
    assert.ok(ada.latency_band_ms[0] < ada.latency_ms && ada.latency_ms < ada.latency_band_ms[1]);
    assert.equal(volta.predictor.name, 'roofline', 'no held-out rows of the family: the roofline, flagged');
    assert.equal(volta.out_of_distribution, true);
    assert.deepEqual(volta.ood_reasons, ['no-held-out-rows']);
    assert.equal(ada.out_of_distribution, ada.ood_reasons.length > 0);
    assert.equal(volta.latency_band_coverage, null);
  });

  test('a truncated, tampered or unlisted file is refused by name and reason; the loaded set stays', async () => {
    const card = await api.createPerfCard();
    await card.loadPredictor(trees, 'trees.pcwt');
    // The module's first refusal of a weights file keeps 8 bytes for good (a one-time allocation on that error
    // path; each later one leaves nothing, which is what this measures), so one is refused first.
    await refused(card, trees, 'forest.pcwt');
    const before = card.heapInUse;
    assert.match(await refused(card, trees.subarray(0, trees.length - 100), 'trees.pcwt'),
      new RegExp(`^weights file 'trees.pcwt' is ${trees.length - 100} bytes; the manifest lists ${trees.length} \\(truncated`));
    const tampered = Uint8Array.from(trees);
    tampered[tampered.length - 7] ^= 0x40;
    assert.match(await refused(card, tampered, 'trees.pcwt'), /^weights file 'trees.pcwt' has sha256 [0-9a-f]{64}; the manifest lists [0-9a-f]{64} \(the file was changed\)$/);
    assert.equal(await refused(card, trees, 'forest.pcwt'), "weights file 'forest.pcwt' is not listed in the weights manifest");
    assert.equal(card.heapInUse, before, 'a refused file leaves nothing behind');
    const doc = card.predictSync(tiny, { devices: ['rtx4090'], predictor: 'trees' });
    assert.equal(doc.predictions[0].predictor.name, 'trees', 'the good file loaded first is still in use');
    await assert.rejects(card.loadPredictor('trees', 'trees.pcwt'), TypeError);
  });

  test('the learned runtime is a second module, loaded by the first loadPredictor(); without it the roofline predicts and a load says why', async () => {
    // A runtime that cannot be fetched: nothing asks for it until a weights file is loaded.
    const card = await api.createPerfCard({ learned: { wasmUrl: join(scratch, 'missing_learned.wasm') } });
    const model = card.openModelSync(resnet);
    const doc = model.predict({ devices: ['rtx4090'], batch: [1, 8] });
    assert.ok(doc.predictions.every((r) => r.predictor.name === 'roofline'));
    await assert.rejects(card.loadPredictor(trees, 'trees.pcwt'), (e) => {
      assert.ok(e instanceof api.PerfCardError, `not a PerfCardError: ${e?.stack}`);
      assert.match(e.message, /^perfcard: the learned predictors' runtime \(perfcard_learned\.wasm\) could not be loaded: perfcard: cannot read .*missing_learned\.wasm/);
      return true;
    });
    // A tampered file is named as such before the runtime is asked for.
    const tampered = Uint8Array.from(trees);
    tampered[tampered.length - 7] ^= 0x40;
    await assert.rejects(card.loadPredictor(tampered, 'trees.pcwt'), { name: 'PerfCardError', code: 'bad_data', message: /^weights file 'trees.pcwt' has sha256 / });
    assert.equal(card.broken, false);
    assert.deepEqual(model.predict({ devices: ['rtx4090'], batch: [1, 8] }), doc, 'the failed loads changed nothing');
    model.close();
  });
});

describe('devices()', () => {
  test('the catalog the CLI lists, with MIG tables, regions and the predictor', { skip: noCli }, async () => {
    const cat = await api.devices();
    const r = spawnSync(cli, ['devices', '--json'], { encoding: 'utf8' });
    // One writer in the core (catalog_to_json): the CLI prints the very document the API returns.
    assert.deepEqual(cat, JSON.parse(r.stdout));
    for (const d of cat.devices) {
      if (d.mig) assert.ok(d.mig.profiles.length > 0 && d.mig.profiles.every((p) => p.memory_gb > 0));
    }
    assert.ok(cat.regions.some((x) => x.code === cat.default_region));
    assert.equal(cat.predictor.name, 'roofline');
    assert.match(cat.predictor.version, /^roofline-/);
    assert.ok(cat.runtimes.some((x) => x.name === 'pytorch-eager'));
    // The caller may change its copy.
    cat.devices.length = 0;
    assert.ok((await api.devices()).devices.length > 0);
  });
});

describe('probeMachine()', () => {
  test('measures this machine and makes the device entry predict() takes with onnxruntime-web', async () => {
    const card = await api.createPerfCard();
    const p = await card.probeMachine({ gemmMs: 30, streamMs: 20 });
    assert.ok(p.gemm_gflops > 0 && p.stream_gbs > 0, JSON.stringify(p));
    assert.ok(p.stream_passes >= 2 && p.gemm_blocks >= 1);
    assert.equal(p.device.id, 'this-device');
    assert.equal(p.device.arch, 'browser');
    assert.equal(p.device.peak_fp32_gflops.value, p.gemm_gflops);
    const model = await card.openModel(new Uint8Array(readFileSync(join(root, 'public/examples/resnet50.onnx'))));
    const doc = model.predict({ devices: ['this-device'], extraDevices: [p.device], cpuRuntime: 'onnxruntime-web', threads: 1,
      predictor: 'roofline', batch: [1] });
    model.close();
    assert.equal(doc.predictions.length, 1);
    assert.equal(doc.predictions[0].runtime, 'onnxruntime-web');
    assert.ok(doc.predictions[0].latency_ms > 0);
    await assert.rejects(card.probeMachine({ gemmMs: 'long' }), { name: 'TypeError', message: /gemmMs must be a number/ });
    await assert.rejects(card.probeMachine({ gemmMs: 1e9 }), { name: 'PerfCardError', message: /gemm_ms and stream_ms must lie in \[1, 5000\]/ });
  });
});

describe('perfcard probe', () => {
  test('prints the rates and the same kind of entry; a bad flag value is named', { skip: noCli }, () => {
    const r = spawnSync(cli, ['probe', '--json', '--gemm-ms', '20', '--stream-ms', '10'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.ok(doc.gemm_gflops > 0 && doc.stream_gbs > 0);
    assert.equal(doc.device.arch, 'browser');
    assert.equal(doc.device.peak_fp32_gflops.value, doc.gemm_gflops);
    const bad = spawnSync(cli, ['probe', '--gemm-ms', 'abc'], { encoding: 'utf8' });
    assert.equal(bad.status, 1);
    assert.equal(bad.stderr.trim(), "perfcard: error: --gemm-ms expects a number, got 'abc'");
  });

  test('--cpu: the entry for onnxruntime natively, the rates times the cores, the median of 5 probes', { skip: noCli }, () => {
    const given = spawnSync(cli, ['probe', '--cpu', '--rates', '25,20', '--cores', '4', '--memory-gb', '16'], { encoding: 'utf8' });
    assert.equal(given.status, 0, given.stderr);
    const entry = JSON.parse(given.stdout).device;
    assert.equal(entry.id, 'this-machine');
    assert.equal(entry.arch, 'cpu-probed');
    assert.equal(entry.peak_fp32_gflops.value, 100);
    assert.equal(entry.memory_bandwidth_gbs.value, 80);
    assert.equal(entry.memory_gb.value, 16);
    const probed = spawnSync(cli, ['probe', '--cpu', '--json', '--gemm-ms', '20', '--stream-ms', '10'], { encoding: 'utf8' });
    assert.equal(probed.status, 0, probed.stderr);
    const doc = JSON.parse(probed.stdout);
    assert.equal(doc.runs.length, 5);
    const median = (xs) => [...xs].sort((a, b) => a - b)[2];
    assert.equal(doc.gemm_gflops, median(doc.runs.map((r) => r.gemm_gflops)));
    assert.equal(doc.stream_gbs, median(doc.runs.map((r) => r.stream_gbs)));
    assert.equal(doc.device.peak_fp32_gflops.value, doc.gemm_gflops * doc.device.cores.value);
    assert.match(doc.device.peak_fp32_gflops.source, /the median of 5 probes/);
    const text = spawnSync(cli, ['probe', '--cpu', '--gemm-ms', '20', '--stream-ms', '10'], { encoding: 'utf8' });
    assert.match(text.stdout, /^f32 matrix product: [\d.]+ GFLOP\/s, memory read: [\d.]+ GB\/s per thread \(the median of 5 probes\); \d+ cores$/m);
    for (const cores of ['0', '2.5', '1e20']) {
      const absurd = spawnSync(cli, ['probe', '--cpu', '--rates', '25,20', '--cores', cores], { encoding: 'utf8' });
      assert.equal(absurd.status, 1, cores);
      assert.match(absurd.stderr, /--cores expects a whole number from 1 to 4096/);
    }
    for (const gb of ['0', '-4']) {
      const none = spawnSync(cli, ['probe', '--cpu', '--rates', '25,20', '--memory-gb', gb], { encoding: 'utf8' });
      assert.equal(none.status, 1, gb);
      assert.match(none.stderr, /the machine's memory must be a positive number of GB/);
    }
    const stray = spawnSync(cli, ['probe', '--cores', '4'], { encoding: 'utf8' });
    assert.equal(stray.status, 1);
    assert.match(stray.stderr, /--cores and --memory-gb describe the machine for --cpu's entry/);
  });

  test('predict --device this-machine probes the machine and predicts it with the cpu-probed family', { skip: noCli }, () => {
    const model = join(root, 'tests', 'data', 'models', 'resnet18.onnx');
    const r = spawnSync(cli, ['predict', model, '--device', 'this-machine,cpu-build-vm-amd-epyc-zen4', '--batch', '1', '--json'],
      { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /perfcard: probed this-machine: .* \(the median of 5 probes\), \d+ cores/);
    const row = JSON.parse(r.stdout).predictions.find((p) => p.device === 'this-machine');
    assert.ok(row && row.latency_ms > 0);
    assert.equal(row.runtime, 'onnxruntime');
    // No learned predictor trained on a probed CPU, but their files record how near they came on machines
    // none trained on (evaluate_cpu_machines --write-weights): auto takes the nearest, flagged, its figure doubled.
    assert.ok(['trees', 'gnn', 'transformer'].includes(row.predictor.name), row.predictor.name);
    assert.deepEqual(row.ood_reasons, ['untrained-device-family']);
    assert.ok(row.uncertainty > 0.1 && row.uncertainty < 1, `uncertainty ${row.uncertainty}`);
    assert.ok(row.latency_band_ms[0] < row.latency_ms && row.latency_ms < row.latency_band_ms[1]);

    // A probe kept from before (perfcard probe --json's output) is taken as it is: nothing is probed again.
    const dir = mkdtempSync(join(tmpdir(), 'perfcard-probe-'));
    const kept = join(dir, 'machine.json');
    writeFileSync(kept, spawnSync(cli, ['probe', '--cpu', '--rates', '25,20', '--cores', '2', '--memory-gb', '8'], { encoding: 'utf8' }).stdout);
    const again = spawnSync(cli, ['predict', model, '--device', 'this-machine', '--extra-devices', kept, '--json'], { encoding: 'utf8' });
    assert.equal(again.status, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /probed/);
    assert.equal(JSON.parse(again.stdout).predictions[0].device_name, 'This machine (native probe, onnxruntime)');
    // Fitted for onnxruntime natively: onnxruntime-web on it is refused, before any probing.
    const web = spawnSync(cli, ['predict', model, '--device', 'this-machine', '--cpu-runtime', 'onnxruntime-web'], { encoding: 'utf8' });
    assert.equal(web.status, 1);
    assert.match(web.stderr, /this-machine is predicted for onnxruntime natively/);
    assert.doesNotMatch(web.stderr, /probed/);
    // A missing model is reported before any probing.
    const missing = spawnSync(cli, ['predict', join(dir, 'none.onnx'), '--device', 'this-machine'], { encoding: 'utf8' });
    assert.equal(missing.status, 1);
    assert.doesNotMatch(missing.stderr, /probed/);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('re-prediction speed', () => {
  test('all GPUs x 8 batch sizes on an open resnet50', async () => {
    const model = await api.openModel(resnet);
    const options = { devices: 'all', batch: [1, 2, 4, 8, 16, 32, 64, 128] };
    model.predict(options);  // warm up
    const times = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const doc = model.predict(options);
      times.push(performance.now() - t);
      assert.equal(doc.predictions.length, 8 * 16);
    }
    model.close();
    times.sort((a, b) => a - b);
    // The aim is < 20 ms (docs/benchmarks.md, section web); a loaded test machine is not the place to
    // enforce it, so this only guards against an order-of-magnitude regression.
    console.log(`# all GPUs x 8 batches: median ${times[2].toFixed(1)} ms, best ${times[0].toFixed(1)} ms`);
    assert.ok(times[0] < 2000, `re-prediction took ${times[0]} ms`);
  });
});
