// Type declarations for perfcard.js. The analysis document is described in docs/analyze-json.md; its
// main fields are typed here, and every object stays open to fields added in later schema versions.

export type ModelInput = Uint8Array | ArrayBuffer | SharedArrayBuffer | ArrayBufferView | Blob;

export interface AnalyzeOptions {
  /** Sizes for symbolic input dims, e.g. {batch: 8, sequence: 128}. Unbound dims default to 1 with a warning. */
  dims?: Record<string, number | bigint | string>;
  /** Include `nodes`: every node with its shapes and costs. */
  perNode?: boolean;
}

export interface InitOptions {
  /** Where the .wasm is; default: perfcard_wasm.wasm next to perfcard.js (resolved against import.meta.url).
   *  Fetched in browsers and workers, read from disk for file: URLs in node; compiled once per URL. */
  wasmUrl?: string | URL;
  /** The .wasm bytes, when the caller has them already. */
  wasmBinary?: BufferSource;
  /** A compiled module, e.g. shared between workers. */
  wasmModule?: WebAssembly.Module;
  print?: (text: string) => void;
  printErr?: (text: string) => void;
}

export interface ShapeInfo {
  dtype: string;
  /** null: rank unknown; a null entry: that dim unknown. */
  shape: Array<number | null> | null;
  estimated?: boolean;
  [key: string]: unknown;
}

export interface DeclaredValue {
  name: string;
  dtype: string;
  /** Numbers, symbol names, or null for an unknown dim; null when the rank is unknown. */
  dims: Array<number | string | null> | null;
  bound?: ShapeInfo;
  inferred?: ShapeInfo;
  [key: string]: unknown;
}

export interface Location {
  byte_offset?: number;
  node?: string;
  op_type?: string;
  graph?: string;
}

export interface Analysis {
  schema_version: number;
  model: {
    ir_version: number;
    opsets: Record<string, number>;
    producer: string;
    graph_name: string;
    file_bytes: number;
    inputs: DeclaredValue[];
    outputs: DeclaredValue[];
    [key: string]: unknown;
  };
  symbols: Array<{ name: string; value: number; bound: boolean }>;
  totals: {
    macs: number;
    flops: number;
    params: number;
    weight_bytes: number;
    external_weight_bytes: number;
    activations: number;
    bytes_read: number;
    bytes_written: number;
    peak_activation_bytes: number;
    peak_activation_complete: boolean;
    peak_activation_at?: string;
    input_bytes: number;
    output_bytes: number;
    nodes: number;
    subgraph_nodes: number;
    unknown_nodes: number;
    uncosted_nodes: number;
    estimated_values: number;
    [key: string]: unknown;
  };
  op_types: Array<{ op_type: string; count: number; macs: number; flops: number; bytes: number }>;
  unknown_ops: string[];
  warnings: Array<{ message: string; where?: Location }>;
  /** Present with perNode: true. */
  nodes?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

/** A problem with the model or the options. `message` is the core's message, as the CLI prints it. */
export class PerfCardError extends Error {
  name: 'PerfCardError';
  /** The message without its location suffix. */
  detail: string;
  byteOffset?: number;
  node?: string;
  opType?: string;
  graph?: string;
}

export interface PerfCard {
  readonly version: string;
  readonly schemaVersion: number;
  /** Bytes of the wasm heap in use (a diagnostic: calls leave nothing behind). */
  readonly heapInUse: number;
  /** True after the module trapped; create a new instance. */
  readonly broken: boolean;
  analyze(input: ModelInput, options?: AnalyzeOptions): Promise<Analysis>;
  analyzeSync(input: Uint8Array | ArrayBuffer | SharedArrayBuffer | ArrayBufferView, options?: AnalyzeOptions): Analysis;
}

/** Creates an independent instance (its own wasm memory). */
export function createPerfCard(options?: InitOptions): Promise<PerfCard>;

/** Loads the shared instance that analyze() uses; optional. */
export function init(options?: InitOptions): Promise<PerfCard>;

/** Analyzes an ONNX model with the shared instance. */
export function analyze(input: ModelInput, options?: AnalyzeOptions): Promise<Analysis>;
