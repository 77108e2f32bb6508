"""The zoo measured with PyTorch on a GPU: latency, memory per protocol, power and energy (issue 15).

    python3 -m scripts.measure.gpu_campaign [--max-minutes 8] [--phase first|compile|sweep] [--out DIR]
                                            [--sets torchvision,transformers,nasbench201] [--device cuda]
    python3 -m scripts.measure.gpu_campaign --plan          # print the plan and exit

Made for a lent GPU machine (an H100 or H200 with PyTorch 2.x, torchvision, pynvml; no network; one command
at most 10 minutes; about 30 minutes a session): each command measures until its deadline, appending rows
to OUT/gpu_<device>_torch.csv as it goes (a command cut off keeps what it measured) and writing
OUT/environment.json; the next command skips every configuration the CSV holds as measured (or as
too large for the card) and retries the failures, whose rows stay as history. On this project's
CPU machine the same code runs on torch's CPU backend (the tests use tiny models), so that the GPU's
minutes go to measuring.

What a row is: one model (from the zoo manifests' configs: torchvision models and variants, transformers
from configs, NAS-Bench-201 cells), one runtime (eager, or torch.compile default / reduce-overhead),
precision (fp32, tf32, fp16, bf16), protocol (inference = no_grad forward, inference-grad = forward with
autograd on, training = forward + backward + Adam step), batch and, for transformers, the step (prefill,
decode with a KV cache, encode) and its sequence lengths. Latency is the median of CUDA-event timings after
warm-up (at least `--min-runs` and a second of runs); memory is torch's max_memory_allocated and
max_memory_reserved and the device-reported used memory (NVML) for the protocol; power is NVML's
reading sampled every 50 ms through a timed window of at least a second, energy per sample its mean times
the latency over the batch. Each instantiated model's parameter count is checked against the manifest's:
a different count (another torchvision or a module that is not the graph) is skipped with a line.

Through the device tool (each call at most 10 minutes; files under $OUT come back), one prepared call:
    bash scripts/measure/gpu_lease.sh 8.5          # the committed CSVs into $OUT, then the phases in turn
then copy gpu_<device>_torch.csv and gpu_<device>_environment.json into data/measured/ and commit; the next
call, given the committed CSV in --out (gpu_lease.sh copies it), resumes where it stopped.

Order (--phase): `first` is eager fp16 at batch 1 and 16 for the smallest model of every family, with
all three memory protocols at batch 1, then the other models; `compile` is torch.compile (default and
reduce-overhead) for a handful, then reduce-overhead (CUDA graphs) alone for every model, every family's
smallest first; `sweep` is, for every family's smallest model, fp16's batches 1, 2, 4, ... up to
memory, then bf16/tf32/fp32 at batch 1 and 16, then their batch curves; then the same for every other model
(a batch larger than one that ran out of memory is skipped with a line, not tried).
"""
from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import platform
import statistics
import sys
import threading
import time
from dataclasses import asdict, dataclass, fields

from scripts import paths

SETS = ("torchvision", "transformers", "nasbench201")
PRECISIONS = ("fp16", "bf16", "tf32", "fp32")
PROTOCOLS = ("inference", "inference-grad", "training")
# A handful of families for both torch.compile modes first: compilation takes minutes per model on a fresh
# machine. Every other model then gets reduce-overhead alone: with the host out of the way (CUDA graphs) the
# GPU's own per-kernel cost shows: stage H (scripts/calibration/calibrate_cuda_graphs.py) fits the
# pytorch-cuda-graphs runtime on these rows, held out by family, so every family more makes that fit surer.
SWEEP_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
SWEEP_STAGES = ((("fp16",), SWEEP_BATCHES), (("bf16", "tf32", "fp32"), (1, 16)),
                (("bf16", "tf32", "fp32"), SWEEP_BATCHES))
COMPILE_MODELS = ("resnet50_r224", "vit_b_16_r224", "mobilenet_v3_large_r224", "bert-base-uncased", "gpt2.prefill")


@dataclass(frozen=True)
class Config:
    model: str          # manifest id
    family: str
    set: str
    runtime: str = "eager"        # eager | compile | compile-reduce-overhead
    precision: str = "fp16"
    protocol: str = "inference"
    batch: int = 1
    sequence: int = 0             # transformers: tokens of this step (1 for decode)
    past_sequence: int = 0        # decode: the KV cache length

    def key(self):
        return tuple(str(getattr(self, f.name)) for f in fields(self))


