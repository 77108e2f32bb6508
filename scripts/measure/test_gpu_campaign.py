"""The GPU campaign's plan and bookkeeping, run on torch's CPU backend with NAS-Bench-201 cells (tiny):
/usr/bin/python3 -m unittest scripts.measure.test_gpu_campaign"""
import csv
import json
import os
import tempfile
import time
import unittest

from scripts.measure import gpu_campaign as gc

try:
    from torch.overrides import TorchFunctionMode
except ImportError:  # torch < 1.13
    TorchFunctionMode = None


def quick(model, inputs, c, device, nvml):
    return gc.measure(model, inputs, c, device, nvml, min_runs=2, min_seconds=0.0, warmup=1)


class Plan(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.entries = gc.load_manifests(gc.SETS)

    def test_every_family_before_any_second_model(self):
        configs = gc.plan(self.entries, "first")
        families = {(e["set"], e["family"]) for e in self.entries}
        first_models = []
        for c in configs:
            if c.model not in first_models:
                first_models.append(c.model)
        fam_of = {e["id"]: (e["set"], e["family"]) for e in self.entries}
        head = [fam_of[m] for m in first_models[:len(families)]]
        self.assertEqual(set(head), families)  # one model of each family, then the second ones
        self.assertEqual(len(head), len(set(head)))
        # batch 1 and 16 eager fp16, and the grad-enabled forward and the training step at batch 1
        kinds = {(c.protocol, c.batch) for c in configs if c.model == first_models[0]}
        self.assertEqual(kinds, {("inference", 1), ("inference", 16), ("inference-grad", 1), ("training", 1)})
        self.assertTrue(all(c.runtime == "eager" and c.precision == "fp16" for c in configs))

    def test_decode_steps_carry_a_kv_cache(self):
        configs = gc.plan(self.entries, "first")
        decode = [c for c in configs if c.model.endswith(".decode")]
        self.assertTrue(decode and all(c.sequence == 1 and c.past_sequence == 128 for c in decode))
        self.assertFalse([c for c in decode if c.protocol != "inference"])

    def test_compile_is_a_handful_in_both_modes_then_cuda_graphs_for_every_family(self):
        compiled = gc.plan(self.entries, "compile")
        handful = set(gc.COMPILE_MODELS) & {e["id"] for e in self.entries}
        n = sum(1 for c in compiled if c.model in handful)
        self.assertEqual({c.model for c in compiled[:n]}, handful)  # the handful first
        self.assertEqual({c.runtime for c in compiled[:n]}, {"compile", "compile-reduce-overhead"})
        rest = compiled[n:]
        self.assertEqual({c.runtime for c in rest}, {"compile-reduce-overhead"})
        self.assertTrue(all(c.precision == "fp16" and c.protocol == "inference" for c in compiled))
        self.assertEqual({c.model for c in compiled}, {c.model for c in gc.plan(self.entries, "first")})
        fam_of = {e["id"]: (e["set"], e["family"]) for e in self.entries}
        seen, first_of_each = set(), []
        for c in rest:
            if fam_of[c.model] not in seen:
                seen.add(fam_of[c.model])
                first_of_each.append(c.model)
        order = [c.model for c in rest]
        # every family reached before any family's third model (the handful took some families' first)
        last_first = max(order.index(m) for m in first_of_each)
        per_family = {}
        for m in dict.fromkeys(order[:last_first + 1]):
            per_family[fam_of[m]] = per_family.get(fam_of[m], 0) + 1
        self.assertLessEqual(max(per_family.values()), 2)
        self.assertEqual(len({c.key() for c in compiled}), len(compiled))
        with self.assertRaises(SystemExit):
            gc.plan(self.entries, "nonsense")

    def test_the_sweep_gives_every_family_every_precision_before_the_variants(self):
        configs = gc.plan(self.entries, "sweep")
        families = {(e["set"], e["family"]) for e in self.entries}
        fam_of = {e["id"]: (e["set"], e["family"]) for e in self.entries}
        models = list(dict.fromkeys(c.model for c in configs))
        smallest = models[:len(families)]
        self.assertEqual({fam_of[m] for m in smallest}, families)  # the first tier: one model per family
        tier = len([c for c in configs if c.model in smallest])
        self.assertTrue(all(c.model in smallest for c in configs[:tier]))  # ... measured whole before the rest
        head = configs[:tier]
        first_other = next(i for i, c in enumerate(head) if c.precision != "fp16")
        self.assertEqual({c.model for c in head[:first_other]}, set(smallest))  # fp16's curve of each first
        self.assertEqual({c.batch for c in head[:first_other]}, set(gc.SWEEP_BATCHES))
        self.assertFalse([c for c in head[first_other:] if c.precision == "fp16"])
        self.assertEqual({c.precision for c in head}, set(gc.PRECISIONS))
        self.assertEqual({c.model for c in configs}, set(models))
        self.assertGreater(len(models), len(smallest))
        self.assertEqual(len({c.key() for c in configs}), len(configs))


class Lease(unittest.TestCase):
    def test_the_prepared_call_resumes_from_the_committed_rows_and_runs_each_phase(self):
        import subprocess
        from scripts import paths
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, OUT=out, PY="/usr/bin/python3", CAMPAIGN_ARGS="--device cpu --sets nasbench201")
            p = subprocess.run(["bash", os.path.join(paths.ROOT, "scripts", "measure", "gpu_lease.sh"), "0.02",
                                "first=0.5", "sweep=0.5"], env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("== first: 0.01 minutes", p.stdout)
            self.assertIn("== sweep: 0.01 minutes", p.stdout)
            committed = [f for f in os.listdir(paths.MEASURED) if f.startswith("gpu_nvidia_")]
            self.assertTrue(committed)
            for f in committed:  # copied, and writable: the campaign appends to its card's CSV
                self.assertTrue(os.access(os.path.join(out, f), os.W_OK), f)
            self.assertTrue(os.path.exists(os.path.join(out, "gpu_cpu_torch.csv")))


class Idle(unittest.TestCase):
    def test_idle_power_is_the_median_of_samples_and_nothing_without_nvml(self):
        class Fake(gc.Nvml):
            def __init__(self):
                self.h, self.n = object(), 0

            def read(self):
                self.n += 1
                return {"power_w": 70.0 + (self.n % 3), "device_used_mib": 0.0, "sm_clock_mhz": 345, "temperature_c": 30}
        got = Fake().idle(seconds=0.2)
        self.assertEqual(got["idle_sm_clock_mhz"], 345)
        self.assertTrue(70.0 <= got["idle_power_w"] <= 72.0)
        nothing = gc.Nvml()
        nothing.h = None
        self.assertEqual(nothing.idle(seconds=0.1), {})


class Run(unittest.TestCase):
    def setUp(self):
        self.entries = [e for e in gc.load_manifests(["nasbench201"])][:2]
        self.by_id = {e["id"]: e for e in self.entries}
        self.tmp = tempfile.mkdtemp()
        self.csv = os.path.join(self.tmp, "gpu_cpu_torch.csv")
        self.nvml = gc.Nvml()

    def configs(self):
        out = []
        for e in self.entries:
            for proto in gc.PROTOCOLS:
                out.append(gc.Config(model=e["id"], family=e["family"], set=e["set"], precision="fp32", protocol=proto,
                                     batch=2))
        return out

    def rows(self):
        with open(self.csv) as f:
            return list(csv.DictReader(f))

    def test_measures_every_protocol_then_resumes_without_repeating(self):
        configs = self.configs()
        m, s = gc.run(configs, self.by_id, self.csv, "cpu", time.time() + 600, self.nvml, log=lambda x: None,
                      measure_fn=quick)
        self.assertEqual((m, s), (len(configs), 0))
        rows = self.rows()
        self.assertEqual(len(rows), len(configs))
        for r in rows:
            self.assertGreater(float(r["median_ms"]), 0)
            self.assertEqual(int(r["params"]), self.by_id[r["model"]]["params"])  # checked against the manifest
        m, s = gc.run(configs, self.by_id, self.csv, "cpu", time.time() + 600, self.nvml, log=lambda x: None,
                      measure_fn=quick)
        self.assertEqual((m, s), (0, 0))
        self.assertEqual(len(self.rows()), len(configs))

    def test_transformers_from_configs_run_their_steps(self):
        entries = {e["id"]: e for e in gc.load_manifests(["transformers"])
                   if e["id"] in ("tiny-bert", "tiny-gpt2.prefill", "tiny-llama.prefill", "tiny-llama.decode")}
        configs = []
        for e in entries.values():
            for seq, past in gc.steps_of(e):
                configs.append(gc.Config(model=e["id"], family=e["family"], set=e["set"], precision="fp32",
                                         batch=2, sequence=seq, past_sequence=past))
        self.assertIn((1, 128), {(c.sequence, c.past_sequence) for c in configs})  # the decode step
        m, s = gc.run(configs, entries, self.csv, "cpu", time.time() + 600, self.nvml, log=lambda x: None,
                      measure_fn=quick)
        self.assertEqual((m, s), (4, 0), [r["error"] for r in self.rows()])

    def test_half_precision_runs_every_step(self):
        # An fp32 table (a mask, rotary cos/sin) meeting 16-bit activations failed 50 rows on the H200;
        # bf16 is what torch's CPU backend runs, and the same promotion rules apply.
        ids = ("tiny-bert", "tiny-gpt2.prefill", "tiny-gpt2.decode", "tiny-llama.prefill", "tiny-llama.decode")
        entries = {e["id"]: e for e in gc.load_manifests(["transformers"]) if e["id"] in ids}
        configs = [gc.Config(model=e["id"], family=e["family"], set=e["set"], precision="bf16", batch=2,
                             sequence=seq, past_sequence=past, protocol=proto)
                   for e in entries.values() for seq, past in gc.steps_of(e) for proto in ("inference", "training")
                   if not (proto == "training" and past)]
        m, s = gc.run(configs, entries, self.csv, "cpu", time.time() + 600, self.nvml, log=lambda x: None,
                      measure_fn=quick)
        self.assertEqual((m, s), (len(configs), 0), [r["error"] for r in self.rows()])

    def test_a_parameter_count_that_differs_is_skipped_with_a_line(self):
        e = dict(self.entries[0], params=123)
        said = []
        c = self.configs()[0]
        m, s = gc.run([c], {e["id"]: e}, self.csv, "cpu", time.time() + 600, self.nvml, log=said.append,
                      measure_fn=quick)
        self.assertEqual((m, s), (0, 1))
        self.assertIn("parameters here, the manifest's graph has 123", said[0])
        self.assertIn("skipped", self.rows()[0]["error"])

    def test_any_failure_of_one_configuration_is_a_row_and_the_campaign_goes_on(self):
        # torch.compile raises types of its own, not only RuntimeError: one failure must not end a lease.
        calls = []

        def flaky(model, inputs, c, device, nvml):
            calls.append(c)
            if len(calls) == 1:
                raise AssertionError("a compiler's internal check\nwith more lines")
            return quick(model, inputs, c, device, nvml)

        configs = self.configs()
        m, s = gc.run(configs, self.by_id, self.csv, "cpu", time.time() + 600, self.nvml, log=lambda x: None,
                      measure_fn=flaky)
        self.assertEqual((m, s), (len(configs) - 1, 1))
        self.assertEqual(self.rows()[0]["error"], "AssertionError: a compiler's internal check")

    def test_a_batch_larger_than_one_out_of_memory_is_not_tried(self):
        import torch
        e = self.entries[0]
        configs = [gc.Config(model=e["id"], family=e["family"], set=e["set"], batch=b, precision="fp32")
                   for b in (1, 2, 4, 8)]
        configs.append(gc.Config(model=e["id"], family=e["family"], set=e["set"], batch=8, precision="tf32"))
        tried = []

        def small_card(model, inputs, c, device, nvml):
            tried.append((c.batch, c.precision))
            if c.batch >= 2:
                raise torch.cuda.OutOfMemoryError("CUDA out of memory")
            return quick(model, inputs, c, device, nvml)

        gc.run(configs, self.by_id, self.csv, "cpu", time.time() + 600, self.nvml, log=lambda x: None,
               measure_fn=small_card)
        self.assertEqual(tried, [(1, "fp32"), (2, "fp32"), (8, "tf32")])  # another curve is tried afresh
        errors = [r["error"] for r in self.rows()]
        self.assertEqual(errors[:2], ["", "out of memory"])
        self.assertEqual(errors[2:4], ["skipped: batch 2 ran out of memory"] * 2)

    def test_failures_are_retried_and_a_later_measurement_supersedes_them(self):
        configs = self.configs()[:2]
        bad = dict(self.entries[0], params=123)  # a harness bug: every row of this model fails
        gc.run(configs, {bad["id"]: bad, **{k: v for k, v in self.by_id.items() if k != bad["id"]}}, self.csv,
               "cpu", time.time() + 600, self.nvml, log=lambda x: None, measure_fn=quick)
        self.assertTrue(all(r["error"] for r in self.rows()))
        self.assertEqual(gc.done_keys(self.csv), set())  # not a permanent skip: the next command retries
        m, s = gc.run(configs, self.by_id, self.csv, "cpu", time.time() + 600, self.nvml, log=lambda x: None,
                      measure_fn=quick)
        self.assertEqual((m, s), (2, 0))
        self.assertEqual(len(self.rows()), 4)  # the failures stay in the file as history
        self.assertEqual([r["error"] for r in gc.read_rows(self.csv)], ["", ""])
        self.assertEqual(len(gc.done_keys(self.csv)), 2)

    def test_a_file_from_before_a_column_was_added_gets_it_empty(self):
        old = [f for f in gc.FIELDS if f not in ("kernels", "gpu_busy_ms")]
        c = self.configs()[0]
        with open(self.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=old)
            w.writeheader()
            w.writerow({**{k: v for k, v in zip([fl.name for fl in gc.fields(gc.Config)], c.key())},
                        "median_ms": "1.5", "error": ""})
        m, s = gc.run(self.configs()[1:2], self.by_id, self.csv, "cpu", time.time() + 600, self.nvml,
                      log=lambda x: None, measure_fn=quick)
        rows = self.rows()
        self.assertEqual((m, len(rows)), (1, 2))
        self.assertEqual(rows[0]["median_ms"], "1.5")
        # never 0 kernels: not counted (an old row, or a CPU run, which has no CUDA kernels to count)
        self.assertEqual([r["kernels"] for r in rows], ["", ""])

    def test_the_host_probe_goes_on_every_row_of_its_command(self):
        host = gc.host_probe("cpu", ops=200, rounds=3)
        self.assertTrue(host["host_cpu"])
        self.assertGreater(host["host_op_us"], 0)
        # a module call is an op plus Python's module dispatch: never cheaper than a bare op by much
        self.assertGreater(host["host_module_us"], 0.5 * host["host_op_us"])
        gc.run(self.configs()[:1], self.by_id, self.csv, "cpu", time.time() + 600, self.nvml, log=lambda x: None,
               measure_fn=quick, host=host)
        gc.run(self.configs()[1:2], self.by_id, self.csv, "cpu", time.time() + 600, self.nvml, log=lambda x: None,
               measure_fn=quick)
        rows = self.rows()
        self.assertEqual(float(rows[0]["host_op_us"]), host["host_op_us"])
        self.assertEqual(rows[1]["host_op_us"], "")  # a command without a probe says nothing of its host

    def test_a_past_deadline_measures_nothing_and_says_what_is_left(self):
        said = []
        m, s = gc.run(self.configs(), self.by_id, self.csv, "cpu", time.time() - 1, self.nvml, log=said.append,
                      measure_fn=quick)
        self.assertEqual((m, s), (0, 0))
        self.assertIn("configurations left", said[0])


class MetaTensors(TorchFunctionMode if TorchFunctionMode else object):
    """Factory functions make meta tensors: shapes without memory, so a 70B model's count costs nothing."""
    FACTORIES = ("empty", "zeros", "ones")  # what modules allocate parameters with; arange etc. compute sizes

    def __torch_function__(self, func, types, args=(), kwargs=None):
        import torch
        kwargs = dict(kwargs or {})
        if func in {getattr(torch, n) for n in self.FACTORIES}:
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


@unittest.skipIf(TorchFunctionMode is None, "this torch has no TorchFunctionMode")
class Modules(unittest.TestCase):
    def test_every_module_is_its_graph_parameter_for_parameter(self):
        # The campaign skips a module whose count differs from its graph's (a Qwen without its q/k/v bias,
        # GoogLeNet with its training-only heads): every zoo model must pass, or its rows are never taken.
        # Torchvision variants that differ only in input size have the same parameters, except ViT's (its
        # position table grows with the image): one of each. NAS-Bench-201: a sample (15,625 cells of one
        # generator).
        entries, seen = [], set()
        for e in gc.load_manifests(gc.SETS):
            cfg = e["config"]
            vit = cfg.get("builder") == "VisionTransformer" or str(cfg.get("model", "")).startswith("vit_")
            key = json.dumps({k: v for k, v in cfg.items() if vit or k != "image_size"}, sort_keys=True)
            if e["set"] != "nasbench201" and (e["set"], key) not in seen:
                seen.add((e["set"], key))
                entries.append(e)
        entries += gc.nb201_sample(gc.load_manifests(["nasbench201"]), n=20)
        differ = []
        for e in entries:
            with MetaTensors():
                model, _ = gc.instantiate(e)
            n = gc.count_params(model)
            if n != e["params"]:
                differ.append(f"{e['id']}: {n} here, {e['params']} in the graph")
        self.assertEqual(differ, [])


if __name__ == "__main__":
    unittest.main()
