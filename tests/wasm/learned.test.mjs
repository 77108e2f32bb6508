// The learned predictors' module (build/wasm/dist/perfcard_learned.{js,wasm}, wasm/learned/bindings.cpp) at
// its own boundary: what the core's module gets back from it, failures included. The core only hands it
// files the manifest lists; these tests hand it what the core never would, to see each failure come back
// as data ({ok: false, code, message} or NaN with lastError()), never as a thrown C++ exception.
//
//   node --test tests/wasm/
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = resolve(process.env.PERFCARD_WASM_DIST ?? join(root, 'build', 'wasm', 'dist'));
const trees = readFileSync(join(root, 'weights', 'trees.pcwt'));
const gnn = readFileSync(join(root, 'weights', 'gnn.pcwt'));

let mod;
before(async () => {
  const { default: factory } = await import(pathToFileURL(join(dist, 'perfcard_learned.js')).href);
  const wasm = readFileSync(join(dist, 'perfcard_learned.wasm'));
  mod = await factory({
    instantiateWasm(imports, done) {
      WebAssembly.instantiate(wasm, imports).then(({ instance, module }) => done(instance, module));
      return {};
    },
  });
});

function copyIn(bytes) {
  const ptr = mod._malloc(Math.max(bytes.length, 1));
  mod.HEAPU8.set(bytes, ptr);
  return ptr;
}

function load(bytes, kind, features = 0) {
  const ptr = copyIn(bytes);
  try {
    return mod.loadNetwork(ptr, bytes.length, kind, features);
  } finally {
    mod._free(ptr);
  }
}

describe('the learned module', () => {
  test('loads the committed trees, walks a row, releases them', () => {
    const r = load(trees, 'trees', 55);
    assert.equal(r.ok, true, r.message);
    assert.equal(r.used.length, 55);
    assert.ok(r.used.some((u) => u === 1) && r.used.every((u) => u === 0 || u === 1));
    const row = copyIn(new Uint8Array(new Float32Array(55).fill(NaN).buffer));
    const m = mod.margin(r.handle, row, 55);
    mod._free(row);
    assert.ok(Number.isFinite(m), 'an all-unknown row follows the default branches to a finite margin');
    assert.equal(mod.release(r.handle), true);
    assert.equal(mod.release(r.handle), false);
  });

  test('a bad file, a bad kind or a bad handle comes back as data with the core\'s code and message', () => {
    const cut = load(trees.subarray(0, 100), 'trees', 55);
    assert.equal(cut.ok, false);
    assert.equal(cut.code, 'bad_data');
    assert.match(cut.message, /truncated/);
    const kind = load(trees, 'forest');
    assert.deepEqual([kind.ok, kind.code, kind.detail], [false, 'internal', "no network kind 'forest' (trees, graph, sequence)"]);
    const wrong = load(trees, 'graph');  // a trees file has no GNN tensors
    assert.equal(wrong.ok, false);
    assert.equal(wrong.code, 'bad_data');
    const row = copyIn(new Uint8Array(4 * 55));
    assert.ok(Number.isNaN(mod.margin(987654, row, 55)));
    mod._free(row);
    assert.equal(mod.lastError().detail, 'no trees network has handle 987654');
    assert.equal(mod.lastError().code, 'internal');
  });

  test('an operator graph whose arrays disagree is refused by the network, and the module goes on', () => {
    const r = load(gnn, 'graph');
    assert.equal(r.ok, true, r.message);
    assert.match(r.storage, /^(f32|f16|q8_0)$/);
    const out = mod._malloc(4 * mod.maxEmbedding());
    const ints = copyIn(new Uint8Array(4 * 4));
    const floats = copyIn(new Uint8Array(4 * 4));
    // 2 nodes claimed, features = 1: the node feature schema has more, so the arrays cannot match it.
    // Then edges whose source and destination arrays differ in length: refused by the network's own check.
    const bad = mod.embedGraph(r.handle, 2, 1, ints, 2, ints, 2, floats, 2, ints, 0, ints, 0, out);
    assert.equal(bad.ok, false);
    assert.equal(bad.code, 'bad_data');
    assert.match(bad.detail, /operator graph's arrays do not match/);
    // The node feature count this build's schema has: the one an empty graph embeds with.
    const features = [...Array(65).keys()].find((f) => mod.embedGraph(r.handle, 0, f, ints, 0, ints, 0, floats, 0, ints, 0, ints, 0, out).ok);
    assert.ok(features > 0, 'an empty graph embeds at the schema\'s feature count');
    const edges = mod.embedGraph(r.handle, 0, features, ints, 0, ints, 0, floats, 0, ints, 2, ints, 1, out);
    assert.equal(edges.ok, false, 'two edge sources and one destination');
    assert.match(edges.detail, /operator graph's arrays do not match/);
    // The module goes on: the trees still load and walk after the failure.
    const t = load(trees, 'trees', 55);
    const row = copyIn(new Uint8Array(4 * 55));
    assert.ok(Number.isFinite(mod.margin(t.handle, row, 55)));
    mod._free(row);
    mod.release(t.handle);
    mod._free(out);
    mod._free(ints);
    mod._free(floats);
    assert.equal(mod.release(r.handle), true);
  });
});