FIELDS = [f.name for f in fields(Config)] + [
    "params", "median_ms", "p10_ms", "p90_ms", "runs", "max_allocated_mib", "max_reserved_mib", "device_used_mib",
    "power_w", "energy_j_per_sample", "sm_clock_mhz", "temperature_c", "timestamp", "error",
    # one extra step under torch.profiler (inference rows on a GPU): the GPU operations eager issued (kernels,
    # copies, memsets) and the time the GPU spent in them (the union of their intervals): what the roofline's
    # kernel plan and busy fraction predict
    "kernels", "gpu_busy_ms",
    # the host the command ran on (host_probe, once per command): eager's small-batch latency is the host's
    # cost per kernel, which differs between machines with the same GPU (21 vs 35 us on our two hopper hosts)
    "host_cpu", "host_op_us", "host_module_us"]


class Skip(Exception):
    """A configuration that cannot be measured here (a module that is not the graph, out of memory)."""


# ---- the plan ----

def load_manifests(sets):
    entries = []
    for s in sets:
        path = os.path.join(paths.ZOO_MANIFESTS, f"{s}.jsonl")
        with open(path) as f:
            for line in f:
                e = json.loads(line)
                e["set"] = s
                entries.append(e)
    return entries


def nb201_sample(entries, n=30, seed=0):
    """A seeded sample of the NAS-Bench-201 cells (the same draw every time)."""
    import random
    cells = sorted((e for e in entries if e["set"] == "nasbench201"), key=lambda e: e["id"])
    return random.Random(seed).sample(cells, min(n, len(cells)))


def steps_of(e):
    """(sequence, past_sequence) pairs a transformer is measured at in the first phase."""
    step = e.get("config", {}).get("step")
    if step == "decode":
        return [(1, 128)]
    if step in ("prefill", "encode") and e.get("config", {}).get("arch") != "vit":
        return [(128, 0)]
    return [(0, 0)]


def plan(entries, phase="first", batches_first=(1, 16)):
    """Configurations in the order they should be measured, cheapest useful first: every family's smallest
    model before any family's second one, so that a short run spans every family."""
    nb = {e["id"] for e in nb201_sample(entries)}
    models = [e for e in entries if e["set"] != "nasbench201" or e["id"] in nb]
    by_family = {}
    for e in sorted(models, key=lambda e: (e.get("macs") or 0, e["id"])):
        by_family.setdefault((e["set"], e["family"]), []).append(e)
    turns = []  # round-robin over families, smallest model first
    depth = max((len(v) for v in by_family.values()), default=0)
    for i in range(depth):
        for fam in sorted(by_family):
            if i < len(by_family[fam]):
                turns.append(by_family[fam][i])
    out = []
    if phase == "first":
        for e in turns:
            for seq, past in steps_of(e):
                base = dict(model=e["id"], family=e["family"], set=e["set"], sequence=seq, past_sequence=past)
                for b in batches_first:
                    out.append(Config(**base, batch=b))
                for proto in PROTOCOLS[1:]:
                    if e["set"] != "transformers" or e.get("config", {}).get("step") != "decode":
                        out.append(Config(**base, batch=1, protocol=proto))
    elif phase == "compile":
        handful = [(e, ("compile", "compile-reduce-overhead")) for e in turns if e["id"] in COMPILE_MODELS]
        rest = [(e, ("compile-reduce-overhead",)) for e in turns if e["id"] not in COMPILE_MODELS]
        for e, runtimes in handful + rest:
            for seq, past in steps_of(e):
                for rt in runtimes:
                    for b in batches_first:
                        out.append(Config(model=e["id"], family=e["family"], set=e["set"], runtime=rt, batch=b,
                                          sequence=seq, past_sequence=past))
    elif phase == "sweep":
        # Two tiers, every family's smallest model, then the other models; in each, stages over every model
        # of the tier before the next stage, so a short command still spreads over the families: the default
        # precision's batch curve (what the predictors learn throughput from), the other precisions at the
        # first phase's batches, then their curves. Tiers, because the variants' fp16 curves alone are
        # thousands of configurations: every precision of every family must not wait for all of them.
        seen, tiers = set(), (turns[:len(by_family)], turns[len(by_family):])
        for tier in tiers:
            for prec_set, batches in SWEEP_STAGES:
                for e in tier:
                    for seq, past in steps_of(e):
                        for prec in prec_set:
                            for b in batches:
                                c = Config(model=e["id"], family=e["family"], set=e["set"], precision=prec,
                                           batch=b, sequence=seq, past_sequence=past)
                                if c.key() not in seen:
                                    seen.add(c.key())
                                    out.append(c)
    else:
        raise SystemExit(f"unknown phase {phase!r} (first, compile, sweep)")
    return out


