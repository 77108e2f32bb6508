// Type declarations for perfcard.js. The analysis document is described in docs/analyze-json.md; its
// main fields are typed here, and every object stays open to fields added in later schema versions.

export type ModelInput = Uint8Array | ArrayBuffer | SharedArrayBuffer | ArrayBufferView | Blob;

export interface AnalyzeOptions {
  /** Sizes for symbolic input dims, e.g. {batch: 8, sequence: 128}. Unbound dims default to 1 with a warning. */
  dims?: Record<string, number | bigint | string>;
  /** Include `nodes`: every node with its shapes and costs. */
  perNode?: boolean;
}

export type Precision = 'fp32' | 'tf32' | 'fp16' | 'bf16' | 'fp8' | 'int8';

/** The options of `perfcard predict`, by JS name. */
export interface PredictOptions {
  /** Device ids, or 'all' (every GPU, the default), 'cpus', 'every'; a comma-separated string also works. */
  devices?: string[] | string;
  /** Batch sizes bound to the model's batch dim (default [1]). */
  batch?: number[] | number | string;
  /** Default: fp16 on GPUs, fp32 on CPUs; a device lacking it falls back (and says so). */
  precision?: Precision;
  mode?: 'inference' | 'training';
  /** Other symbolic dims, e.g. {sequence: 128}. */
  dims?: Record<string, number | bigint | string>;
  /** Carbon region code (see devices().regions). */
  region?: string;
  /** Grid intensity in gCO2/kWh; overrides region. */
  gridGPerKwh?: number;
  pue?: number;
  /** MIG profiles slower than this do not qualify. */
  latencyTargetMs?: number;
  /** GPU runtime (default 'pytorch-eager'). */
  runtime?: string;
  /** pytorch-eager on GPUs: the host's time per launched kernel in microseconds (default: the fitted
   *  constant); it sets eager's small-batch latency. Learned predictors decline it (the roofline predicts). */
  hostUs?: number;
  /** CPU runtime (default 'onnxruntime'). */
  cpuRuntime?: string;
  /** Include per-kernel times (kernels[]) in each prediction. */
  kernels?: boolean;
  /** Include each row's feature vector (the learned predictors' input). */
  features?: boolean;
  /** 'auto' (default: per device family, a learned predictor where it beats the roofline), 'roofline',
   *  'trees' / 'gnn' / 'transformer' / 'ensemble' (after loadPredictor; the ensemble after its members). */
  predictor?: 'auto' | 'roofline' | 'trees' | 'gnn' | 'transformer' | 'ensemble';
  /** Devices the catalog lacks, in its schema (weights/devices.json entries: id, name, kind, arch,
   *  peak_tflops or peak_fp32_gflops, memory_bandwidth_gbs, ...), added for this call; name them in devices. */
  extraDevices?: Array<Record<string, unknown>>;
}

export interface MigProfilePrediction {
  name: string;
  memory_gb: number;
  fits: boolean;
  meets_target: boolean;
  latency_ms: number;
  throughput_per_s: number;
  instances: number;
  total_throughput_per_s: number;
}

export interface KernelPrediction {
  /** The node that opened the kernel (a backward kernel: its forward's); an optimizer pass: what it does. */
  name: string;
  op_type: string;
  /** The core's class of that node ('conv', 'matmul', 'elementwise', ...: `perfcard analyze --per-node`). */
  class: string;
  /** A training step's kernels are 'backward' and 'update' too. */
  phase: 'forward' | 'backward' | 'update';
  time_ms: number;
  compute_ms: number;
  memory_ms: number;
  flops: number;
  bytes: number;
}

