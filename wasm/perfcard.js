// PerfCard's JS API: the C++ core compiled to WebAssembly, as an ES module.
//
//   import { analyze, predict, devices, openModel } from './perfcard.js';
//   const report = await analyze(bytes, { dims: { batch: 8 }, perNode: false });
//   const card = await predict(bytes, { devices: ['h100-sxm5-80gb', 'l4'], batch: [1, 8] });
//   const catalog = await devices();
//   const model = await openModel(bytes);          // parsed once ...
//   model.predict({ devices: 'all', batch: [1, 2, 4, 8] });  // ... predicted many times, synchronously
//   model.close();
//
// `report` and `card` are plain objects with the same content as `perfcard analyze MODEL --json` and
// `perfcard predict MODEL --json` (docs/analyze-json.md, docs/predict-json.md). A problem with the model
// or the options rejects with a PerfCardError (a JS Error) whose message is the core's message, as the
// CLI prints it after "perfcard: error: ".
//
// Runs in browsers, workers and node (>= 18). The .wasm sits next to this file: browsers and workers
// fetch it relative to import.meta.url, node reads it from disk. It is compiled once per URL and
// shared by every instance. No threads, no COOP/COEP needed.
//
// The learned predictors' models (trees, GNN, transformer, ensemble) are a second module, perfcard_learned.js /
// .wasm beside this file: an instance imports and instantiates it on its first loadPredictor(), so a page
// that predicts with the roofline alone never downloads it.
import createPerfCardModule from './perfcard_wasm.js';

export class PerfCardError extends Error {
  constructor(failure) {
    super(failure.message);
    this.name = 'PerfCardError';
    this.detail = failure.detail ?? failure.message;  // the message without its location
    // What kind of failure, stable across versions: invalid_model, malformed, limit, bad_option, bad_data,
    // internal (a trap of the WebAssembly module is one).
    this.code = failure.code ?? 'internal';
    for (const key of ['byteOffset', 'node', 'opType', 'graph']) {
      if (failure[key] !== undefined) this[key] = failure[key];
    }
  }
}

const utf8 = new TextDecoder();

function brokenError() {
  return new PerfCardError({ message: 'perfcard: this instance failed earlier and cannot be used again', code: 'internal' });
}

function isNode() {
  return typeof process === 'object' && process !== null && typeof process.versions?.node === 'string';
}

// Compiled modules by URL: instances made from the same .wasm share one compilation.
const compiled = new Map();

async function compileFrom(url) {
  if (url.protocol === 'file:' && isNode()) {
    const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ 'node:fs/promises');
    let bytes;
    try {
      bytes = await readFile(url);
    } catch (e) {
      throw new Error(`perfcard: cannot read ${url.pathname}: ${e.message}`, { cause: e });
    }
    return WebAssembly.compile(bytes);
  }
  let response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (e) {
    throw new Error(`perfcard: cannot fetch ${url.href}: ${e.message}`, { cause: e });
  }
  if (!response.ok) throw new Error(`perfcard: cannot fetch ${url.href}: HTTP ${response.status}`);
  const type = response.headers.get('content-type') ?? '';
  if (typeof WebAssembly.compileStreaming === 'function' && type.startsWith('application/wasm')) {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());  // servers without the wasm MIME type
}

function compileCached(url) {
  let p = compiled.get(url.href);
  if (p === undefined) {
    p = compileFrom(url);
    compiled.set(url.href, p);
    p.catch(() => compiled.delete(url.href));  // a failed load may be retried
  }
  return p;
}

async function compiledModule(opts, defaultUrl) {
  if (opts.wasmModule !== undefined) return opts.wasmModule;
  if (opts.wasmBinary !== undefined) return WebAssembly.compile(opts.wasmBinary);
  return compileCached(opts.wasmUrl !== undefined ? new URL(String(opts.wasmUrl), import.meta.url) : defaultUrl);
}