# ---- models ----

def count_params(model):
    return sum(p.numel() for p in model.parameters())


def too_large(e, device):
    """Why a model cannot be built here, or None: built in fp32 first, it must fit the device (GPU) or half
    the host memory (CPU), or the whole process would be killed instead of one row skipped."""
    import torch
    need = 4 * (e.get("params") or 0)
    if device.startswith("cuda"):
        have = 0.8 * torch.cuda.get_device_properties(0).total_memory
    else:
        have = 0.5 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return f"{need / 2**30:.1f} GiB of fp32 weights, more than {have / 2**30:.1f} GiB here" if need > have else None


def built_on(device):
    """Modules built inside this context allocate their weights on `device` (torch >= 2.0; Debian's older
    torch builds on the host, which its CPU runs use anyway)."""
    import contextlib
    import torch
    d = torch.device(device)
    return d if hasattr(d, "__enter__") else contextlib.nullcontext()


def without_aux_heads(model):
    """GoogLeNet's and Inception v3's auxiliary classifiers run only in training mode, so the zoo's graphs
    (exported in eval mode) lack them: the module measured drops them too, to be the network the graph is."""
    for name in ("aux1", "aux2", "AuxLogits"):
        if getattr(model, name, None) is not None:
            setattr(model, name, None)
            model.aux_logits = False
    return model


def instantiate(e):
    """The torch module a manifest entry describes, and a function making its inputs for a Config."""
    import torch
    cfg = e["config"]
    if e["set"] == "torchvision":
        from scripts.zoo.export_variants import build
        model = without_aux_heads(build(cfg))
        size = cfg["image_size"]

        def inputs(c, device, dtype):
            return (torch.randn(c.batch, 3, size, size, device=device, dtype=dtype),)
    elif e["set"] == "nasbench201":
        from scripts.zoo.nasbench201_torch import Net
        model = Net(cfg["arch"], classes=cfg.get("num_classes", 100), zeros=cfg["zeros"])
        size = cfg.get("input_hw", 32)

        def inputs(c, device, dtype):
            return (torch.randn(c.batch, 3, size, size, device=device, dtype=dtype),)
    else:
        model, inputs = transformer(cfg)
    return model, inputs


def transformer(cfg):
    """BERT/RoBERTa from scripts/checks/check_shapes.py; GPT-2, OPT, the Llama family and ViT from
    scripts/measure/torch_transformers.py (every step, decode with its KV cache included)."""
    import torch
    from scripts.checks.check_shapes import transformer_modules
    mods = transformer_modules()
    arch = cfg["arch"]
    if arch == "bert":
        model = mods["Bert"](vocab=cfg["vocab"], hidden=cfg["hidden"], layers=cfg["layers"], heads=cfg["heads"],
                             inter=cfg["inter"], max_pos=cfg["max_pos"], type_vocab=cfg["type_vocab"])

        def inputs(c, device, dtype):
            ids = torch.randint(0, cfg["vocab"], (c.batch, c.sequence), device=device)
            return ids, torch.ones_like(ids)
    else:  # GPT-2/OPT, the Llama family and ViT: modules mirroring the zoo's graph builders
        from scripts.measure.torch_transformers import build
        try:
            model, inputs = build(cfg)
        except ValueError as err:
            raise Skip(str(err))
    return model, inputs


# ---- measuring ----