export interface DevicePrediction {
  device: string;
  device_name: string;
  batch: number;
  precision: Precision;
  precision_requested: Precision;
  runtime: string;
  latency_ms: number;
  throughput_per_s: number;
  /** Relative (0.2 = +-20%); 0 = no held-out evaluation for this device family. */
  uncertainty: number;
  /** [latency / (1 + uncertainty), latency x (1 + uncertainty)] */
  latency_band_ms: [number, number];
  /** Device busy time within latency_ms (the rest waits on the host). */
  device_busy_ms: number;
  /** Training rows only: device_busy_ms over the step's phases. */
  device_busy_ms_by_phase?: { forward: number; backward: number; update: number };
  /** The device is busy less than half of the time: the host (dispatch) binds. */
  host_bound: boolean;
  /** pytorch-eager on GPUs: the host's time per kernel the roofline under the row assumed (hostUs, else the
   *  fitted constant; a learned row corrects that roofline); null for other runtimes. */
  host_us_per_kernel: number | null;
  /** Far from what the learned predictor was trained on; warnings say why. */
  out_of_distribution: boolean;
  /** Why, a word each (empty when not out of distribution); the first three mean the roofline predicts. */
  ood_reasons: Array<'training-step' | 'untrained-runtime' | 'no-held-out-rows' | 'untrained-device-family' |
    'feature-range' | 'unknown-ops' | 'embedding-distance'>;
  /** What the memory figures (and, for 'training', the latency: one step) are for. */
  memory_protocol: string;
  peak_memory_mb: number;
  /** allocator: what PyTorch's caching allocator's segments hold beyond the tensors (documented sizes,
   *  packed full: a lower bound, not measured). */
  memory_mb: Record<'weights' | 'activations' | 'workspace' | 'context' | 'gradients' | 'optimizer' |
    'optimizer_update' | 'saved_activations' | 'allocator', number>;
  device_memory_gb: number;
  fits: boolean;
  power_w: number | null;
  energy_j_per_sample: number | null;
  carbon_g_per_1000: number | null;
  mig: { recommended: string | null; profiles: MigProfilePrediction[] } | null;
  predictor: { name: string; version: string; requested: string; baseline_latency_ms: number | null };
  kernels?: KernelPrediction[];
  features?: Record<string, number | null>;
  warnings: string[];
  [key: string]: unknown;
}

/** The document of `perfcard predict --json` (docs/predict-json.md). */
export interface Prediction {
  schema_version: number;
  batch_symbol: string | null;
  carbon: { region: string; grid_g_per_kwh: number; pue: number };
  predictions: DevicePrediction[];
  warnings: string[];
  [key: string]: unknown;
}

export interface DeviceInfo {
  id: string;
  name: string;
  kind: 'gpu' | 'cpu';
  vendor: string;
  arch: string;
  /** Predictor family ("hopper", "ampere", ...): the key into predictor.accuracy. */
  family: string | null;
  memory_gb: number | null;
  memory_bandwidth_gbs: number | null;
  /** Dense TFLOP/s by precision; an absent precision is unsupported. */
  peak_tflops: Partial<Record<Precision, number>>;
  sm_count: number | null;
  l2_mb: number | null;
  tdp_w: number | null;
  idle_w: number | null;
  /** Where tdp_w and idle_w come from (null where the catalog has no figure). */
  power_sources: { tdp_w: string | null; idle_w: string | null };
  cores: number | null;
  peak_fp32_gflops: number | null;
  mig: {
    compute_slices_total: number;
    memory_slices_total: number;
    profiles: Array<{ name: string; memory_gb: number; compute_slices: number; memory_slices: number; max_instances: number }>;
    source: string;
  } | null;
  [key: string]: unknown;
}

/** The embedded catalog, carbon table, runtimes and predictor. */
export interface Catalog {
  devices: DeviceInfo[];
  regions: Array<{ code: string; name: string; g_per_kwh: number; year: number; source: string }>;
  default_region: string;
  default_pue: number;
  pue_source: string;
  runtimes: Array<{ name: string; kind: 'gpu' | 'cpu' }>;
  predictor: {
    name: string;
    version: string;
    /** Which scripts fitted the constants and when (the fit's whole record is in weights/roofline.json). */
    provenance: string;
    /** Held-out MAPE by device family. */
    accuracy: Record<string, { mape: number; rows: number; source: string }>;
  };
  version: string;
}

export interface OpenOptions {
  /** Called while a Blob is copied into wasm memory. */
  onProgress?: (loaded: number, total: number) => void;
}

/** A model parsed once; analyze() and predict() reuse its graph IR, and predict() keeps the analyses of the
 *  last few bound dims (batch, sequence, ...) for the next call (a sweep's 8 batches are analyzed once). */
