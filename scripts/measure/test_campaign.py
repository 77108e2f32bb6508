"""Checks of the measurement campaign's bookkeeping (no timing, no node):
    /usr/bin/python3 -m unittest scripts.measure.test_campaign

The plan's order and cap, the resumable CSV (old headers migrated, drift marking, failures skipped) and
the temporary weights kept on disk are what a piece run over days relies on.
"""
import csv
import os
import tempfile
import unittest

from scripts.measure import campaign


def model(set_, family, kind="image", gflop=1.0):
    return {"set": set_, "family": family, "kind": kind, "gflop": gflop, "base_sequence": 128}


MODELS = {
    "resnet18": model("classic", "resnet", gflop=3.6),
    "vgg19": model("classic", "vgg", gflop=41.0),
    "transformers/gpt2.prefill": model("transformers", "gpt2", "sequence", gflop=32.0),
    "transformers/gpt2.decode": model("transformers", "gpt2", "decode", gflop=0.3),
    "nasbench201/nb201_00007": model("nasbench201", "nasbench201", gflop=0.1),
    "torchvision/resnet18_r128": model("torchvision", "resnet"),
    "torchvision/resnet18_r160": model("torchvision", "resnet"),
    "torchvision/resnet18_r192": model("torchvision", "resnet"),
    "torchvision/vgg11_r224": model("torchvision", "vgg"),
}


class PlanTest(unittest.TestCase):
    def test_order_is_batch_one_everywhere_first(self):
        plan = campaign.configs(MODELS)
        self.assertEqual(len(plan), len(set(plan)))
        sets = [MODELS[c[0]]["set"] for c in plan]
        firsts = 4 + 1 + 4  # classic and transformers once each, the NB201 cell, the four variants
        self.assertTrue(all(c[1] == 1 and c[4] == 1 for c in plan[:firsts]))
        self.assertEqual(set(sets[:4]), {"classic", "transformers"})
        self.assertEqual(sets[4], "nasbench201")
        # Variants take turns by family, so a piece cut short still spans families.
        self.assertEqual([MODELS[c[0]]["family"] for c in plan[5:9]], ["resnet", "vgg", "resnet", "resnet"])
        self.assertTrue(all(MODELS[c[0]]["set"] in ("classic", "transformers") for c in plan[firsts:]))
        # classic: 3 batches x 2 threads; prefill and decode: 3 batches x 2 lengths x 2 threads
        self.assertEqual(len(plan), 2 * 6 + 2 * 12 + 1 + 4)

    def test_shapes_of_each_kind(self):
        plan = campaign.configs(MODELS)
        dec = [c for c in plan if c[0] == "transformers/gpt2.decode"]
        self.assertEqual({(c[2], c[3]) for c in dec}, {(1, 128), (1, 512)})
        pre = [c for c in plan if c[0] == "transformers/gpt2.prefill"]
        self.assertEqual({(c[2], c[3]) for c in pre}, {(128, 0), (512, 0)})
        self.assertEqual(pre[0], ("transformers/gpt2.prefill", 1, 128, 0, 1))

    def test_cap_leaves_out_heavy_configurations(self):
        plan = campaign.configs(MODELS, max_gflop=640)
        self.assertNotIn(("vgg19", 16, 0, 0, 1), plan)          # 16 x 41 GFLOP
        self.assertIn(("vgg19", 4, 0, 0, 2), plan)
        self.assertNotIn(("transformers/gpt2.prefill", 16, 512, 0, 1), plan)  # 16 x 32 x 4
        self.assertIn(("transformers/gpt2.prefill", 4, 512, 0, 1), plan)

    def test_family_turns_cheapest_first(self):
        ms = {"a": model("torchvision", "x", gflop=3), "b": model("torchvision", "x", gflop=1),
              "c": model("torchvision", "y", gflop=2)}
        self.assertEqual(campaign.family_turns(list(ms), ms), ["b", "c", "a"])

    def test_only_filters_models(self):
        plan = campaign.configs(MODELS, only={"resnet18"})
        self.assertEqual({c[0] for c in plan}, {"resnet18"})


class CsvTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.csv = os.path.join(self.tmp.name, "rows.csv")

    def tearDown(self):
        self.tmp.cleanup()

    def rows(self):
        with open(self.csv, newline="") as f:
            return list(csv.DictReader(f))

    def test_old_header_gains_new_columns(self):
        old = [f for f in campaign.FIELDS if f != "past_sequence"]
        with open(self.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=old)
            w.writeheader()
            w.writerow({k: "7" for k in old} | {"model": "resnet18"})
        campaign.ensure_header(self.csv, campaign.FIELDS)
        rows = self.rows()
        self.assertEqual(list(rows[0]), campaign.FIELDS)
        self.assertEqual((rows[0]["model"], rows[0]["past_sequence"], rows[0]["batch"]), ("resnet18", "0", "7"))
        self.assertEqual(campaign.config_key(rows[0]), ("resnet18", 7, 7, 0, 7))

    def test_unknown_column_is_refused(self):
        with open(self.csv, "w", newline="") as f:
            f.write("model,surprise\nresnet18,1\n")
        with self.assertRaises(SystemExit):
            campaign.ensure_header(self.csv, campaign.FIELDS)

    def piece(self, todo, refs, check_every, measure=lambda config: timing(), **steadiness):
        """Runs a piece of `todo` whose reference times `refs` in turn (the first three are the start's)."""
        refs = iter(refs)
        campaign.run_piece(todo, measure, row_of, lambda: next(refs), self.csv, campaign.FIELDS,
                           deadline=float("inf"), check_every=check_every, drift_limit=0.03, **steadiness)
        return self.rows()

    def test_piece_marks_drift_and_skips_failures(self):
        def measure(config):
            if config[0] == "broken":
                raise RuntimeError("Error: unsupported op")
            return timing()

        todo = [("a", 1, 0, 0, 1), ("broken", 1, 0, 0, 1), ("b", 1, 0, 0, 1), ("c", 1, 0, 0, 1), ("d", 1, 0, 0, 1)]
        # start = median of three; then within 3%; then +29% of the level
        rows = self.piece(todo, [10.0, 10.0, 10.0, 10.1, 13.0], check_every=2, measure=measure)
        self.assertEqual([r["model"] for r in rows], ["a", "b", "c", "d"])
        self.assertEqual([r["drift"] for r in rows], ["0", "0", "1", "1"])
        done = campaign.done_configs(self.csv, "m", campaign.config_key)
        self.assertEqual(done, {("a", 1, 0, 0, 1), ("b", 1, 0, 0, 1)})

    def test_the_level_is_every_earlier_check_not_a_fast_start(self):
        # a start 10% fast, then a machine steady at 10
        rows = self.piece([(m, 1, 0, 0, 1) for m in "abcd"], [9.0, 9.0, 9.0, 10.0, 10.0, 10.1, 9.9], check_every=1)
        # level 9, then the median of [9, 10]; from the third check on the median is 10 and every check within 1%
        self.assertEqual([r["drift"] for r in rows], ["1", "1", "0", "0"])
        self.assertEqual([float(r["reference_ratio"]) for r in rows], [round(10 / 9, 4), round(10 / 9.5, 4), 1.01, 0.99])

    def test_rows_keep_their_checks_reference_time_and_piece(self):
        rows = self.piece([(m, 1, 0, 0, 1) for m in "abc"], [10.0, 10.0, 10.0, 10.2, 12.5], check_every=2)
        self.assertEqual([float(r["reference_ms"]) for r in rows], [10.2, 10.2, 12.5])
        self.assertEqual(len({r["piece"] for r in rows}), 1)
        self.assertRegex(rows[0]["piece"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")

    def test_old_rows_gain_empty_reference_times(self):
        old = [f for f in campaign.FIELDS if f not in campaign.NEVER_TAKEN]
        with open(self.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=old)
            w.writeheader()
            w.writerow({k: "7" for k in old})
        campaign.ensure_header(self.csv, campaign.FIELDS)
        row = self.rows()[0]
        self.assertEqual((row["reference_ms"], row["piece"], row["drift"]), ("", "", "7"))

    def test_a_first_check_five_percent_off_is_drift(self):
        rows = self.piece([("a", 1, 0, 0, 1)], [10.0, 10.0, 10.0, 10.5], check_every=1)
        self.assertEqual([r["drift"] for r in rows], ["1"])

    def test_an_unsteady_configuration_is_timed_again_and_the_steadiest_kept(self):
        spreads = {"a": iter([0.5, 0.3, 0.4]), "b": iter([0.1]), "c": iter([0.6, 0.15])}

        def measure(config):
            s = next(spreads[config[0]])
            return timing(spread=s, median_ms=1.0 + s)

        todo = [("a", 1, 0, 0, 1), ("b", 1, 0, 0, 1), ("c", 1, 0, 0, 1)]
        rows = {r["model"]: r for r in self.piece(todo, [10.0] * 4, check_every=10, measure=measure,
                                                  max_spread=0.2, retries=2)}
        self.assertEqual(rows["a"]["spread"], "0.3")   # three timings, none steady: the steadiest
        self.assertEqual(rows["b"]["spread"], "0.1")   # steady at once: timed once (its iterator had one)
        self.assertEqual(rows["c"]["spread"], "0.15")  # steady on the second: no third timing
        self.assertEqual(rows["c"]["median_ms"], "1.15")


def timing(spread=0.2, median_ms=1.0):
    """One configuration's timing as measure() returns it."""
    return {"runs": 10, "median_ms": median_ms, "p10_ms": 0.9, "p90_ms": 1.1, "min_ms": 0.9, "spread": spread,
            "ort_version": "test"}


def row_of(config, r):
    m, b, s, p, t = config
    return {"machine_id": "m", "model": m, "family": "f", "batch": b, "sequence": s, "past_sequence": p,
            "threads": t, "peak_rss_mib": 1.0}


class MaterializeTest(unittest.TestCase):
    def test_integer_buffers_are_zero_and_bare_locations_are_sized(self):
        import numpy as np
        import onnx
        from onnx import TensorProto, helper

        def external(name, dtype, dims, **where):
            t = TensorProto(name=name, data_type=dtype, dims=dims)
            t.data_location = TensorProto.EXTERNAL
            for k, v in {"location": "w.bin", **where}.items():
                t.external_data.add(key=k, value=str(v))
            return t

        # a float table at [0, 64), an int64 index table at [64, 96), and one float tensor that names only
        # the file (as vit_h_14 does): 40 x 4 bytes read from offset 0
        inits = [external("table", TensorProto.FLOAT, [16], offset=0, length=64),
                 external("index", TensorProto.INT64, [4], offset=64, length=32),
                 external("bare", TensorProto.FLOAT, [40])]
        g = helper.make_graph([helper.make_node("Gather", ["table", "index"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "m.onnx")
            onnx.save(helper.make_model(g), src)
            dst = campaign.materialize(src, os.path.join(tmp, "out"))
            data = open(os.path.join(os.path.dirname(dst), "w.bin"), "rb").read()
        self.assertEqual(len(data), 160)
        self.assertEqual(data[64:96], bytes(32))
        self.assertTrue(np.abs(np.frombuffer(data[:64], np.float32)).max() > 0)


class MiscTest(unittest.TestCase):
    def test_classic_cost_is_never_free(self):
        self.assertAlmostEqual(campaign.classic_gflop("x", {"torch_macs": 1.5e9}), 3.0)
        # no torch count and no graph to analyze: unknown cost, above any cap
        self.assertEqual(campaign.classic_gflop("no-such-export", {}), float("inf"))

    def test_error_line_names_the_error_not_nodes_banner(self):
        err = "file:///x.mjs:1\nError: Could not find an implementation for Foo(1) node with name 'n'\n" \
              "    at Object.<anonymous>\n\nNode.js v20.20.2\n"
        self.assertTrue(campaign.error_line(err).startswith("Error: Could not find an implementation"))
        self.assertEqual(campaign.error_line("just this\n"), "just this")

    def test_materialized_keeps_the_reference_and_the_current_model(self):
        made = []

        def fake(src, out_dir):
            os.makedirs(out_dir, exist_ok=True)
            made.append(out_dir)
            return os.path.join(out_dir, "m.onnx")

        real = campaign.materialize
        campaign.materialize = fake
        try:
            with campaign.Materialized() as path_of:
                ref = path_of(campaign.REFERENCE[0])
                a = path_of("torchvision/a")
                b = path_of("torchvision/b")
                self.assertTrue(os.path.isdir(os.path.dirname(ref)))
                self.assertFalse(os.path.exists(os.path.dirname(a)))
                self.assertTrue(os.path.isdir(os.path.dirname(b)))
                self.assertEqual(path_of(campaign.REFERENCE[0]), ref)
                self.assertEqual(len(made), 3)
            self.assertFalse(os.path.exists(os.path.dirname(ref)))
        finally:
            campaign.materialize = real


if __name__ == "__main__":
    unittest.main()
