// The npm package shape: package.json "exports" resolves `import ... from 'perfcard'` (here by the
// package's self-reference) to the ES module API with its types, and the module works from node.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test('exports and types point at the built API', () => {
  const entry = pkg.exports['.'];
  assert.equal(pkg.type, 'module');
  for (const p of [entry.import, entry.default, entry.types, pkg.types, pkg.main]) {
    assert.ok(existsSync(join(root, p)), `${p} exists (scripts/build.sh --wasm-only)`);
  }
  for (const f of pkg.files) assert.ok(existsSync(join(root, f)), `${f} is built`);
  const dts = readFileSync(join(root, entry.types), 'utf8');
  for (const name of ['analyze', 'predict', 'devices', 'openModel', 'createPerfCard']) {
    assert.match(dts, new RegExp(`export function ${name}\\(`), `${name} is declared`);
  }
  for (const s of Object.values(pkg.scripts)) assert.equal(typeof s, 'string');
  for (const name of ['setup', 'build', 'start', 'test', 'bench']) assert.ok(pkg.scripts[name], `npm run ${name}`);
});

test("import from 'perfcard' works in node", async () => {
  const api = await import('perfcard');
  for (const name of ['analyze', 'predict', 'devices', 'openModel', 'createPerfCard', 'init']) {
    assert.equal(typeof api[name], 'function', name);
  }
  assert.equal(typeof api.PerfCardError, 'function');
  const cat = await api.devices();
  assert.ok(cat.devices.some((d) => d.id === 'h100-sxm5-80gb'));
  const doc = await api.predict(readFileSync(join(root, 'public', 'examples', 'resnet50.onnx')), { devices: ['l4'], batch: [1, 8] });
  assert.equal(doc.predictions.length, 2);
  assert.ok(doc.predictions.every((p) => p.latency_ms > 0));
});