// Emscripten's own loader is bypassed (3.1.6 cannot read files from an ES module in node, and its errors
// are vague): it gets the compiled module through instantiateWasm.
async function instantiateWith(factory, wasmModule, settings) {
  let fail;
  const failed = new Promise((resolve, reject) => { fail = reject; });
  const ready = factory({
    ...settings,
    instantiateWasm(imports, done) {
      WebAssembly.instantiate(wasmModule, imports).then((instance) => done(instance, wasmModule), fail);
      return {};
    },
  });
  return Promise.race([ready, failed]);
}

async function instantiate(opts = {}) {
  // The literal new URL('./x.wasm', import.meta.url) lets bundlers (webpack 5, Vite) ship the file.
  const wasmModule = await compiledModule(opts, new URL('./perfcard_wasm.wasm', import.meta.url));
  return instantiateWith(createPerfCardModule, wasmModule, {
    print: opts.print ?? ((s) => console.log(s)),
    printErr: opts.printErr ?? ((s) => console.warn(s)),
  });
}

// The learned module for one core instance. opts.learned: {wasmUrl?, wasmBinary?, wasmModule?}.
async function instantiateLearned(opts = {}) {
  const what = 'the learned predictors\' runtime (perfcard_learned.wasm)';
  try {
    const [{ default: factory }, wasmModule] = await Promise.all([
      import('./perfcard_learned.js'),
      compiledModule(opts, new URL('./perfcard_learned.wasm', import.meta.url)),
    ]);
    return new LearnedRuntime(await instantiateWith(factory, wasmModule, {}));
  } catch (e) {
    throw new PerfCardError({ message: `perfcard: ${what} could not be loaded: ${e?.message ?? e}`, code: 'internal' });
  }
}

// The learned module as the core's module calls it (wasm/remote_learned.cpp, synchronously): views of the
// core's memory in, copied into the learned module's memory, results out. No method throws: an exception
// would unwind through the core's C++ frames and break the core's instance. A call that fails returns 0 / -1
// and leaves {code, detail} for errorText(), which the core throws as the Error it was; a text answer (a
// model's description, a verdict) waits in text(), as UTF-8 bytes, for the core to copy. A trap of the
// learned module (out of memory, a bug) ends the runtime, not the core: every later call fails with the
// reason, and the roofline goes on predicting.
class LearnedRuntime {
  #mod;
  #scratch = 0;
  #capacity = 0;
  #text = new Uint8Array(0);
  #graph = null;     // the staged inputs of the next prepare()
  #sequence = null;
  #stopped = null;
  #error = null;

  constructor(mod) {
    this.#mod = mod;
  }

  /** A view of `count` elements of `heap` (a typed array over the core's memory) at byte address `ptr`. */
  view(heap, ptr, count) {
    const start = (ptr >>> 0) / heap.BYTES_PER_ELEMENT;
    return heap.subarray(start, start + (count >>> 0));
  }

  errorText() {
    return this.#error ? `${this.#error.code}\t${this.#error.detail}` : '';
  }

  text() {
    return this.#text;
  }

  // Runs f against the learned module; a throw (a trap, or memory it cannot get) becomes the failure value.
  #guard(failed, f) {
    if (this.#stopped) return this.#fail({ code: 'internal', detail: this.#stopped }, failed);
    try {
      return f();
    } catch (e) {
      const oom = e instanceof RangeError || /memory/i.test(String(e?.message));
      this.#stopped = `the learned predictors' runtime stopped (${e?.name ?? 'Error'}: ${e?.message ?? e}); ` +
        'reload the page to use them again';
      return this.#fail({ code: oom ? 'limit' : 'internal', detail: this.#stopped }, failed);
    }
  }

