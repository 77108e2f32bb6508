// The table's words that are pure functions of a prediction row (web/format.js): no browser needed.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as F from '../../web/format.js';

const profile = (name, memory_gb, fits, meets_target, latency_ms) => ({ name, memory_gb, fits, meets_target, latency_ms });

test('MIG column: the recommended profile, else why none is', () => {
  assert.equal(F.migText({ mig: null }), '–');
  assert.equal(F.migText({ mig: { recommended: '1g.10gb', profiles: [] } }), '1g.10gb');
  const tooBig = { peak_memory_mb: 100_000, mig: { recommended: null, profiles: [profile('1g.10gb', 10, false, true, 5), profile('7g.80gb', 80, false, true, 1)] } };
  assert.equal(F.migText(tooBig), 'none fits: needs 105 GB, the largest slice 80 GB less 10% headroom');
  const slow = { peak_memory_mb: 500, mig: { recommended: null, profiles: [profile('1g.10gb', 10, true, false, 12.5), profile('7g.80gb', 80, true, false, 6.25)] } };
  assert.equal(F.migText(slow), 'none meets the target: best 6.25 ms');
});

test('an out-of-distribution row says why in words; an unknown reason is shown as the core gave it', () => {
  assert.equal(F.oodText({ ood_reasons: [] }), '');
  assert.equal(F.oodText({}), '');
  assert.equal(F.oodText({ ood_reasons: ['feature-range', 'embedding-distance'] }),
    'features outside the training rows\' range; a model far from every model it trained on');
  assert.equal(F.oodText({ ood_reasons: ['something-new'] }), 'something-new');
});

test('host-bound rows say how long the device idles; others say nothing', () => {
  assert.equal(F.hostBoundText({ host_bound: true, latency_ms: 5, device_busy_ms: 1, threads: null }), 'host-bound: GPU busy 1.00 ms, idle 80%');
  assert.equal(F.hostBoundText({ host_bound: true, latency_ms: 2, device_busy_ms: 0.5, threads: 2 }), 'host-bound: CPU busy 0.500 ms, idle 75%');
  assert.equal(F.hostBoundText({ host_bound: false, latency_ms: 5, device_busy_ms: 4, threads: null }), null);
  // eager on a GPU says which host time per kernel the roofline assumed, where the roofline made the row;
  // a learned row corrects it by its measured hosts, so the assumed figure is in its tooltip only
  const eager = { host_bound: true, latency_ms: 5, device_busy_ms: 1, threads: null, host_us_per_kernel: 40.536 };
  assert.equal(F.hostBoundText({ ...eager, predictor: { name: 'roofline' } }), 'host-bound: GPU busy 1.00 ms, idle 80%, host 40.5 µs/kernel');
  assert.equal(F.hostBoundText({ ...eager, predictor: { name: 'gnn' } }), 'host-bound: GPU busy 1.00 ms, idle 80%');
  assert.match(F.hostBoundTitle({ ...eager, predictor: { name: 'gnn' } }), /gnn predictor corrects the roofline \(40\.5 µs of host time per kernel\)/);
  assert.match(F.hostBoundTitle({ ...eager, predictor: { name: 'roofline' } }), /roofline assumes 40\.5 µs of host time per kernel/);
});

test('the CLI command carries the host time per kernel, and the fragment keeps it within the core\'s bound', async () => {
  const S = await import('../../web/state.js');
  assert.match(F.cliCommand('m.onnx', { devices: 'all', batch: [1], hostUs: 20 }), / --host-us 20 /);
  assert.doesNotMatch(F.cliCommand('m.onnx', { devices: 'all', batch: [1] }), /--host-us/);
  const s = S.parseFragment('#host=20&batch=2');
  assert.equal(s.hostUs, 20);
  assert.equal(S.predictOptions(s, ['h100']).hostUs, 20);
  assert.equal(S.toFragment(s), '#batch=2&host=20');
  assert.equal(S.parseFragment('#host=1e9').hostUs, null);
  assert.equal(S.parseFragment('#host=-3').hostUs, null);
  assert.equal(S.predictOptions(S.defaults(), ['h100']).hostUs, undefined);
});

test('the CSV carries the device-busy time and the host-bound flag', () => {
  const row = {
    device: 'h100', device_name: 'H100', batch: 1, precision: 'fp16', precision_requested: 'fp16', runtime: 'pytorch-eager',
    latency_ms: 5, device_busy_ms: 1, host_bound: true, throughput_per_s: 200, uncertainty: 0.1, peak_memory_mb: 400,
    memory_mb: { weights: 50, activations: 10 }, device_memory_gb: 80, fits: true, power_w: 100, energy_j_per_sample: 0.5,
    carbon_g_per_1000: 0.1, mig: null, predictor: { name: 'roofline', version: 'r1' },
  };
  const [head, line] = F.toCsv({ predictions: [row] }).trim().split('\n');
  const cells = Object.fromEntries(head.split(',').map((k, i) => [k, line.split(',')[i]]));
  assert.equal(cells.device_busy_ms, '1');
  assert.equal(cells.host_bound, 'true');
  assert.equal(cells.host_us_per_kernel, '');
  assert.equal(cells.latency_ms, '5');
});

test('a training row names its step phases for the latency tooltip; others say nothing', () => {
  const r = { device_busy_ms_by_phase: { forward: 70.8, backward: 133.47, update: 1.607 } };
  assert.equal(F.stepText(r), 'training step: device time forward 70.8 ms, backward 133 ms, optimizer update 1.61 ms');
  assert.equal(F.stepText({ latency_ms: 3 }), null);
});

test('kernels of a training step are told apart in the breakdown: phase beside the op, passes by what they do', () => {
  assert.equal(F.kernelType({ op_type: 'Conv', phase: 'forward' }), 'Conv');
  assert.equal(F.kernelType({ op_type: 'Conv' }), 'Conv');
  assert.equal(F.kernelType({ op_type: 'Conv', phase: 'backward' }), 'Conv (backward)');
  assert.equal(F.kernelType({ op_type: '', phase: 'update', name: 'adam: sqrt(exp_avg_sq)' }), 'optimizer update');
  assert.equal(F.kernelType({ op_type: '', phase: 'forward', name: 'autocast: fp32 weight to 16 bits' }), 'autocast casts');
  assert.equal(F.kernelLabel({ name: '/conv1/Conv', op_type: 'Conv', phase: 'backward' }), '/conv1/Conv (backward)');
  assert.equal(F.kernelLabel({ name: 'adam: sqrt(exp_avg_sq)', op_type: '', phase: 'update' }), 'adam: sqrt(exp_avg_sq)');
});

test('the memory tooltip names the parts, then what the framework allocates and what the device reports', () => {
  const r = { memory_protocol: 'inference', peak_memory_mb: 414.1,
    memory_mb: { weights: 48.7, activations: 5.3, gradients: 0, optimizer: 0, optimizer_update: 0, saved_activations: 0,
      allocator: 20.1, workspace: 40.1, context: 300 } };
  assert.equal(F.memoryParts(r), 'inference: weights 48.7 MiB + activations 5.30 MiB + allocator segments (estimate) 20.1 MiB + ' +
    'workspace 40.1 MiB + context 300 MiB. Tensors allocated 54.0 MiB; the device reports 414 MiB');
});
