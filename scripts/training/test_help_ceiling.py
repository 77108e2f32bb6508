"""Checks of help_ceiling.py on made-up labels:  /usr/bin/python3 -m unittest scripts.training.test_help_ceiling"""
import json
import unittest

import numpy as np
import pandas as pd

from scripts.roofline.whole_models import family_split
from scripts.training import help_ceiling as hc

CONV3 = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"
# Two wirings of one class (2 none, 2 skip, 1 conv 1x1, 1 pool) and a cell of another class.
A = "|none~0|+|skip_connect~0|nor_conv_1x1~1|+|none~0|skip_connect~1|avg_pool_3x3~2|"
B = "|skip_connect~0|+|none~0|none~1|+|avg_pool_3x3~0|nor_conv_1x1~1|skip_connect~2|"


def cells(n_train: int, n_test: int, start: int = 0) -> tuple[list[int], list[int]]:
    """Arch indices whose family split is train / test (the split is a hash of the name)."""
    train, test, i = [], [], start
    while len(train) < n_train or len(test) < n_test:
        (train if family_split(f"nasbench201:{i}") == "train" else test).append(i)
        i += 1
    return train[:n_train], test[:n_test]


class HelpCeiling(unittest.TestCase):
    def test_op_counts(self):
        self.assertEqual(hc.op_counts(CONV3), (0, 0, 0, 6, 0))
        self.assertEqual(hc.op_counts(A), hc.op_counts(B))
        self.assertEqual(hc.op_counts(A), (2, 2, 1, 0, 1))

    def labelled(self, noise: float):
        """24 classes of a made-up device: latency = the class's cost, times noise; 3 train, 2 test cells each."""
        rng = np.random.default_rng(0)
        train, test = cells(72, 48)
        archs = [f"|{a}~0|+|{b}~0|{c}~1|+|{d}~0|skip_connect~1|skip_connect~2|"
                 for a in ("none", "nor_conv_1x1", "nor_conv_3x3") for b in ("none", "avg_pool_3x3")
                 for c in ("none", "nor_conv_3x3") for d in ("skip_connect", "avg_pool_3x3")]
        cost = {o: c for o, c in zip(("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3"),
                                     (0.3, 0.0, 2.0, 2.1, 0.35))}
        rows = []
        for k, arch in enumerate(archs):
            base = 5.0 + sum(cost[op] for _, _, op in hc.nb.parse_arch(arch))
            for i in train[3 * k:3 * k + 3] + test[2 * k:2 * k + 2]:
                rows.append(("gtx1080ti", 1, i, arch, base * (1 + noise * rng.standard_normal())))
        lab = pd.DataFrame(rows, columns=["device_id", "batch", "cell", "arch", "latency_ms"])
        lab["cls"] = lab.arch.map(hc.op_counts)
        lab["split"] = lab.cell.map(lambda i: family_split(f"nasbench201:{i}"))
        held = lab[lab.split == "test"]
        scored = pd.DataFrame({
            "source": "help_gpu", "device_id": held.device_id, "precision": "fp32",
            "family": [f"nasbench201:{i}" for i in held.cell], "dims": json.dumps({"batch": 1}),
            "latency_ms": held.latency_ms,
            **{c: held.latency_ms * (1 + 0.05 * rng.standard_normal(len(held)))
               for c in ("ensemble_ms", "trees_ms", "gnn_ms", "transformer_ms")}})
        return lab, scored

    def test_class_mean_is_over_train_cells_only(self):
        lab, scored = self.labelled(0.02)
        g = hc.with_ceiling(scored, lab)
        self.assertEqual(len(g), 48)
        for _, r in g.iterrows():
            cls = lab.loc[lab.cell == r.cell, "cls"].iloc[0]
            want = lab[(lab.cls == cls) & (lab.split == "train")].latency_ms.mean()
            self.assertAlmostEqual(r.class_ms, want)

    def test_ceiling_is_one_without_noise_and_falls_with_it(self):
        def ceiling(noise):
            lab, scored = self.labelled(noise)
            text = hc.lines(scored, lab)
            row = next(line for line in text if line.startswith("| gtx1080ti | 48 |"))
            return float(row.split("|")[7])
        self.assertEqual(ceiling(0.0), 1.0)
        self.assertLess(ceiling(0.05), 0.95)

    def test_edge_costs_recover_the_ops(self):
        lab, _ = self.labelled(0.0)
        c = hc.edge_costs(lab).iloc[0]
        self.assertAlmostEqual(c["skip_connect"], 0.0)
        self.assertAlmostEqual(c["none"], 0.3)
        self.assertAlmostEqual(c["nor_conv_3x3"], 2.1)


if __name__ == "__main__":
    unittest.main()