  #fail(error, failed) {
    this.#error = error;
    return failed;
  }

  // Room for `bytes` bytes at a 16-byte-aligned pointer, reused call after call.
  #reserve(bytes) {
    if (bytes > this.#capacity) {
      const capacity = Math.max(bytes, 2 * this.#capacity, 4096);
      if (this.#scratch) this.#mod._free(this.#scratch);
      this.#capacity = 0;
      this.#scratch = this.#mod._malloc(capacity);
      if (!this.#scratch) throw new RangeError(`out of memory: ${capacity} bytes in the learned runtime`);
      this.#capacity = capacity;
    }
    return this.#scratch;
  }

  // Copies typed-array views back to back into the scratch space; returns their pointers.
  #put(...views) {
    const offsets = [];
    let total = 0;
    for (const v of views) {
      offsets.push(total);
      total += (v.byteLength + 15) & ~15;
    }
    const base = this.#reserve(total);
    const heap = this.#mod.HEAPU8;
    views.forEach((v, i) => heap.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), base + offsets[i]));
    return offsets.map((o) => base + o);
  }

  // A call that answers {ok, handle, ...}: the handle, or 0 with the failure kept.
  #handle(r) {
    return r.ok ? r.handle : this.#fail(r, 0);
  }

  load(bytes, schemas, loaded) {
    return this.#guard(0, () => {
      this.#error = null;
      // A heap copy of its own: the file's tensors are read in place and need a malloc'ed buffer's alignment.
      const ptr = this.#mod._malloc(Math.max(bytes.length, 1));
      if (!ptr) return this.#fail({ code: 'limit', detail: 'out of memory in the learned runtime' }, 0);
      try {
        this.#mod.HEAPU8.set(bytes, ptr);
        const [pLoaded] = this.#put(loaded);
        const r = this.#mod.loadModel(ptr, bytes.length, schemas, pLoaded, loaded.length);
        if (r.ok) this.#text = new TextEncoder().encode(r.description);
        return this.#handle(r);
      } finally {
        this.#mod._free(ptr);
      }
    });
  }

  // The core's arrays are copied now: its memory may move before prepare().
  stageGraph(nodes, features, op, cls, x, src, dst) {
    this.#graph = { nodes, features, arrays: [op, cls, x, src, dst].map((v) => v.slice()) };
  }

  stageSequence(kernels, features, op, cls, x, unknownOps) {
    this.#sequence = { kernels, features, unknownOps, arrays: [op, cls, x].map((v) => v.slice()) };
  }

  prepare(model, unknownOps) {
    const graph = this.#graph, sequence = this.#sequence;
    this.#graph = this.#sequence = null;
    return this.#guard(0, () => {
      const g = graph?.arrays ?? [], s = sequence?.arrays ?? [];
      const p = this.#put(...g, ...s);
      const [pOp, pCls, pX, pSrc, pDst] = graph ? p : [0, 0, 0, 0, 0];
      const [sOp, sCls, sX] = sequence ? p.slice(g.length) : [0, 0, 0];
      const n = (a, i) => a[i]?.length ?? 0;
      return this.#handle(this.#mod.prepareModel(model, graph !== null, graph?.nodes ?? 0, graph?.features ?? 0,
        pOp, n(g, 0), pCls, n(g, 1), pX, n(g, 2), pSrc, n(g, 3), pDst, n(g, 4),
        sequence !== null, sequence?.kernels ?? 0, sequence?.features ?? 0, sOp, n(s, 0), sCls, n(s, 1), sX, n(s, 2),
        sequence?.unknownOps ?? 0, unknownOps));
    });
  }

  // `queries`: the rows' queries as UTF-8 bytes, `rows` their feature rows back to back; the verdicts'
  // bytes are copied out for text().
  decide(model, state, queries, rows) {
    return this.#guard(-1, () => {
      const [pQuery, pRow] = this.#put(queries, rows);
      const n = this.#mod.decide(model, state, pQuery, queries.length, pRow, rows.length);
      if (n < 0) return this.#fail(this.#mod.lastError(), -1);
      const at = this.#mod.lastText();
      this.#text = this.#mod.HEAPU8.slice(at, at + n);
      return 0;
    });
  }

  /** The machine probe's rates, or a PerfCardError (it is called from JS, not from the core). */
  probe(gemmMs, streamMs) {
    if (this.#stopped) throw new PerfCardError({ message: this.#stopped, code: 'internal' });
    const r = this.#mod.probeMachine(gemmMs, streamMs);
    if (!r.ok) throw new PerfCardError(r);
    const { ok, ...rates } = r;
    return rates;
  }

  release(handle) {
    if (!this.#stopped) this.#guard(undefined, () => this.#mod.release(handle));
  }
}

// Options object -> the JSON the bindings read. The core checks the values (same messages as the CLI).
function optionsJson(options) {
  if (options === undefined || options === null) return '';
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError('perfcard: options must be an object like {dims: {batch: 8}, perNode: false}');
  }
  return JSON.stringify(options, (key, value) => (typeof value === 'bigint' ? value.toString() : value));
}

