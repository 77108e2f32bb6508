"""Checks of nasbench201.py:  /usr/bin/python3 -m scripts.zoo.test_nasbench201

The ONNX graphs written by onnx.helper (both forms of a `none` edge, nb.ZEROS) are checked against a second,
independent construction: the same networks written as torch modules (from NAS-Bench-201's description, not from its code),
counted at the ATen level (torch_count.py) and also exported with torch.onnx; PerfCard's analyze
must give the same MACs and parameters for the helper-built graph as both of those.
"""
import itertools
import os
import subprocess
import tempfile
import unittest

import torch

from scripts.zoo import manifest, torch_count
from scripts.zoo import nasbench201 as nb
from scripts.zoo.nasbench201_torch import Net

# Chosen to cover: all-conv (largest), all-none (smallest, zero cell output), every op once, an
# all-zero intermediate node whose output is still convolved, dead nodes, and HELP's index 0 and 1.
ARCHS = [
    "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|",
    "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|",
    "|avg_pool_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|nor_conv_1x1~0|skip_connect~1|skip_connect~2|",
    "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|",
    "|none~0|+|nor_conv_1x1~0|nor_conv_3x3~1|+|avg_pool_3x3~0|none~1|nor_conv_1x1~2|",
    "|nor_conv_1x1~0|+|none~0|none~1|+|skip_connect~0|nor_conv_3x3~1|none~2|",
]


def analyze(path):
    return manifest.analyze(path, {"batch": 1})


class AgainstTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_macs_and_params_agree(self):
        for (i, arch), zeros in itertools.product(enumerate(ARCHS), nb.ZEROS):
            with self.subTest(arch=arch, zeros=zeros):
                ours = os.path.join(self.tmp.name, f"ours{i}.onnx")
                import onnx
                onnx.save_model(nb.build_model(arch, zeros=zeros), ours)
                got = analyze(ours)
                net = Net(arch, zeros=zeros).eval()
                with torch.no_grad():  # distinct values, or the exporter merges equal initializers
                    for t in list(net.parameters()) + list(net.buffers()):
                        if t.is_floating_point():
                            t.uniform_(0.5, 1.5)
                x = torch.randn(1, 3, 32, 32)
                ref = torch_count.count(net, x, grad=False)
                params = sum(p.numel() for p in net.parameters())
                self.assertEqual(got["params"], params)
                self.assertEqual(got["macs"], ref["macs"])
                exported = os.path.join(self.tmp.name, f"torch{i}.onnx")
                torch.onnx.export(net, x, exported, opset_version=13, input_names=["input"],
                                  output_names=["logits"], dynamic_axes={"input": {0: "batch"}},
                                  training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
                theirs = analyze(exported)
                for k in ("macs", "params", "activations"):
                    self.assertEqual(got[k], theirs[k], k)

    def test_extremes_by_hand(self):
        # Written out layer by layer (MACs = Cin*Cout*k*k*H*W): the skeleton alone is the all-none
        # cell's network; the all-3x3 cell adds 6 convs of C*C*9*HW in each of 15 cells.
        skeleton = (3 * 16 * 9 * 32 * 32                                              # stem
                    + 16 * 32 * 9 * 16 * 16 + 32 * 32 * 9 * 16 * 16 + 16 * 32 * 16 * 16  # reduction 1
                    + 32 * 64 * 9 * 8 * 8 + 64 * 64 * 9 * 8 * 8 + 32 * 64 * 8 * 8        # reduction 2
                    + 64 * 100)                                                       # classifier
        cells = sum(5 * 6 * c * c * 9 * hw * hw for c, hw in ((16, 32), (32, 16), (64, 8)))
        self.assertEqual(analyze_arch(self.tmp.name, ARCHS[1])["macs"], skeleton)
        self.assertEqual(analyze_arch(self.tmp.name, ARCHS[0])["macs"], skeleton + cells)

    def test_every_edge_runs_when_zeros_are_computed(self):
        # NB201's cell: each node sums all of its edges from 0 (1 + 2 + 3 Adds), each `none` edge is a Mul by 0,
        # whatever the wiring; the dropped form's Adds and Muls depend on the wiring instead.
        def count(arch, zeros):
            ops = [n.op_type for n in nb.build_model(arch, zeros=zeros).graph.node]
            return ops.count("Add"), ops.count("Mul")
        reductions = 2  # each reduction block's residual Add
        for arch in ARCHS:
            with self.subTest(arch=arch):
                nones = sum(op == "none" for _, _, op in nb.parse_arch(arch))
                self.assertEqual(count(arch, "computed"), (15 * 6 + reductions, 15 * nones))
        # Two wirings of one op count: equal work computed, unequal dropped.
        a = "|none~0|+|skip_connect~0|nor_conv_1x1~1|+|none~0|skip_connect~1|avg_pool_3x3~2|"
        b = "|skip_connect~0|+|none~0|nor_conv_1x1~1|+|none~0|avg_pool_3x3~1|skip_connect~2|"
        self.assertEqual(count(a, "computed"), count(b, "computed"))
        self.assertEqual(count(a, "dropped"), (15 * 2 + reductions, 15))
        self.assertEqual(count(b, "dropped"), (15 * 1 + reductions, 0))
        with self.assertRaises(ValueError):
            nb.build_model(a, zeros="pruned")

    def test_batch_is_symbolic(self):
        path = os.path.join(self.tmp.name, "b.onnx")
        import onnx
        onnx.save_model(nb.build_model(ARCHS[3]), path)
        one = manifest.analyze(path, {"batch": 1})
        eight = manifest.analyze(path, {"batch": 8})
        self.assertEqual(eight["macs"], 8 * one["macs"])
        self.assertEqual(eight["params"], one["params"])


def analyze_arch(tmp, arch):
    import onnx
    path = os.path.join(tmp, "x.onnx")
    onnx.save_model(nb.build_model(arch), path)
    return analyze(path)


class CanonicalKey(unittest.TestCase):
    def test_swapped_intermediate_nodes_are_one_cell(self):
        a = "|nor_conv_3x3~0|+|avg_pool_3x3~0|none~1|+|nor_conv_1x1~0|skip_connect~1|nor_conv_3x3~2|"
        b = "|avg_pool_3x3~0|+|nor_conv_3x3~0|none~1|+|nor_conv_1x1~0|nor_conv_3x3~1|skip_connect~2|"
        self.assertEqual(nb.canonical_key(a), nb.canonical_key(b))
        c = "|avg_pool_3x3~0|+|nor_conv_3x3~0|skip_connect~1|+|nor_conv_1x1~0|nor_conv_3x3~1|skip_connect~2|"
        self.assertNotEqual(nb.canonical_key(a), nb.canonical_key(c))  # 1->2 edge: order is fixed

    def test_dead_edges_do_not_count(self):
        # node 1 feeds nothing: its input edge is dead
        a = "|nor_conv_3x3~0|+|avg_pool_3x3~0|none~1|+|nor_conv_1x1~0|none~1|skip_connect~2|"
        b = "|none~0|+|avg_pool_3x3~0|none~1|+|nor_conv_1x1~0|none~1|skip_connect~2|"
        self.assertEqual(nb.canonical_key(a), nb.canonical_key(b))
        # node 1 has no input: what it feeds is dead
        c = "|none~0|+|avg_pool_3x3~0|nor_conv_3x3~1|+|nor_conv_1x1~0|nor_conv_3x3~1|skip_connect~2|"
        self.assertEqual(nb.canonical_key(b), nb.canonical_key(c))
        self.assertEqual(nb.canonical_key(ARCHS[1]), "zero")

    def test_class_count_matches_an_expression_form(self):
        # Second formulation: each node as the sorted sum of op(input expression), zero terms removed.
        # Equal graphs up to relabeling/dead edges <=> equal output expressions, so the counts agree.
        archs = nb.help_archs()

        def expr(arch):
            vals = {0: "x"}
            for j in (1, 2, 3):
                terms = sorted(f"{op}({vals[s]})" for s, d, op in nb.parse_arch(arch)
                               if d == j and op != "none" and vals[s] != "0")
                vals[j] = "+".join(terms) or "0"
            return vals[3]

        self.assertEqual(len(archs), 15625)
        n_keys = len({nb.canonical_key(a) for a in archs.values()})
        self.assertEqual(n_keys, len({expr(a) for a in archs.values()}))
        # NAS-Bench-201's own de-duplication (skip_connect as identity, zero terms kept in the sum)
        # gives its published 6,466 unique cells; ours keeps skip_connect as an edge and drops zeros.
        self.assertLess(n_keys, 15625)


class AsMeasured(unittest.TestCase):
    def test_rows_before_the_change_ran_the_dropped_form(self):
        before, after = "2026-11-27T19:25:22", "2026-11-28T12:00:00"
        self.assertEqual(nb.as_measured("nasbench201/nb201_00042", before), "nasbench201_dropped/nb201d_00042")
        self.assertEqual(nb.as_measured("nb201_15044", before), "nb201d_15044")
        self.assertEqual(nb.as_measured("nasbench201/nb201_00042", after), "nasbench201/nb201_00042")
        for other in ("resnet50", "torchvision/resnet18_w0.5", "transformers/gpt2"):
            self.assertEqual(nb.as_measured(other, before), other)

    def test_every_row_measured_before_has_its_dropped_graph(self):
        # The measured CSVs' NB201 cells are all in the dropped manifest, and its graphs are what the zoo built
        # before the change (the same MACs as the computed form: a none edge or a sum adds no MAC).
        import csv
        import glob
        import json
        from scripts import paths
        with open(os.path.join(paths.ZOO_MANIFESTS, "nasbench201_dropped.jsonl")) as f:
            dropped = {json.loads(line)["id"] for line in f}
        for path in glob.glob(os.path.join(paths.MEASURED, "*.csv")):
            with open(path) as f:
                for r in csv.DictReader(f):
                    model = r.get("model", "")
                    if "nb201_" in model and r.get("timestamp"):
                        self.assertIn(nb.as_measured(model, r["timestamp"]).split("/")[-1], dropped, path)


if __name__ == "__main__":
    unittest.main()
