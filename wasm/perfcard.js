// PerfCard's JS API: the C++ core compiled to WebAssembly, as an ES module.
//
//   import { analyze } from './perfcard.js';
//   const report = await analyze(bytes, { dims: { batch: 8 }, perNode: false });
//
// `report` is a plain object with the same content as `perfcard analyze MODEL --json`. A problem with the
// model or the options rejects with a PerfCardError (a JS Error) whose message is the core's message, as
// the CLI prints it after "perfcard: error: ".
//
// Runs in browsers, workers and node (>= 18). The .wasm sits next to this file: browsers and workers
// fetch it relative to import.meta.url, node reads it from disk. It is compiled once per URL and
// shared by every instance. No threads, no COOP/COEP needed.
import createPerfCardModule from './perfcard_wasm.js';

export class PerfCardError extends Error {
  constructor(failure) {
    super(failure.message);
    this.name = 'PerfCardError';
    this.detail = failure.detail ?? failure.message;  // the message without its location
    for (const key of ['byteOffset', 'node', 'opType', 'graph']) {
      if (failure[key] !== undefined) this[key] = failure[key];
    }
  }
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

async function instantiate(opts = {}) {
  let wasmModule;
  if (opts.wasmModule !== undefined) wasmModule = opts.wasmModule;
  else if (opts.wasmBinary !== undefined) wasmModule = await WebAssembly.compile(opts.wasmBinary);
  else {
    // The literal new URL('./x.wasm', import.meta.url) lets bundlers (webpack 5, Vite) ship the file.
    const url = opts.wasmUrl !== undefined
      ? new URL(String(opts.wasmUrl), import.meta.url)
      : new URL('./perfcard_wasm.wasm', import.meta.url);
    wasmModule = await compileCached(url);
  }
  // Emscripten's own loader is bypassed (3.1.6 cannot read files from an ES module in node, and its
  // errors are vague): it gets the compiled module through instantiateWasm.
  let fail;
  const failed = new Promise((resolve, reject) => { fail = reject; });
  const ready = createPerfCardModule({
    print: opts.print ?? ((s) => console.log(s)),
    printErr: opts.printErr ?? ((s) => console.warn(s)),
    instantiateWasm(imports, done) {
      WebAssembly.instantiate(wasmModule, imports).then((instance) => done(instance, wasmModule), fail);
      return {};
    },
  });
  return Promise.race([ready, failed]);
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

// One instance of the wasm module. Its methods do no I/O of their own; the model bytes are copied into
// wasm memory once and freed after the call.
class PerfCard {
  #mod;
  #broken = false;

  constructor(mod) {
    this.#mod = mod;
  }

  /** Version of the core, e.g. "0.1.0". */
  get version() {
    return this.#mod.version();
  }

  /** schema_version of the documents analyze() returns. */
  get schemaVersion() {
    return this.#mod.schemaVersion();
  }

  /** Bytes of the wasm heap in use (allocated and not freed): a diagnostic. */
  get heapInUse() {
    return this.#mod.heapInUse();
  }

  /** True after the module trapped (out of memory, a bug): create a new instance. */
  get broken() {
    return this.#broken;
  }

  #alloc(size) {
    if (this.#broken) throw new Error('perfcard: this instance failed earlier and cannot be used again');
    const ptr = this.#mod._malloc(Math.max(size, 1)) >>> 0;
    if (ptr === 0) {
      throw new PerfCardError({ message: `out of memory: cannot hold a ${size}-byte model in WebAssembly memory` });
    }
    return ptr;
  }

  #run(ptr, size, opts) {
    let result;
    try {
      result = this.#mod.analyzeBuffer(ptr, size, opts);
    } catch (e) {
      // Only a trap gets here (bindings.cpp catches every C++ exception): the instance is unusable.
      this.#broken = true;
      throw e;
    } finally {
      if (!this.#broken) this.#mod._free(ptr);
    }
    if (!result.ok) throw new PerfCardError(result);
    return JSON.parse(result.json);
  }

  /** Analyzes model bytes synchronously. */
  analyzeSync(input, options) {
    const bytes = asBytes(input);
    if (bytes === null) throw inputTypeError();
    const opts = optionsJson(options);
    const ptr = this.#alloc(bytes.length);
    this.#mod.HEAPU8.set(bytes, ptr);  // HEAPU8 after malloc: growing memory replaces the view
    return this.#run(ptr, bytes.length, opts);
  }

  /** Analyzes model bytes or a Blob/File (streamed into wasm memory without a second full copy). */
  async analyze(input, options) {
    if (!isBlob(input)) return this.analyzeSync(input, options);
    const opts = optionsJson(options);
    const size = input.size;
    const ptr = this.#alloc(size);
    let offset = 0;
    try {
      const reader = input.stream().getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const n = Math.min(value.length, size - offset);
        this.#mod.HEAPU8.set(n === value.length ? value : value.subarray(0, n), ptr + offset);
        offset += n;
      }
    } catch (e) {
      this.#mod._free(ptr);
      throw e;
    }
    return this.#run(ptr, offset, opts);
  }
}

/**
 * Creates an independent PerfCard instance.
 * opts: {wasmUrl?: string|URL, wasmBinary?: ArrayBuffer|Uint8Array, wasmModule?: WebAssembly.Module,
 *        print?: (s) => void, printErr?: (s) => void}
 */
export async function createPerfCard(opts = {}) {
  return new PerfCard(await instantiate(opts));
}

let shared = null;

/** Loads the shared instance that analyze() uses (optional: analyze() loads it on first use). */
export async function init(opts) {
  if (shared === null) {
    shared = createPerfCard(opts);
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
  const card = await init();
  return card.analyze(input, options);
}
