"""The ensemble's fitting rules on data whose answer is known, and the committed file as the core loads it:
members of another version are refused (a member retrained without refitting the ensemble)."""
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np
import pandas as pd

from scripts import paths
from scripts.roofline.perfcard_eval import cli
from scripts.training import ensemble, quantization
from scripts.weights import pcwt


class OodReasonTable(unittest.TestCase):
    def test_each_reason_of_the_flag_has_its_rows_and_both_errors(self):
        from scripts.training import report
        test = pd.DataFrame({"source": ["timm", "timm", "help_gpu", "timm"],
                             "latency_ms": [1.0, 1.0, 1.0, 1.0], "ensemble_ms": [1.1, 1.3, 1.0, 2.0],
                             "roofline_ms": [2.0, 1.5, 1.2, 2.0],
                             "ood_reasons": ["feature-range,embedding-distance", "feature-range", "", ""]})
        text = "\n".join(report.ood_reason_lines(test))
        self.assertIn("| embedding-distance | timm | 1 | 10.0% | 100.0% |", text)
        self.assertIn("| feature-range | timm | 2 | 20.0% | 75.0% |", text)
        self.assertNotIn("help_gpu", text)  # not flagged
        self.assertEqual(report.ood_reason_lines(test.assign(ood_reasons="")), [])
        self.assertEqual(report.ood_reason_lines(test.drop(columns="ood_reasons")), [])  # a score from before


class NoiseTable(unittest.TestCase):
    def test_rows_fall_in_their_spread_bin_and_sources_without_spread_are_left_out(self):
        from scripts.training import report
        test = pd.DataFrame({"source": ["cpu_ours", "cpu_ours", "cpu_ours", "cpu_ours", "timm"],
                             "spread": [0.05, 0.02, 0.051, 0.9, np.nan],
                             "latency_ms": [1.0, 1.0, 1.0, 1.0, 1.0], "roofline_ms": [1.2, 1.0, 2.0, 1.0, 3.0],
                             "trees_ms": [1.1, 1.0, 1.5, 1.0, 3.0], "ensemble_ms": [1.1, 0.9, 1.5, 0.5, 3.0]})
        text = "\n".join(report.noise_lines(test))
        self.assertIn("| cpu_ours | <= 5% | 2 | 10.0% | 5.0% | 10.0% | +0% |", text)  # 5% exactly: the first bin
        self.assertIn("| cpu_ours | 5%-10% | 1 | 100.0% | 50.0% | 50.0% | +50% |", text)
        self.assertIn("| cpu_ours | > 30% | 1 | 0.0% | 0.0% | 50.0% | -50% |", text)
        self.assertNotIn("10%-20%", text)  # an empty bin has no line
        self.assertNotIn("timm", text)
        self.assertEqual(report.noise_lines(test.drop(columns="spread")), [])  # a score from before


class AimFamilyTable(unittest.TestCase):
    def test_each_family_of_the_aims_sources_has_its_rows_and_errors(self):
        from scripts.training import report
        test = pd.DataFrame({"source": ["cpu_ours", "cpu_ours", "cpu_ours", "timm", "help_gpu"],
                             "family": ["shufflenet_v2", "shufflenet_v2", "vgg", "vgg", "nasbench201"],
                             "latency_ms": [1.0, 1.0, 2.0, 1.0, 1.0], "roofline_ms": [1.5, 1.5, 2.0, 1.0, 9.0],
                             "trees_ms": [1.1, 1.3, 2.0, 1.0, 9.0], "gnn_ms": [1.0, 1.0, 1.0, 1.0, 9.0],
                             "transformer_ms": [1.0, 1.0, 2.2, 1.0, 9.0], "ensemble_ms": [1.1, 0.7, 2.0, 1.2, 9.0]})
        text = "\n".join(report.aim_family_lines(test))
        self.assertIn("| cpu_ours | shufflenet_v2 | 2 | 50.0% | 20.0% | 0.0% | 0.0% | 20.0% | -10% |", text)
        self.assertIn("| cpu_ours | vgg | 1 | 0.0% | 0.0% | 50.0% | 10.0% | 0.0% | +0% |", text)
        self.assertIn("| timm | vgg | 1 |", text)
        self.assertNotIn("nasbench201", text)  # HELP's aim is an order, not a MAPE
        self.assertEqual(report.aim_family_lines(test[test.source == "help_gpu"]), [])


