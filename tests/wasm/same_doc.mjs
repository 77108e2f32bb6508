// The CLI and the wasm module give the same prediction documents: equal, except that numbers may differ by
// float rounding where the GNN's dense maths (inside the GNN, the ensemble and predictor "auto") sums in
// another order natively (SSE) and in wasm (SIMD128). Everything that is not a number must be equal.
import assert from 'node:assert/strict';

export const ROUNDING = 1e-5;  // relative; the GNN's core-vs-core differences are ~1e-7

export function assertSameDoc(got, want, where = '$') {
  if (typeof want === 'number' && typeof got === 'number') {
    if (got === want) return;
    const rel = Math.abs(got - want) / Math.max(Math.abs(want), 1e-12);
    assert.ok(rel <= ROUNDING, `${where}: ${got} vs ${want} (relative ${rel})`);
    return;
  }
  if (Array.isArray(want)) {
    assert.ok(Array.isArray(got), `${where}: not an array`);
    assert.equal(got.length, want.length, `${where}: length`);
    want.forEach((w, i) => assertSameDoc(got[i], w, `${where}[${i}]`));
    return;
  }
  if (want && typeof want === 'object') {
    assert.ok(got && typeof got === 'object' && !Array.isArray(got), `${where}: not an object`);
    assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), `${where}: keys`);
    for (const k of Object.keys(want)) assertSameDoc(got[k], want[k], `${where}.${k}`);
    return;
  }
  assert.equal(got, want, where);
}