export interface OpenModel {
  readonly fileBytes: number;
  readonly closed: boolean;
  analyze(options?: AnalyzeOptions): Analysis;
  predict(options?: PredictOptions): Prediction;
  /** Frees the model's wasm memory, its kept analyses included; idempotent. */
  close(): void;
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
  /** Where the learned predictors' runtime comes from (default: perfcard_learned.wasm next to perfcard.js),
   *  loaded on the first loadPredictor(). */
  learned?: { wasmUrl?: string | URL; wasmBinary?: BufferSource; wasmModule?: WebAssembly.Module };
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
  /** What kind of failure, stable across versions (a trap of the WebAssembly module is 'internal'). */
  code: 'invalid_model' | 'malformed' | 'limit' | 'bad_option' | 'bad_data' | 'internal';
  byteOffset?: number;
  node?: string;
  opType?: string;
  graph?: string;
}

export interface PerfCard {
  readonly version: string;
  readonly schemaVersion: number;
  /** Size of the instance's wasm memory: it grows with the largest model analyzed and never shrinks. */
  readonly memoryBytes: number;
  /** Bytes of the wasm heap in use (a diagnostic: calls leave nothing behind). */
  readonly heapInUse: number;
  /** True after the module trapped; create a new instance. */
  readonly broken: boolean;
  /** schema_version of the documents predict() returns. */
  readonly predictSchemaVersion: number;
  /** Models opened and not closed. */
  readonly openModels: number;
  analyze(input: ModelInput, options?: AnalyzeOptions): Promise<Analysis>;
  analyzeSync(input: Uint8Array | ArrayBuffer | SharedArrayBuffer | ArrayBufferView, options?: AnalyzeOptions): Analysis;
  predict(input: ModelInput, options?: PredictOptions): Promise<Prediction>;
  predictSync(input: Uint8Array | ArrayBuffer | SharedArrayBuffer | ArrayBufferView, options?: PredictOptions): Prediction;
  /** Loads a learned predictor file (e.g. "trees.pcwt"), checked against the built-in manifest; the first
   *  call also loads the learned predictors' runtime (perfcard_learned.wasm). */
  loadPredictor(bytes: Uint8Array | ArrayBuffer, fileName: string): Promise<{ name: string; version: string }>;
  /** Starts loading the learned predictors' runtime (the first loadPredictor() does it anyway), e.g. beside
   *  the weights files' downloads. */
  loadLearnedRuntime(): Promise<void>;
  devices(): Catalog;
  /** "This device": about half a second of measurement on this machine (it blocks its thread: call it in a
   *  worker); the first call loads perfcard_learned.wasm, where the probe lives. */
  probeMachine(options?: { gemmMs?: number; streamMs?: number }): Promise<MachineProbe>;
  openModel(input: ModelInput, options?: OpenOptions): Promise<OpenModel>;
  openModelSync(input: Uint8Array | ArrayBuffer | SharedArrayBuffer | ArrayBufferView): OpenModel;
}

/** Creates an independent instance (its own wasm memory). */
export function createPerfCard(options?: InitOptions): Promise<PerfCard>;

/** Loads the shared instance that analyze() uses; optional. */
export function init(options?: InitOptions): Promise<PerfCard>;

/** Analyzes an ONNX model with the shared instance (replaced by a fresh one after a model over 256 MiB,
 *  since wasm memory cannot shrink). A single model can be at most 2 GiB. */
export function analyze(input: ModelInput, options?: AnalyzeOptions): Promise<Analysis>;

/** Predicts with the shared instance: the document of `perfcard predict --json` (the instance is replaced
 *  like analyze()'s after a model over 256 MiB). */
export function predict(input: ModelInput, options?: PredictOptions): Promise<Prediction>;

/** Loads a learned predictor file (e.g. the bytes of weights/trees.pcwt) into the shared instance that
 *  predict() uses, and into every later one; rejects with a PerfCardError ('bad_data') naming the file and
 *  the reason when the file is refused. */
export function loadPredictor(bytes: Uint8Array | ArrayBuffer, fileName: string): Promise<{ name: string; version: string }>;

/** The embedded device catalog, carbon regions and predictor. */
export function devices(): Promise<Catalog>;

/** What probeMachine() measured, and the extraDevices entry that stands for this machine. */
export interface MachineProbe {
  gemm_gflops: number;
  stream_gbs: number;
  elapsed_ms: number;
  gemm_blocks: number;
  stream_passes: number;
  /** Predict with {extraDevices: [device], devices: ['this-device'], cpuRuntime: 'onnxruntime-web'}. */
  device: Record<string, unknown>;
}

/** Parses a model once with the shared instance. */
export function openModel(input: ModelInput, options?: OpenOptions): Promise<OpenModel>;