class FoldCache(unittest.TestCase):
    def test_a_second_run_reads_each_fold_instead_of_refitting(self):
        from unittest import mock
        from scripts.training import trees
        rng = np.random.default_rng(3)
        n = 60
        df = pd.DataFrame({"family": [f"fam{i % 12}" for i in range(n)], "split": "train",
                           "roofline_ms": rng.uniform(1, 2, n), "latency_ms": rng.uniform(1, 2, n)})
        fits = []

        def fit(rows, seed=0):
            fits.append(len(rows))
            return float(len(rows))

        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(trees, "fit", fit), \
                mock.patch.object(trees, "margins", lambda booster, rows: np.full(len(rows), 0.01 * booster)), \
                mock.patch.object(trees, "target", lambda rows: np.array([-1.0, 1.0])):
            cache = os.path.join(tmp, "oof3")
            first = ensemble.out_of_fold(df, ([], None), ([], None), 3, {"ops": [], "op_classes": []}, ["trees"], cache)
            self.assertEqual(len(fits), 3)
            self.assertEqual(sorted(os.listdir(tmp)), ["oof3.trees0", "oof3.trees1", "oof3.trees2"])
            os.remove(os.path.join(tmp, "oof3.trees1"))  # a run cut short in its second fold
            again = ensemble.out_of_fold(df, ([], None), ([], None), 3, {"ops": [], "op_classes": []}, ["trees"], cache)
            self.assertEqual(len(fits), 4)  # only the missing fold refitted
        pd.testing.assert_frame_equal(first, again)
        self.assertEqual(len(first), n)


class FitRules(unittest.TestCase):
    def test_weights_pick_the_member_that_is_right(self):
        rng = np.random.default_rng(0)
        y = rng.normal(size=400)
        logs = np.stack([y + 0.5, y + rng.normal(scale=0.02, size=400), y + 0.3], 1)  # biases of one sign
        w = ensemble.fit_weights(logs, y, np.full(400, 1 / 400))
        self.assertAlmostEqual(float(w.sum()), 1.0)
        self.assertGreaterEqual(w[1], 0.5)

    def test_simplex_covers_the_grid_for_any_member_count(self):
        for members, count in ((2, 21), (3, 231), (4, 1771)):  # compositions of 20 steps into `members` parts
            pts = list(ensemble.simplex(members))
            self.assertEqual(len(pts), count)
            self.assertTrue(all(abs(p.sum() - 1) < 1e-12 and (p >= 0).all() for p in pts))

    def test_band_holds_the_coverage_it_was_fitted_for(self):
        rng = np.random.default_rng(1)
        spread = rng.uniform(0, 0.3, size=5000)
        err = np.abs(rng.normal(scale=0.05 + spread))  # errors grow with the members' disagreement
        w = np.full(len(err), 1 / len(err))
        base, a = ensemble.fit_band(err, spread, w)
        inside = float(np.mean(err <= base + a * spread))
        self.assertAlmostEqual(inside, ensemble.COVERAGE, delta=0.01)
        self.assertGreater(a, 0)  # the disagreement is worth widening for
        narrowest_fixed = np.quantile(err, ensemble.COVERAGE)
        self.assertLess(float(np.mean(base + a * spread)), narrowest_fixed)

    def test_rows_are_grouped_by_their_runtimes_kind(self):
        got = ensemble.group_of(pd.Series(["onnxruntime", "onnxruntime-web", "pytorch-eager", "pytorch-cuda-graphs"]))
        self.assertEqual(list(got), ["cpu", "cpu", "gpu", "gpu"])
        with self.assertRaises(SystemExit) as e:
            ensemble.group_of(pd.Series(["onnxruntime", "tvm"]))
        self.assertEqual(str(e.exception), "runtimes ['tvm'] are not in weights/roofline.json: no kind to group their rows by")

    def test_a_family_named_as_its_kind_is_fitted_on_its_own_rows(self):
        # The core takes the "cpu" family's weights from the group named "cpu": it must not hold the browser's.
        rows = [("onnxruntime", "cpu", f"f{i % 6}") for i in range(120)] + \
               [("onnxruntime-web", "browser", f"f{i % 6}") for i in range(110)] + \
               [("pytorch-eager", "hopper", f"f{i % 6}") for i in range(30)]
        oof = pd.DataFrame(rows, columns=["runtime", "device_family", "family"])
        got = ensemble.groups(oof)
        self.assertEqual(sorted(got), ["browser", "cpu", "gpu"])  # hopper: too few rows for its own
        self.assertEqual(int(got["cpu"].sum()), 120)
        self.assertTrue((oof.device_family[got["cpu"]] == "cpu").all())
        self.assertEqual(int(got["gpu"].sum()), 30)
        few = oof[oof.device_family != "cpu"].tail(200).reset_index(drop=True)  # no cpu rows: the kind's group
        self.assertEqual(int(ensemble.groups(few)["cpu"].sum()), int((few.runtime != "pytorch-eager").sum()))

    def test_distance_is_zero_at_a_centroid(self):
        rng = np.random.default_rng(2)
        x = np.concatenate([rng.normal(loc=c, scale=0.1, size=(50, 4)) for c in (-3, 0, 3)])
        c = ensemble.kmeans(x, 3)
        self.assertAlmostEqual(float(ensemble.distance(c[:1], c)[0]), 0.0)
        self.assertGreater(float(ensemble.distance(np.full((1, 4), 10.0), c)[0]), 5)