function asBytes(input) {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (typeof SharedArrayBuffer !== 'undefined' && input instanceof SharedArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  return null;
}

function isBlob(input) {
  return typeof Blob !== 'undefined' && input instanceof Blob;
}

function inputTypeError() {
  return new TypeError('perfcard: the model must be a Uint8Array, an ArrayBuffer, a typed array view or a Blob');
}

// Copies input (bytes or a Blob, streamed chunk by chunk with progress) into a fresh wasm buffer.
// Resolves to [ptr, size]; the caller frees ptr.
async function copyIn(card, input, onProgress) {
  if (!isBlob(input)) {
    const bytes = asBytes(input);
    if (bytes === null) throw inputTypeError();
    const ptr = card._alloc(bytes.length);
    card._heap().set(bytes, ptr);
    onProgress?.(bytes.length, bytes.length);
    return [ptr, bytes.length];
  }
  const size = input.size;
  const ptr = card._alloc(size);
  let offset = 0;
  try {
    onProgress?.(0, size);
    const reader = input.stream().getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const n = Math.min(value.length, size - offset);
      card._heap().set(n === value.length ? value : value.subarray(0, n), ptr + offset);  // no malloc in between
      offset += n;
      onProgress?.(offset, size);
    }
  } catch (e) {
    card._free(ptr);
    throw e;
  }
  return [ptr, offset];
}

// A model parsed once inside one PerfCard instance: analyze() and predict() reuse its graph IR, so a
// setting change costs only shape inference and prediction, never a copy or a parse of the bytes.
class OpenModel {
  #card;
  #handle;
  #size;

  constructor(card, handle, size) {
    this.#card = card;
    this.#handle = handle;
    this.#size = size;
  }

  /** Size of the model file in bytes. */
  get fileBytes() {
    return this.#size;
  }

  get closed() {
    return this.#handle === 0;
  }

  #check() {
    if (this.#handle === 0) throw new Error('perfcard: this model was closed');
  }

  /** Same document as `perfcard analyze --json` (synchronous). */
  analyze(options) {
    this.#check();
    return this.#card._call('modelAnalyze', this.#handle, optionsJson(options));
  }

  /** Same document as `perfcard predict --json` (synchronous). */
  predict(options) {
    this.#check();
    return this.#card._call('modelPredict', this.#handle, optionsJson(options));
  }

  /** Frees the graph IR and the analyses kept with it in wasm memory. Idempotent. */
  close() {
    if (this.#handle !== 0 && !this.#card.broken) this.#card._closeModel(this.#handle);
    this.#handle = 0;
  }
}

// One instance of the wasm module. Its methods do no I/O of their own; the model bytes are copied into
// wasm memory once and freed after the call.
class PerfCard {
  #mod;
  #broken = false;
  #devices = null;
  #learnedOpts;
  #learned = null;  // Promise<LearnedRuntime>, from the first loadPredictor()

  constructor(mod, learnedOpts) {
    this.#mod = mod;
    this.#learnedOpts = learnedOpts;
  }

  /** Version of the core, e.g. "0.1.0". */
  get version() {
    return this.#mod.version();
  }

  /** schema_version of the documents analyze() returns. */
  get schemaVersion() {
    return this.#mod.schemaVersion();
  }

  /** schema_version of the documents predict() returns. */
  get predictSchemaVersion() {
    return this.#mod.predictSchemaVersion();
  }

