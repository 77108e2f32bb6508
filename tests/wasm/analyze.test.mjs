// The JS API (build/wasm/dist/perfcard.js) against the native CLI: same documents, same error messages.
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

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = resolve(process.env.PERFCARD_WASM_DIST ?? join(root, 'build', 'wasm', 'dist'));
const cli = resolve(process.env.PERFCARD_CLI ?? join(root, 'build', 'native', 'core', 'perfcard'));
const haveCli = existsSync(cli);
const noCli = haveCli ? false : `native CLI not built (${cli})`;

const tinyPath = join(root, 'tests', 'data', 'models', 'tiny_conv.onnx');
const tiny = readFileSync(tinyPath);

let api;
let scratch;
before(async () => {
  const entry = join(dist, 'perfcard.js');
  assert.ok(existsSync(entry), `${entry} is missing: run scripts/build.sh`);
  api = await import(pathToFileURL(entry).href);
  scratch = mkdtempSync(join(tmpdir(), 'perfcard-wasm-test-'));
});
after(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

// What the CLI makes of a file: {ok: true, doc} or {ok: false, message} (the text after "perfcard: error: ").
function runCli(file, dims = {}, perNode = false) {
  const args = ['analyze', file, '--json'];
  for (const [name, value] of Object.entries(dims)) args.push('--dim', `${name}=${value}`);
  if (perNode) args.push('--per-node');
  const r = spawnSync(cli, args, { encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.status === 0) return { ok: true, doc: JSON.parse(r.stdout) };
  const prefix = 'perfcard: error: ';
  const line = r.stderr.trim();
  assert.equal(r.status, 1, `CLI crashed on ${file} (status ${r.status}, signal ${r.signal}): ${line}`);
  assert.ok(line.startsWith(prefix), `unexpected CLI error output: ${line}`);
  return { ok: false, message: line.slice(prefix.length) };
}

async function runWasm(bytes, dims = {}, perNode = false) {
  try {
    return { ok: true, doc: await api.analyze(bytes, { dims, perNode }) };
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

describe('analyze() returns the CLI document', () => {
  test('tiny_conv with batch=8', { skip: noCli }, async () => {
    const doc = await api.analyze(tiny, { dims: { batch: 8 } });
    assert.deepEqual(doc, runCli(tinyPath, { batch: 8 }).doc);
    assert.equal(doc.model.inputs[0].bound.shape[0], 8);
  });

  test('tiny_conv without dims (unbound default, warnings)', { skip: noCli }, async () => {
    const doc = await api.analyze(tiny);
    assert.deepEqual(doc, runCli(tinyPath).doc);
    assert.ok(doc.warnings.length > 0, 'an unbound dim is warned about');
  });

  test('tiny_conv per node', { skip: noCli }, async () => {
    const doc = await api.analyze(tiny, { dims: { batch: 2 }, perNode: true });
    assert.ok(Array.isArray(doc.nodes) && doc.nodes.length === 7);
    assert.deepEqual(doc, runCli(tinyPath, { batch: 2 }, true).doc);
  });

  test('every model under tests/data/models and public/examples', { skip: noCli }, async () => {
    const files = [];
    for (const dir of [join(root, 'tests', 'data', 'models'), join(root, 'public', 'examples')]) {
      if (!existsSync(dir)) continue;
      for (const f of readdirSync(dir).sort()) if (f.endsWith('.onnx')) files.push(join(dir, f));
    }
    assert.ok(files.length > 0);
    const dims = { batch: 4, sequence: 128 };
    for (const f of files) {
      const want = runCli(f, dims);
      assert.ok(want.ok, `${f}: ${want.message}`);
      const got = await runWasm(readFileSync(f), dims);
      assert.deepEqual(got, want, f);
    }
  });

  test('same document for every input type', async () => {
    const want = await api.analyze(tiny, { dims: { batch: 3 } });
    const padded = new Uint8Array(tiny.length + 16);
    padded.set(tiny, 7);
    const copy = Uint8Array.from(tiny);
    const inputs = [
      copy.buffer,                                       // ArrayBuffer
      new DataView(padded.buffer, 7, tiny.length),       // a view at an offset
      new Blob([tiny]),                                  // Blob, streamed into wasm memory
    ];
    for (const input of inputs) assert.deepEqual(await api.analyze(input, { dims: { batch: 3 } }), want);
    assert.deepEqual(await api.analyze(tiny, { dims: { batch: 3n } }), want, 'bigint dims');
  });
});

describe('errors are JS Errors with the core message', () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

  test('PNG bytes', async () => {
    const err = await api.analyze(png).then(() => null, (e) => e);
    assert.ok(err instanceof Error && err instanceof api.PerfCardError);
    assert.match(err.message, /not an ONNX model: the input is a PNG image/);
    assert.equal(err.byteOffset, 0);
    assert.equal(err.detail, 'not an ONNX model: the input is a PNG image');
    if (haveCli) assert.equal(err.message, runCli(bytesFile('png.onnx', png)).message);
  });

  test('truncated model', { skip: noCli }, async () => {
    for (const cut of [1, 20, tiny.length >> 1, tiny.length - 1]) {
      const bytes = tiny.subarray(0, cut);
      const want = runCli(bytesFile(`truncated_${cut}.onnx`, bytes));
      assert.equal(want.ok, false);
      assert.deepEqual(await runWasm(bytes), want, `cut at ${cut}`);
    }
  });

  test('empty input', { skip: noCli }, async () => {
    assert.deepEqual(await runWasm(new Uint8Array(0)), runCli(bytesFile('empty.onnx', new Uint8Array(0))));
  });

  test('bad dim bindings: same words as --dim', { skip: noCli }, async () => {
    for (const dims of [{ batch: -1 }, { batch: 2.5 }, { batch: 2 ** 41 }, { batch: 'x' }]) {
      const want = runCli(tinyPath, dims);
      assert.equal(want.ok, false);
      assert.deepEqual(await runWasm(tiny, dims), want, JSON.stringify(dims));
    }
  });

  test('bad options', async () => {
    await assert.rejects(api.analyze(tiny, { perNod: true }), { name: 'PerfCardError', message: /unknown option 'perNod'/ });
    await assert.rejects(api.analyze(tiny, { perNode: 'yes' }), { name: 'PerfCardError', message: /perNode/ });
    await assert.rejects(api.analyze(tiny, { dims: { batch: null } }), { name: 'PerfCardError', message: /batch/ });
    await assert.rejects(api.analyze(tiny, 'batch=8'), TypeError);
    await assert.rejects(api.analyze('model.onnx'), TypeError);
    await assert.rejects(api.analyze(undefined), TypeError);
  });

  test('tests/data/bad: same outcome as the CLI, file by file', { skip: noCli }, async (t) => {
    const dir = join(root, 'tests', 'data', 'bad');
    if (!existsSync(dir)) return t.skip('no tests/data/bad');
    const expectedPath = join(dir, 'expected.json');
    const expected = existsSync(expectedPath) ? JSON.parse(readFileSync(expectedPath, 'utf8')) : {};
    const files = readdirSync(dir).filter((f) => f.endsWith('.onnx')).sort();
    for (const f of files) {
      const dims = expected[f]?.dims ?? {};
      const want = runCli(join(dir, f), dims);
      const got = await runWasm(readFileSync(join(dir, f)), dims);
      assert.deepEqual(got, want, f);
    }
  });
});

describe('no state survives a call', () => {
  test('twice in a row, and after errors', async () => {
    const first = await api.analyze(tiny, { dims: { batch: 8 } });
    const second = await api.analyze(tiny, { dims: { batch: 8 } });
    assert.deepEqual(second, first);
    await assert.rejects(api.analyze(tiny.subarray(0, 40)), api.PerfCardError);
    await assert.rejects(api.analyze(tiny, { dims: { batch: -1 } }), api.PerfCardError);
    assert.deepEqual(await api.analyze(tiny, { dims: { batch: 8 } }), first);
    // Other bindings do not leak into the next call.
    const one = await api.analyze(tiny, { dims: { batch: 1 } });
    assert.equal(one.model.inputs[0].bound.shape[0], 1);
    assert.deepEqual(await api.analyze(tiny, { dims: { batch: 8 } }), first);
  });

  test('many errors do not leak wasm memory', async () => {
    const card = await api.createPerfCard();
    const bad = tiny.subarray(0, tiny.length - 1);
    for (let i = 0; i < 20; i++) await assert.rejects(card.analyze(bad));
    const before = card.heapInUse;
    for (let i = 0; i < 500; i++) {
      await assert.rejects(card.analyze(bad));
      card.analyzeSync(tiny, { dims: { batch: 8 }, perNode: true });
    }
    assert.equal(card.heapInUse, before, 'heap in use changed over 1000 calls');
  });

  test('a trap of the module is a PerfCardError with code internal, and the instance says it is broken', async () => {
    const card = await api.createPerfCard();
    // A pointer far outside wasm memory: the binding's read traps (RuntimeError: memory access out of
    // bounds), which no C++ catch can turn into an error result.
    assert.throws(() => card._raw('analyzeBuffer', 0xfffffff0, 64, ''),
      (e) => e instanceof api.PerfCardError && e.code === 'internal' && /WebAssembly module stopped/.test(e.message) &&
        e.cause !== undefined);
    assert.equal(card.broken, true);
    assert.throws(() => card.analyzeSync(tiny), { name: 'PerfCardError', code: 'internal', message: /failed earlier/ });
    // Other instances are unaffected.
    assert.equal((await api.createPerfCard()).analyzeSync(tiny).schema_version, 1);
  });

  test('errors carry a stable code', async () => {
    await assert.rejects(api.analyze(tiny.subarray(0, 10)), { name: 'PerfCardError', code: 'malformed' });
    await assert.rejects(api.analyze(tiny, { dims: { batch: -1 } }), { name: 'PerfCardError', code: 'bad_option' });
  });

  test('independent instances', async () => {
    const [a, b] = await Promise.all([api.createPerfCard(), api.createPerfCard()]);
    assert.deepEqual(a.analyzeSync(tiny, { dims: { batch: 5 } }), b.analyzeSync(tiny, { dims: { batch: 5 } }));
    assert.equal(typeof a.version, 'string');
    assert.equal(a.schemaVersion, a.analyzeSync(tiny).schema_version);
  });
});
