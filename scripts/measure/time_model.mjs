// The timing loop of both runners (ort_run.mjs: onnxruntime-node; ort_web_run.mjs: onnxruntime-web, in
// node and, as text, inside a page), so that every measured row comes from the same inputs and statistics.
// It must stay self-contained: ort_web_run.mjs ships its source to the page with Function.prototype.toString.
//   o: {dims, runs, minSeconds, warmup, sessionOptions, versionKey ('node' | 'web')}
export async function timeModel(ort, model, o) {
  const session = await ort.InferenceSession.create(model, o.sessionOptions);
  // Inputs from the model's declared types with symbolic dims bound; deterministic pseudo-random contents.
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const feeds = {};
  for (const name of session.inputNames) {
    const meta = session.inputMetadata.find ? session.inputMetadata.find((m) => m.name === name) : null;
    const shape = (meta?.shape ?? []).map((d, i) => {
      if (typeof d === 'number' && d > 0) return d;
      if (typeof d === 'string' && d in o.dims) return o.dims[d];
      throw new Error(`input ${name} dim ${i} (${d}) is not bound: pass --dim ${d}=N`);
    });
    const n = shape.reduce((a, b) => a * b, 1);
    const type = meta?.type ?? 'float32';
    let data;
    if (type === 'int64') data = BigInt64Array.from({ length: n }, () => BigInt(Math.floor(rand() * 100)));
    else if (type === 'int32') data = Int32Array.from({ length: n }, () => Math.floor(rand() * 100));
    else if (type === 'bool') data = Uint8Array.from({ length: n }, () => 1);
    else data = Float32Array.from({ length: n }, () => rand() * 2 - 1);
    feeds[name] = new ort.Tensor(type, data, shape);
  }
  for (let i = 0; i < o.warmup; i++) await session.run(feeds);
  const times = [];
  const start = performance.now();
  while (times.length < o.runs || (performance.now() - start) / 1000 < o.minSeconds) {
    const t0 = performance.now();
    await session.run(feeds);
    times.push(performance.now() - t0);
    if (times.length > 10000) break;
  }
  await session.release();
  times.sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  return {
    runs: times.length, median_ms: q(0.5), p10_ms: q(0.1), p90_ms: q(0.9), min_ms: times[0],
    spread: (q(0.9) - q(0.1)) / q(0.5), ort_version: ort.env.versions?.[o.versionKey] ?? null,
  };
}