class Nvml:
    """Power, used memory, SM clock and temperature of device 0, when pynvml can read them."""

    def __init__(self):
        self.h = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:  # no NVML on a CPU machine, or no driver: the fields stay empty
            self.h = None

    def read(self):
        if self.h is None:
            return {}
        nv = self.nv
        return {"power_w": nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0,
                "device_used_mib": nv.nvmlDeviceGetMemoryInfo(self.h).used / 2**20,
                "sm_clock_mhz": nv.nvmlDeviceGetClockInfo(self.h, nv.NVML_CLOCK_SM),
                "temperature_c": nv.nvmlDeviceGetTemperature(self.h, nv.NVML_TEMPERATURE_GPU)}

    def idle(self, seconds=2.0):
        """Board power and SM clock before this process has done any work on the GPU: the catalog's idle_w
        is an estimate for most data-centre boards (no public measurement), and this is one."""
        if self.h is None:
            return {}
        sampler = PowerSampler(self)
        sampler.start()
        time.sleep(seconds)
        sampler.stop.set()
        sampler.join()
        if not sampler.samples:
            return {}
        return {"idle_power_w": statistics.median(s["power_w"] for s in sampler.samples),
                "idle_sm_clock_mhz": statistics.median(s["sm_clock_mhz"] for s in sampler.samples),
                "idle_used_mib": statistics.median(s["device_used_mib"] for s in sampler.samples)}

    def environment(self):
        if self.h is None:
            return {}
        nv = self.nv
        try:
            mig = nv.nvmlDeviceGetMigMode(self.h)[0]
        except Exception:
            mig = None
        return {"driver": nv.nvmlSystemGetDriverVersion(), "name": nv.nvmlDeviceGetName(self.h), "mig_mode": mig,
                "max_sm_clock_mhz": nv.nvmlDeviceGetMaxClockInfo(self.h, nv.NVML_CLOCK_SM),
                "power_limit_w": nv.nvmlDeviceGetPowerManagementLimit(self.h) / 1000.0}


class PowerSampler(threading.Thread):
    """Samples NVML every `period` s while a timed window runs."""

    def __init__(self, nvml, period=0.05):
        super().__init__(daemon=True)
        self.nvml, self.period, self.samples, self.stop = nvml, period, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            r = self.nvml.read()
            if r:
                self.samples.append(r)
            time.sleep(self.period)


def dtype_of(precision):
    import torch
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]


def measure(model, inputs, c, device, nvml, min_runs=10, min_seconds=1.0, warmup=3):
    """One configuration: latency stats, memory of its protocol, power over the timed window. Inference runs
    the model in the precision itself (as deployers do); training at fp16/bf16 is mixed precision, as people
    train: fp32 weights and Adam state, the forward and backward under autocast."""
    import contextlib
    import torch
    cuda = device.startswith("cuda")
    low = dtype_of(c.precision)
    training = c.protocol == "training"
    mixed = training and c.precision in ("fp16", "bf16")
    param_dtype = torch.float32 if mixed else low
    torch.backends.cuda.matmul.allow_tf32 = c.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = c.precision == "tf32"
    model = model.to(device=device, dtype=param_dtype)
    model.train(training)
    if c.runtime.startswith("compile"):
        model = torch.compile(model, mode="reduce-overhead" if c.runtime.endswith("reduce-overhead") else None)
    x = inputs(c, device, param_dtype)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4) if training else None
    amp = (lambda: torch.autocast(device_type="cuda" if cuda else "cpu", dtype=low)) if mixed else contextlib.nullcontext

    def step():
        if c.protocol == "inference":
            with torch.inference_mode():
                return model(*x)
        with amp():
            out = model(*x)
        if training:
            with amp():
                loss = sum(o.float().mean() for o in (out if isinstance(out, (tuple, list)) else (out,)))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return out

    for _ in range(warmup):
        step()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    times = []
    sampler = PowerSampler(nvml) if cuda else None
    if sampler:
        sampler.start()
    t_end = time.perf_counter() + min_seconds
    while len(times) < min_runs or time.perf_counter() < t_end:
        if cuda:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            step()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        else:
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) * 1e3)
        if len(times) >= 10000:
            break
    row = {}
    if sampler:
        sampler.stop.set()
        sampler.join()
        if sampler.samples:
            row["power_w"] = statistics.fmean(s["power_w"] for s in sampler.samples)
            row["device_used_mib"] = max(s["device_used_mib"] for s in sampler.samples)
            row["sm_clock_mhz"] = statistics.median(s["sm_clock_mhz"] for s in sampler.samples)
            row["temperature_c"] = max(s["temperature_c"] for s in sampler.samples)
    q = statistics.quantiles(times, n=10) if len(times) >= 2 else [times[0]] * 9
    row.update(median_ms=statistics.median(times), p10_ms=q[0], p90_ms=q[-1], runs=len(times))
    if cuda:
        row["max_allocated_mib"] = torch.cuda.max_memory_allocated() / 2**20
        row["max_reserved_mib"] = torch.cuda.max_memory_reserved() / 2**20
    if "power_w" in row:
        row["energy_j_per_sample"] = row["power_w"] * row["median_ms"] / 1e3 / c.batch
    if cuda and c.protocol == "inference":
        row.update(kernel_profile(step))
    return row


