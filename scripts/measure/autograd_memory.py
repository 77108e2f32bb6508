"""What eager PyTorch keeps in memory, measured exactly on this CPU: the ground truth of the memory model.

    /usr/bin/python3 -m scripts.measure.autograd_memory [--max-minutes 30] [--quick] [--models ID,...] [--out CSV]
    /usr/bin/python3 -m scripts.measure.autograd_memory --ops      # what autograd saves, op by op

Which tensors autograd saves, and which tensors are alive at each moment of a forward, a backward and an
optimizer step, are decided by PyTorch's operators and autograd engine, not by the device: the figures
taken here on the CPU hold for eager CUDA too (the caching allocator's rounding and the CUDA context
come on top; they are the runtime's part, not the model's).

Per row (one model from the zoo manifests, one batch, the transformer's sequence):
- saved_bytes: the unique storages autograd saves for backward in a training-mode forward
  (`torch.autograd.graph.saved_tensors_hooks`), parameters and buffers excluded (they are resident anyway);
  saved_param_bytes: the parameters and buffers among them.
- nograd_peak_bytes: peak of live tensor bytes above what was live before the call (the weights and the
  input), through an eval-mode forward under no_grad, the output held.
- grad_forward_peak_bytes: the same with autograd on (an eval-mode forward as people run inference without
  no_grad): everything saved for backward stays alive with the output.
- backward_peak_bytes: the same through a training-mode forward and backward (gradients set to None
  before, the mean of the output as the loss): saved tensors released as the backward goes, activation
  and weight gradients made.
- sgd_update_bytes, adam_update_bytes: the peak of the optimizer's step above what is live before it
  (weights, gradients, state), i.e. its temporaries, for SGD with momentum 0.9 and Adam, both with
  foreach=True (the multi-tensor path, PyTorch's default on CUDA), taken on the third step, when the state
  exists (sgd_state_bytes / adam_state_bytes).
Peaks are the bytes glibc's malloc has handed out (mallinfo2), sampled after every operator by a
TorchDispatchMode: the live tensors at operator boundaries (an operator's inputs and output together, its
own scratch gone), on a second call (the first allocates lazily-made state). (The profiler's allocator
events were tried first: their microsecond timestamps cannot order an allocation against a free within one
tick, and small models' peaks moved by 10% from run to run.)

The ONNX graph of each row is the zoo's export of the same module (manifest `file`); evaluation lives in
scripts/training/evaluate_memory.py, which asks the core for its figures.
"""
from __future__ import annotations

import argparse
import csv
import gc
import os
import platform
import statistics
import sys
import time

from scripts import paths
from scripts.measure import machines
from scripts.measure.gpu_campaign import Skip, count_params, instantiate, load_manifests

OUT = os.path.join(paths.MEASURED, "autograd_memory_cpu.csv")
FIELDS = ["model", "set", "family", "file", "batch", "sequence", "params", "param_bytes", "buffer_bytes",
          "input_bytes", "output_bytes", "saved_bytes", "saved_param_bytes", "saved_tensors",
          "nograd_peak_bytes", "grad_forward_peak_bytes", "backward_peak_bytes", "sgd_update_bytes",
          "sgd_state_bytes", "adam_update_bytes", "adam_state_bytes", "torch", "machine_id", "seconds"]
MAX_MACS = 6e9        # per sample: a training step of larger models takes minutes on two cores
MAX_MACS_TRANSFORMER = 4e10  # per sequence of 128: BERT/GPT-2 base and large take that long at batch 8
MAX_PARAMS = 6e8      # Adam's state and the gradients of larger models pass this machine's memory
BATCHES = (1, 8)


def storage_key(t):
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def tensor_bytes(ts):
    seen = {}
    for t in ts:
        if t is not None and t.numel():
            k, n = storage_key(t)
            seen[k] = n
    return sum(seen.values())


def flat_tensors(y):
    import torch
    if isinstance(y, torch.Tensor):
        return [y]
    if isinstance(y, (tuple, list)):
        return [t for x in y for t in flat_tensors(x)]
    if isinstance(y, dict):
        return [t for x in y.values() for t in flat_tensors(x)]
    return []


def loss_of(y):
    ts = [t for t in flat_tensors(y) if t.is_floating_point() and t.requires_grad]
    return sum(t.float().mean() for t in ts)