  /** Bytes of the wasm heap in use (allocated and not freed): a diagnostic. */
  get heapInUse() {
    return this.#mod.heapInUse();
  }

  /** Models opened with openModel() and not closed yet. */
  get openModels() {
    return this.#mod.openModelCount();
  }

  /** Bytes of wasm linear memory (it grows, never shrinks). */
  get memoryBytes() {
    return this.#mod.HEAPU8.length;
  }

  /** True after the module trapped (out of memory, a bug): create a new instance. */
  get broken() {
    return this.#broken;
  }

  _alloc(size) {
    if (this.#broken) throw brokenError();
    const ptr = this.#mod._malloc(Math.max(size, 1)) >>> 0;
    if (ptr === 0) {
      throw new PerfCardError({ message: `out of memory: cannot hold a ${size}-byte model in WebAssembly memory` });
    }
    return ptr;
  }

  _free(ptr) {
    if (!this.#broken) this.#mod._free(ptr);
  }

  _heap() {
    return this.#mod.HEAPU8;  // after malloc: growing memory replaces the view
  }

  // Calls a binding that returns {ok, ...} | {ok: false, ...}; a trap marks the instance broken.
  _raw(name, ...args) {
    if (this.#broken) throw brokenError();
    let result;
    try {
      result = this.#mod[name](...args);
    } catch (e) {
      // Only a trap of this module gets here (bindings.cpp catches every C++ exception, and the learned
      // runtime never throws into it): the module's state is lost.
      this.#broken = true;
      const err = new PerfCardError({
        message: `perfcard: the WebAssembly module stopped (${e?.name ?? 'Error'}: ${e?.message ?? e}); ` +
          'this instance cannot be used again: create a new one',
        code: 'internal',
      });
      err.cause = e;
      throw err;
    }
    if (!result.ok) throw new PerfCardError(result);
    return result;
  }

  // The document a binding left in wasm memory, decoded in place, then freed.
  _call(name, ...args) {
    const r = this._raw(name, ...args);
    let text;
    try {
      text = utf8.decode(this.#mod.HEAPU8.subarray(r.ptr, r.ptr + r.length));
    } finally {
      this.#mod.releaseDocument();
    }
    return JSON.parse(text);
  }

  _closeModel(handle) {
    this.#mod.closeModel(handle);
  }

  // Runs a binding on bytes already in wasm memory and frees them.
  #onBuffer(name, ptr, size, opts) {
    try {
      return this._call(name, ptr, size, opts);
    } finally {
      this._free(ptr);
    }
  }

  #sync(name, input, options) {
    const bytes = asBytes(input);
    if (bytes === null) throw inputTypeError();
    const opts = optionsJson(options);
    const ptr = this._alloc(bytes.length);
    this._heap().set(bytes, ptr);
    return this.#onBuffer(name, ptr, bytes.length, opts);
  }

  async #async(name, input, options) {
    if (!isBlob(input)) return this.#sync(name, input, options);
    const opts = optionsJson(options);
    const [ptr, size] = await copyIn(this, input);
    return this.#onBuffer(name, ptr, size, opts);
  }

  /**
   * Loads a learned predictor's weights file (e.g. the bytes of weights/trees.pcwt, fetched when first
   * needed). The first call also loads the learned predictors' runtime (perfcard_learned.wasm). The bytes
   * are checked against the manifest built into the module (size, sha256), the format and the feature
   * schema; a file that fails rejects with a PerfCardError (code 'bad_data') naming it and the reason, and
   * predictions go on with the predictors already loaded. Resolves to {name, version}.
   */
  async loadPredictor(input, fileName) {
    const bytes = asBytes(input);
    if (bytes === null) throw inputTypeError();
    // Into wasm memory once (the caller may reuse its buffer while the runtime loads); the manifest's check
    // comes first, so a tampered file is named as such even where the runtime cannot be fetched.
    const ptr = this._alloc(bytes.length);
    this._heap().set(bytes, ptr);
    try {
      this._raw('verifyPredictor', ptr, bytes.length, String(fileName));
      await this.loadLearnedRuntime();
      this.#mod.perfcardLearned = await this.#learned;
      const r = this._raw('loadPredictor', ptr, bytes.length, String(fileName));
      return { name: r.name, version: r.version };
    } finally {
      this._free(ptr);
    }
  }

  /**
   * Starts loading the learned predictors' runtime (perfcard_learned.wasm) if it is not loading yet; the
   * first loadPredictor() does it anyway. A caller that is about to fetch weights files calls it first, so
   * the runtime downloads beside them. Resolves when it is ready; a failure may be retried.
   */
  loadLearnedRuntime() {
    if (this.#learned === null) {
      this.#learned = instantiateLearned(this.#learnedOpts);
      this.#learned.catch(() => { this.#learned = null; });
    }
    return this.#learned.then(() => undefined);
  }

  /** Analyzes model bytes synchronously. */
  analyzeSync(input, options) {
    return this.#sync('analyzeBuffer', input, options);
  }

  /** Analyzes model bytes or a Blob/File (streamed into wasm memory without a second full copy). */
  async analyze(input, options) {
    return this.#async('analyzeBuffer', input, options);
  }

  /** Predicts synchronously: the document of `perfcard predict --json`. */
  predictSync(input, options) {
    return this.#sync('predictBuffer', input, options);
  }

  /** Predicts from model bytes or a Blob/File. */
  async predict(input, options) {
    return this.#async('predictBuffer', input, options);
  }

  /**
   * "This device": measures this machine for about half a second (an f32 matrix product in cache and a read
   * over a buffer larger than L3, one thread), blocking the thread it runs on, so call it in a worker. The
   * first call loads the learned predictors' runtime (perfcard_learned.wasm), where the probe lives. Resolves to
   * {gemm_gflops, stream_gbs, elapsed_ms, gemm_blocks, stream_passes, device}: device is the extraDevices
   * entry ("this-device", arch "browser") that predict() takes with cpuRuntime "onnxruntime-web".
   * opts.gemmMs / opts.streamMs: the time spent on each measurement (defaults 300 / 200 ms).
   */
  async probeMachine(opts = {}) {
    const ms = (v, d, what) => {
      if (v === undefined) return d;
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${what} must be a number of milliseconds`);
      return v;
    };
    const gemmMs = ms(opts.gemmMs, 300, 'gemmMs');
    const streamMs = ms(opts.streamMs, 200, 'streamMs');
    // The probe lives in the learned module (fetched on first use): the first download does without it.
    // The core writes the device entry, as the CLI's probe does.
    await this.loadLearnedRuntime();
    const r = (await this.#learned).probe(gemmMs, streamMs);
    return { ...r, device: this._call('probeDeviceEntry', r.gemm_gflops, r.stream_gbs, r.gemm_blocks, r.stream_passes) };
  }

  /** The embedded device catalog, carbon regions, runtimes and predictor (parsed once). */
  devices() {
    if (this.#devices === null) this.#devices = this._call('devicesJson');
    return structuredCloneSafe(this.#devices);
  }

  /**
   * Parses a model once and keeps it in wasm memory: returns an OpenModel whose analyze()/predict() are
   * synchronous. opts.onProgress(loaded, total) reports the copy of a Blob into wasm memory.
   */
  async openModel(input, opts = {}) {
    const [ptr, size] = await copyIn(this, input, opts.onProgress);
    let result;
    try {
      result = this._raw('openModel', ptr, size);
    } finally {
      this._free(ptr);  // the IR owns what it needs: the bytes go now
    }
    return new OpenModel(this, result.handle, size);
  }

  /** openModel() for bytes already in memory, synchronously. */
  openModelSync(input) {
    const bytes = asBytes(input);
    if (bytes === null) throw inputTypeError();
    const ptr = this._alloc(bytes.length);
    this._heap().set(bytes, ptr);
    let result;
    try {
      result = this._raw('openModel', ptr, bytes.length);
    } finally {
      this._free(ptr);
    }
    return new OpenModel(this, result.handle, bytes.length);
  }
}

function structuredCloneSafe(value) {
  return typeof structuredClone === 'function' ? structuredClone(value) : JSON.parse(JSON.stringify(value));
}

/**
 * Creates an independent PerfCard instance.
 * opts: {wasmUrl?: string|URL, wasmBinary?: ArrayBuffer|Uint8Array, wasmModule?: WebAssembly.Module,
 *        print?: (s) => void, printErr?: (s) => void,
 *        learned?: {wasmUrl?, wasmBinary?, wasmModule?}: where the learned predictors' runtime comes from
 *        (default: perfcard_learned.wasm beside this file), fetched on the first loadPredictor()}
 */
export async function createPerfCard(opts = {}) {
  return new PerfCard(await instantiate(opts), opts.learned ?? {});
}

let shared = null;
// Learned predictors loaded through the module-level loadPredictor(): file name -> bytes, loaded again into
// a fresh shared instance when the old one is recycled.
const sharedPredictors = new Map();

// Wasm memory never shrinks: once a call has grown the shared instance past this, the next call gets a
// fresh instance (cheap: the compiled module is cached) and the old one goes when nothing holds it.
const RECYCLE_BYTES = 256 * 1024 * 1024;

async function onShared(method, input, options) {
  const card = await init();
  const mine = shared;
  try {
    return await card[method](input, options);
  } finally {
    if (shared === mine && !card.broken && card.memoryBytes > RECYCLE_BYTES) shared = null;
  }
}

/** Loads the shared instance that analyze() uses (optional: analyze() loads it on first use). */
export async function init(opts) {
  if (shared === null) {
    shared = createPerfCard(opts).then(async (card) => {
      // A file the fresh instance cannot load (its runtime unreachable, say) leaves it to the roofline: the
      // next loadPredictor() of that file tries again.
      for (const [name, bytes] of sharedPredictors) await card.loadPredictor(bytes, name).catch(() => {});
      return card;
    });
    shared.catch(() => { shared = null; });
  }
  const card = await shared;
  if (card.broken) {
    shared = null;
    return init(opts);
  }
  return card;
}

/**
 * Analyzes an ONNX model. input: Uint8Array | ArrayBuffer | ArrayBufferView | Blob.
 * options: {dims?: {[symbol: string]: number}, perNode?: boolean}.
 * Resolves to the analysis (same content as `perfcard analyze --json`); rejects with a PerfCardError.
 */
export async function analyze(input, options) {
  return onShared('analyze', input, options);
}

/**
 * Predicts latency, throughput, memory, energy, carbon and MIG for each device and batch.
 * options: {devices?: string[] | 'all' | 'cpus' | 'every', batch?: number[] | number, precision?, mode?,
 *           dims?, region?, gridGPerKwh?, pue?, latencyTargetMs?, runtime?, cpuRuntime?, kernels?,
 *           extraDevices?: catalog-schema entries of devices the catalog lacks}.
 * Resolves to the same content as `perfcard predict --json`; rejects with a PerfCardError.
 */
export async function predict(input, options) {
  return onShared('predict', input, options);
}

/**
 * Loads a learned predictor's weights file into the shared instance (and into every shared instance after
 * it): the module-level predict() then uses it ('auto' picks it where it beats the roofline, or ask for it
 * by name). Throws a PerfCardError naming the file and the reason when the file is refused.
 */
export async function loadPredictor(input, fileName) {
  const card = await init();
  const r = await card.loadPredictor(input, fileName);
  sharedPredictors.set(String(fileName), asBytes(input).slice());
  return r;
}

/** The embedded device catalog (ids, names, memory, peaks, MIG profiles), carbon regions and predictor. */
export async function devices() {
  const card = await init();
  return card.devices();
}

/** Parses a model once with the shared instance; see PerfCard.openModel. */
export async function openModel(input, opts) {
  const card = await init();
  return card.openModel(input, opts);
}