def kernel_profile(step):
    """{kernels, gpu_busy_ms} of one step under torch.profiler, or {} when the profiler cannot say (it must
    never cost the row its timing)."""
    import torch
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        spans = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                       if e.device_type == torch.autograd.DeviceType.CUDA)
    except Exception:  # noqa: BLE001  a profiler this build or sandbox lacks (CUPTI refused, ...)
        return {}
    busy, end = 0.0, float("-inf")
    for a, b in spans:  # the union of the kernels' intervals, in microseconds
        if b > end:
            busy += b - max(a, end)
            end = b
    return {"kernels": len(spans), "gpu_busy_ms": busy / 1e3} if spans else {}


# ---- the host ----

def cpu_model():
    """The host CPU's model name (Linux /proc/cpuinfo), else the platform's word for it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_probe(device, ops=2000, rounds=5):
    """The host's cost of eager PyTorch per launched kernel, measured where it runs, in microseconds
    (median over `rounds`): `host_op_us`, one tiny elementwise op (a one-element add: the device work is a
    microsecond or two, so a row of them is host-bound); `host_module_us`, one tiny nn.Linear module call
    (Python module dispatch, the functional call and a GEMM launch). Each round ends with a synchronize, so
    queued work is counted. Lets the evaluation tell the host's share of a row's latency from the GPU's."""
    import torch
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    with torch.no_grad():
        x = torch.ones(1, device=device)
        lin = torch.nn.Linear(16, 16).to(device)
        h = torch.ones(1, 16, device=device)

        def per_call_us(step):
            for _ in range(ops // 10):  # warm-up: allocator, kernels loaded
                step()
            sync()
            times = []
            for _ in range(rounds):
                t0 = time.perf_counter()
                for _ in range(ops):
                    step()
                sync()
                times.append((time.perf_counter() - t0) / ops * 1e6)
            return round(statistics.median(times), 3)

        return {"host_cpu": cpu_model(), "host_op_us": per_call_us(lambda: x.add(1.0)),
                "host_module_us": per_call_us(lambda: lin(h))}


# ---- the campaign ----

def environment(device, nvml):
    import torch
    env = {"torch": torch.__version__, "python": platform.python_version(), "device": device,
           "host": platform.node(), "kernel": platform.release()}
    try:
        import torchvision
        env["torchvision"] = torchvision.__version__
    except ImportError:
        pass
    if device.startswith("cuda"):
        p = torch.cuda.get_device_properties(0)
        env.update(gpu=p.name, sm_count=p.multi_processor_count, memory_mib=p.total_memory // 2**20,
                   cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version())
    env.update(nvml.environment())
    return env


def device_slug(env):
    name = env.get("gpu") or "cpu"
    return "".join(ch if ch.isalnum() else "_" for ch in name.lower()).strip("_")


# A skip that every rerun repeats (the weights alone exceed the card): not retried. Any other error (a
# harness bug since fixed, a module added, an out-of-memory that another build may not hit) is retried by
# the next command, so a fix takes effect on the rows it failed.
PERMANENT = ("GiB of fp32 weights, more than",)


def said(err):
    """An exception as one line of a row's error column: its type and its message's first line."""
    return f"{type(err).__name__}: " + (str(err).splitlines() or [""])[0]


def read_rows(csv_path):
    """The CSV's rows, less the failures a later row of the same configuration measured."""
    if not os.path.exists(csv_path):
        return []
    names = [fl.name for fl in fields(Config)]
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    measured = {tuple(r[k] for k in names) for r in rows if not r["error"]}
    return [r for r in rows if not r["error"] or tuple(r[k] for k in names) not in measured]


def done_keys(csv_path):
    """Configurations the next command skips: measured, or skipped for good (PERMANENT)."""
    names = [fl.name for fl in fields(Config)]
    return {tuple(r[k] for k in names) for r in read_rows(csv_path)
            if not r["error"] or any(p in r["error"] for p in PERMANENT)}


def run(configs, entries_by_id, csv_path, device, deadline, nvml, log=print, measure_fn=measure, host=None):
    """Measures configs not yet in csv_path until the deadline (`host`: host_probe's figures, on every row
    this command writes). Returns (measured, skipped)."""
    import torch
    done = done_keys(csv_path)
    todo = [c for c in configs if c.key() not in done]
    from scripts.measure.campaign import ensure_header
    ensure_header(csv_path, FIELDS, restval="")  # columns added since an older command wrote the file
    new_file = not os.path.exists(csv_path)
    measured = skipped = 0
    cache = {}  # model id -> (module, inputs fn, params) or a skip reason
    oom_at = {}  # a configuration less its batch -> the smallest batch that ran out of memory
    with open(csv_path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new_file:
            w.writeheader()
        for c in todo:
            if time.time() > deadline:
                log(f"deadline reached: {len(todo) - measured - skipped} configurations left for the next command")
                break
            e = entries_by_id[c.model]
            if c.model not in cache:
                cache.clear()  # one model in memory at a time: the loop's own names held the last one too
                got = model = inputs = None
                gc.collect()
                if device.startswith("cuda"):
                    torch.cuda.empty_cache()
                try:
                    why = too_large(e, device)
                    if why:
                        raise Skip(why)
                    # Built where it runs: initializing a 7B model's fp32 weights on the host takes the
                    # minutes the campaign is for; on the GPU it takes a second.
                    with built_on(device):
                        model, inputs = instantiate(e)
                    n = count_params(model)
                    want = e.get("params")
                    if want and n != want:
                        raise Skip(f"{n} parameters here, the manifest's graph has {want}")
                    cache[c.model] = (model, inputs, n)
                except Skip as s:
                    cache[c.model] = str(s)
                except torch.cuda.OutOfMemoryError:
                    cache[c.model] = "out of memory while building it"
                except Exception as err:  # noqa: BLE001  a module that cannot be built here: its rows say why
                    cache[c.model] = "cannot build it: " + said(err)[:150]
            got = cache[c.model]
            row = {**asdict(c), **(host or {}), "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S")}
            curve = tuple(v for k, v in asdict(c).items() if k != "batch")
            if not isinstance(got, str) and c.batch > oom_at.get(curve, c.batch):
                got = f"batch {oom_at[curve]} ran out of memory"
            if isinstance(got, str):
                log(f"skip {c.model}: {got}")
                row["error"] = f"skipped: {got}"
                skipped += 1
            else:
                model, inputs, n = got
                row["params"] = n
                try:
                    row.update(measure_fn(model, inputs, c, device, nvml))
                    measured += 1
                except torch.cuda.OutOfMemoryError:
                    row["error"] = "out of memory"
                    oom_at[curve] = min(c.batch, oom_at.get(curve, c.batch))
                    skipped += 1
                except Exception as err:  # noqa: BLE001  an op this precision lacks, a compiler's failure
                    # (torch.compile raises its own types, not only RuntimeError): one row says so, the
                    # campaign goes on, so a lease's minutes are not lost to one configuration.
                    row["error"] = said(err)[:200]
                    skipped += 1
                finally:
                    if device.startswith("cuda"):
                        torch.cuda.empty_cache()
            w.writerow(row)
            f.flush()
    return measured, skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-minutes", type=float, default=8.0)
    ap.add_argument("--phase", default="first")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--device", default=None, help="cuda when available, else cpu")
    ap.add_argument("--out", default=paths.MEASURED)
    ap.add_argument("--plan", action="store_true")
    args = ap.parse_args()
    entries = load_manifests([s for s in args.sets.split(",") if s])
    configs = plan(entries, args.phase)
    if args.plan:
        for c in configs:
            print(",".join(c.key()))
        print(f"{len(configs)} configurations", file=sys.stderr)
        return
    import torch
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    nvml = Nvml()
    idle = nvml.idle()  # before environment(), whose device query makes a CUDA context
    env = dict(environment(device, nvml), **idle)
    host = host_probe(device)
    env["host_probe"] = host
    print(f"host: {host}", flush=True)
    os.makedirs(args.out, exist_ok=True)
    slug = device_slug(env)
    with open(os.path.join(args.out, f"gpu_{slug}_environment.json"), "w") as f:
        json.dump(env, f, indent=1, sort_keys=True)
        f.write("\n")
    csv_path = os.path.join(args.out, f"gpu_{slug}_torch.csv")
    deadline = time.time() + args.max_minutes * 60
    by_id = {e["id"]: e for e in entries}
    m, s = run(configs, by_id, csv_path, device, deadline, nvml, log=lambda x: print(x, flush=True), host=host)
    print(f"{m} measured, {s} skipped; rows in {csv_path}", flush=True)


if __name__ == "__main__":
    main()