def malloc_in_use():
    """Bytes glibc's malloc has handed out (heap chunks and mmapped blocks): where torch's CPU tensors live."""
    import ctypes
    global _mallinfo2
    if _mallinfo2 is None:
        class MallInfo2(ctypes.Structure):
            _fields_ = [(n, ctypes.c_size_t) for n in
                        "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
        _mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
        _mallinfo2.restype = MallInfo2
    m = _mallinfo2()
    return m.uordblks + m.hblkhd


_mallinfo2 = None


def peak_above(fn, runs=1, before=None):
    """Peak of live tensor bytes during fn() above what was live when it started: the bytes in use after
    every operator (a TorchDispatchMode sees each one, the backward's and the optimizer's included; an
    operator's output and its inputs are alive together then, its own scratch is gone). The median of
    `runs` calls after one unmeasured call (the first call of a model allocates lazily-made state; later
    calls agree to a few hundred bytes);
    `before` runs ahead of each call, outside the measurement."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Peak(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.peak = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            self.peak = max(self.peak, malloc_in_use())
            return out

    def once():
        if before:
            before()
        gc.collect()
        base = malloc_in_use()
        with Peak() as p:
            keep = fn()
        peak = max(p.peak, malloc_in_use()) - base
        del keep
        return peak

    once()
    return int(statistics.median(once() for _ in range(runs)))


def saved_for_backward(model, args):
    import torch
    params = {storage_key(p)[0] for p in list(model.parameters()) + list(model.buffers())}
    saved = {}

    def pack(t):
        k, n = storage_key(t)
        saved[k] = (n, k in params)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = model(*args)
    acts = sum(n for n, p in saved.values() if not p)
    prm = sum(n for n, p in saved.values() if p)
    del y
    return acts, prm, len(saved)


def measure_row(e, batch, sequence):
    import torch
    t0 = time.time()
    model, make_inputs = instantiate(e)
    n = count_params(model)
    if e.get("params") and n != e["params"]:
        raise Skip(f"torch module has {n} parameters, the manifest {e['params']}")
    from scripts.measure.gpu_campaign import Config
    c = Config(model=e["id"], family=e["family"], set=e["set"], batch=batch, sequence=sequence)
    args = make_inputs(c, "cpu", torch.float32)
    row = dict(model=e["id"], set=e["set"], family=e["family"], file=e["file"], batch=batch, sequence=sequence,
               params=n, param_bytes=tensor_bytes(model.parameters()), buffer_bytes=tensor_bytes(model.buffers()),
               input_bytes=tensor_bytes(args), torch=torch.__version__)

    model.eval()
    with torch.no_grad():
        y = model(*args)
    row["output_bytes"] = tensor_bytes(flat_tensors(y))
    del y

    def nograd():
        with torch.no_grad():
            return model(*args)
    row["nograd_peak_bytes"] = peak_above(nograd)
    row["grad_forward_peak_bytes"] = peak_above(lambda: model(*args))

    model.train()
    row["saved_bytes"], row["saved_param_bytes"], row["saved_tensors"] = saved_for_backward(model, args)

    def no_gradients():  # outside the measurement: each backward starts without gradients
        model.zero_grad(set_to_none=True)

    def backward():
        loss_of(model(*args)).backward()

    row["backward_peak_bytes"] = peak_above(backward, before=no_gradients)
    for name, make in (("sgd", lambda ps: torch.optim.SGD(ps, lr=1e-6, momentum=0.9, foreach=True)),
                       ("adam", lambda ps: torch.optim.Adam(ps, lr=1e-6, foreach=True))):
        opt = make(model.parameters())
        opt.step()
        opt.step()
        row[f"{name}_state_bytes"] = tensor_bytes(t for s in opt.state.values() for t in s.values()
                                                 if isinstance(t, torch.Tensor) and t.dim() > 0)
        gc.collect()
        row[f"{name}_update_bytes"] = peak_above(opt.step)
        del opt
        gc.collect()
    model.zero_grad(set_to_none=True)
    row["seconds"] = round(time.time() - t0, 1)
    return row


def plan(quick=False):
    """(entry, batch, sequence): the torchvision classic set and variants at their smallest resolution per
    model, the transformers with a torch module at sequence 128, a NAS-Bench-201 sample; each at batch 1
    and 8. Smallest first, round-robin over families, so that a short run spans every family."""
    from scripts.measure.gpu_campaign import nb201_sample
    entries = load_manifests(("torchvision", "transformers", "nasbench201"))
    nb = {x["id"] for x in nb201_sample(entries, n=12)}
    chosen = []
    for e in entries:
        if e["set"] == "nasbench201" and e["id"] not in nb:
            continue
        cap = MAX_MACS_TRANSFORMER if e["set"] == "transformers" else MAX_MACS
        if (e.get("macs") or 0) > cap or (e.get("params") or 0) > MAX_PARAMS:
            continue
        step = e.get("config", {}).get("step")
        if e["set"] == "transformers" and (step == "decode" or e["config"].get("arch") not in ("bert", "gpt", "llama")):
            continue
        chosen.append(e)
    by_family = {}
    for e in sorted(chosen, key=lambda e: (e.get("macs") or 0, e["id"])):
        by_family.setdefault((e["set"], e["family"]), []).append(e)
    turns = []
    for i in range(max((len(v) for v in by_family.values()), default=0)):
        for fam in sorted(by_family):
            if i < len(by_family[fam]) and (not quick or i == 0):
                turns.append(by_family[fam][i])
    out = []
    for e in turns:
        seq = 128 if e["set"] == "transformers" and e["config"].get("arch") != "vit" else 0
        for b in BATCHES:
            out.append((e, b, seq))
    return out


def done(path):
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {(r["model"], int(r["batch"]), int(r["sequence"])) for r in csv.DictReader(f)}


def run(path, max_minutes, quick=False, log=print, only=None):
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    machine = machines.describe()
    machines.record(machine)
    have = done(path)
    deadline = time.time() + 60 * max_minutes
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        for e, b, seq in plan(quick):
            if only and e["id"] not in only:
                continue
            if time.time() > deadline:
                log("deadline reached")
                break
            if (e["id"], b, seq) in have:
                continue
            try:
                row = measure_row(e, b, seq)
            except Skip as why:
                log(f"skip {e['id']}: {why}")
                have.add((e["id"], b, seq))
                continue
            row["machine_id"] = machine["machine_id"]
            w.writerow(row)
            f.flush()
            log(f"{e['id']} b{b}: saved {row['saved_bytes'] / 2**20:.1f} MiB, no_grad peak "
                f"{row['nograd_peak_bytes'] / 2**20:.1f}, backward peak {row['backward_peak_bytes'] / 2**20:.1f}, "
                f"adam update {row['adam_update_bytes'] / 2**20:.1f} ({row['seconds']} s)")
            gc.collect()


# ---- op by op: what autograd saves (for docs/memory.md and the registry's saved-tensor rules) ----

def op_table():
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    W = torch.nn.Parameter(torch.randn(16, 8, 3, 3))
    L = torch.nn.Parameter(torch.randn(32, 64))
    E = torch.nn.Parameter(torch.randn(50, 8))
    bw, bb = torch.nn.Parameter(torch.ones(8)), torch.nn.Parameter(torch.zeros(8))
    idx = torch.randint(0, 50, (4, 6))
    cases = [
        ("Conv", lambda x: F.conv2d(x, W, padding=1), [(2, 8, 10, 10)]),
        ("MatMul (weight)", lambda x: F.linear(x, L), [(4, 64)]),
        ("MatMul (two activations)", lambda a, b: a @ b, [(2, 4, 8), (2, 8, 5)]),
        ("Relu", F.relu, [(100,)]), ("Sigmoid", torch.sigmoid, [(100,)]), ("Tanh", torch.tanh, [(100,)]),
        ("Gelu", F.gelu, [(100,)]), ("SiLU (Sigmoid+Mul)", F.silu, [(100,)]), ("HardSwish", F.hardswish, [(100,)]),
        ("HardSigmoid", F.hardsigmoid, [(100,)]), ("Clip (ReLU6)", F.relu6, [(100,)]), ("LeakyRelu", F.leaky_relu, [(100,)]),
        ("Elu", F.elu, [(100,)]), ("Softplus", F.softplus, [(100,)]),
        ("Softmax", lambda x: F.softmax(x, -1), [(4, 25)]), ("LogSoftmax", lambda x: F.log_softmax(x, -1), [(4, 25)]),
        ("LayerNormalization", lambda x: F.layer_norm(x, (25,)), [(4, 25)]),
        ("BatchNormalization", lambda x: F.batch_norm(x, torch.zeros(8), torch.ones(8), bw, bb, training=True), [(2, 8, 5, 5)]),
        ("GroupNormalization", lambda x: F.group_norm(x, 2), [(2, 8, 5, 5)]),
        ("Add", lambda a, b: a + b, [(10,), (10,)]), ("Mul", lambda a, b: a * b, [(10,), (10,)]),
        ("Div", lambda a, b: a / b, [(10,), (10,)]), ("Pow (constant exponent)", lambda a: a.pow(3.0), [(10,)]),
        ("Sqrt", torch.sqrt, [(10,)]), ("Reciprocal", torch.reciprocal, [(10,)]), ("Exp", torch.exp, [(10,)]),
        ("Log", torch.log, [(10,)]), ("Erf", torch.erf, [(10,)]), ("Neg", torch.neg, [(10,)]),
        ("ReduceMean", lambda a: a.mean(-1), [(4, 10)]), ("ReduceSum", lambda a: a.sum(-1), [(4, 10)]),
        ("ReduceMax", lambda a: a.amax(-1), [(4, 10)]),
        ("MaxPool", lambda a: F.max_pool2d(a, 2), [(1, 2, 8, 8)]), ("AveragePool", lambda a: F.avg_pool2d(a, 2), [(1, 2, 8, 8)]),
        ("GlobalAveragePool", lambda a: F.adaptive_avg_pool2d(a, 1), [(1, 2, 8, 8)]),
        ("Concat", lambda a, b: torch.cat([a, b]), [(10,), (10,)]), ("Transpose", lambda a: a.t().contiguous(), [(4, 10)]),
        ("Slice", lambda a: a[:, 2:5], [(4, 10)]), ("Pad", lambda a: F.pad(a, (1, 1)), [(4, 10)]),
        ("Resize (nearest)", lambda a: F.interpolate(a, scale_factor=2), [(1, 2, 4, 4)]),
        ("Gather (embedding)", lambda: F.embedding(idx, E), []),
        ("Gather (rows of an activation)", lambda a: a[idx[0]], [(50, 8)]),
        ("GatherElements", lambda a: a.gather(1, idx[:, :4] % 10), [(4, 10)]),
        ("Where", lambda a, b: torch.where(a > 0, a, b), [(10,), (10,)]),
        ("Dropout (training)", lambda a: F.dropout(a, 0.1, training=True), [(100,)]),
    ]
    for name, fn, shapes in cases:
        xs = [torch.randn(*s, requires_grad=True) for s in shapes]
        params = {storage_key(p)[0] for p in (W, L, E, bw, bb)}
        saved = {}

        def pack(t):
            k, n = storage_key(t)
            saved[k] = (t.dtype, tuple(t.shape), k in params)
            return t
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = fn(*xs)
        ins = {storage_key(x)[0]: i for i, x in enumerate(xs)}
        outs = {storage_key(o)[0]: i for i, o in enumerate(flat_tensors(y))}
        what = []
        for k, (dt, shape, is_param) in saved.items():
            if is_param:
                what.append("weight")
            elif k in ins:
                what.append(f"input {ins[k]}")
            elif k in outs:
                what.append(f"output {outs[k]}")
            else:
                what.append(f"{str(dt).replace('torch.', '')}{list(shape)}")
        print(f"{name:32s} {', '.join(sorted(what)) or '-'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-minutes", type=float, default=30)
    ap.add_argument("--quick", action="store_true", help="the smallest model of each family only")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--ops", action="store_true", help="print what autograd saves for each op kind and exit")
    ap.add_argument("--plan", action="store_true", help="print the plan and exit")
    ap.add_argument("--models", default="", help="comma-separated manifest ids: measure these only")
    a = ap.parse_args(argv)
    if a.ops:
        op_table()
        return 0
    if a.plan:
        for e, b, seq in plan(a.quick):
            print(e["id"], b, seq)
        return 0
    print(f"torch {__import__('torch').__version__} on {platform.processor() or platform.machine()}", file=sys.stderr)
    run(a.out, a.max_minutes, a.quick, only={m for m in a.models.split(",") if m})
    return 0


if __name__ == "__main__":
    sys.exit(main())