class CommittedFile(unittest.TestCase):
    def test_each_member_version_is_that_members(self):
        with open(ensemble.OUT, "rb") as f:
            meta = pcwt.read_bytes(f.read()).metadata
        members = list(meta["ensemble.members"])
        self.assertEqual(members[0], "roofline")
        self.assertEqual(members, [m for m in ensemble.MEMBERS if m in members], "candidates, in their order")
        for member, version in zip(meta["ensemble.members"], meta["ensemble.member_versions"]):
            self.assertTrue(version.startswith(member + "-"), f"{member}: {version}")

    def eval_with(self, meta: dict, tensors: dict, model="resnet50.onnx"):
        data = pcwt.write_bytes(meta, tensors)
        with quantization.weights_with({"ensemble.pcwt": data}) as tmp:
            q = os.path.join(tmp, "q.jsonl")
            with open(q, "w") as f:
                f.write(json.dumps({"model": os.path.join(paths.ROOT, "public", "examples", model),
                                    "device": "rtx4090", "precision": "fp16", "predictor": "ensemble"}) + "\n")
            r = subprocess.run([cli(), "eval", q, "--weights", tmp], capture_output=True, text=True, check=True)
        return r.stderr, json.loads(r.stdout)

    def test_eval_gives_an_embedding_only_from_a_predictor_that_computed_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            q = os.path.join(tmp, "q.jsonl")
            model = os.path.join(paths.ROOT, "public", "examples", "resnet50.onnx")
            with open(q, "w") as f:
                for predictor, field in (("gnn", "embedding"), ("transformer", "sequence_embedding"),
                                         ("trees", "embedding"), ("trees", "sequence_embedding")):
                    f.write(json.dumps({"model": model, "device": "rtx4090", "precision": "fp16",
                                        "predictor": predictor, field: True}) + "\n")
            r = subprocess.run([cli(), "eval", q, "--weights", paths.WEIGHTS], capture_output=True, text=True, check=True)
        gnn, tf, trees_graph, trees_seq = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual(len(gnn["embedding"]), 128)
        self.assertEqual(len(tf["sequence_embedding"]), 64)
        self.assertEqual(trees_graph["error"], '"embedding" needs a predictor that embeds the graph (gnn), or an '
                                               'ensemble or auto that reads it')
        self.assertEqual(trees_seq["error"], '"sequence_embedding" needs a predictor that embeds the kernel sequence '
                                             '(transformer), or an ensemble or auto that reads it')

    def test_the_file_chooses_the_embedding_that_places_a_model(self):
        with open(ensemble.OUT, "rb") as f:
            w = pcwt.read_bytes(f.read())
        tensors = {k: t.numpy() for k, t in w.tensors.items()}
        # The transformer's embedding (2 x its width of 32): centroids far from any model, unit scale.
        seq = dict(tensors, **{"ood.centroids": np.full((4, 64), 50.0, np.float32),
                               "ood.scale": np.ones(64, np.float32)})
        err, out = self.eval_with(dict(w.metadata, **{"ood.embedding": "sequence"}), seq)
        self.assertEqual(err, "")
        self.assertTrue(out["out_of_distribution"])
        self.assertTrue(any("far from every graph trained on" in x for x in out["warnings"]), out["warnings"])
        err, out = self.eval_with(dict(w.metadata, **{"ood.embedding": "nodes"}), tensors)
        self.assertIn("ood.embedding is 'nodes'; expected graph or sequence", err)
        self.assertIn("predictor 'ensemble' is not available", out["error"])

    def test_members_of_another_version_are_refused(self):
        with open(ensemble.OUT, "rb") as f:
            w = pcwt.read_bytes(f.read())
        meta = dict(w.metadata)
        versions = list(meta["ensemble.member_versions"])
        versions[1] = "trees-1.1999-01-01"
        meta["ensemble.member_versions"] = versions
        data = pcwt.write_bytes(meta, {k: t.numpy() for k, t in w.tensors.items()})
        with quantization.weights_with({"ensemble.pcwt": data}) as tmp:
            q = os.path.join(tmp, "q.jsonl")
            with open(q, "w") as f:
                f.write(json.dumps({"model": os.path.join(paths.ROOT, "public", "examples", "resnet50.onnx"),
                                    "device": "rtx4090", "precision": "fp16", "predictor": "ensemble"}) + "\n")
            r = subprocess.run([cli(), "eval", q, "--weights", tmp], capture_output=True, text=True, check=True)
        self.assertIn("ensemble.pcwt not used: the ensemble was fitted with trees trees-1.1999-01-01; the loaded "
                      "one is trees-1.", r.stderr)
        self.assertIn("predictor 'ensemble' is not available", json.loads(r.stdout)["error"])


if __name__ == "__main__":
    unittest.main()
