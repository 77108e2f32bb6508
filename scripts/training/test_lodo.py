"""Leave one device out's results add up across runs (lodo.py): a device measured again replaces its rows,
other devices and the other network keep theirs, and the document lists what is still to measure."""
import unittest

import pandas as pd

from scripts.training import lodo


def table(name: str, device: str, mape: float) -> pd.DataFrame:
    return pd.DataFrame([{"source": "help_gpu", "device": device, "precision": "fp32", "rows": 3000,
                          "roofline_mape": 0.2, "trees_mape": 0.05, f"{name}_mape": mape,
                          "roofline_tau": 0.7, "trees_tau": float("nan"), f"{name}_tau": 0.88}])


class Accumulates(unittest.TestCase):
    def test_runs_add_up_and_a_rerun_replaces(self):
        devices = ["gtx1080ti", "titanxp", "t4"]
        run = {"date": "2026-11-26", "commit": "abcdef0123", "trained_rows": 1000}
        res = lodo.merge({}, "gnn", table("gnn", "titanxp", 0.04), devices, run)
        res = lodo.merge(res, "transformer", table("transformer", "t4", 0.09), devices, run)
        res = lodo.merge(res, "gnn", table("gnn", "gtx1080ti", 0.03), devices, run)
        res = lodo.merge(res, "gnn", table("gnn", "titanxp", 0.05), devices, dict(run, date="2026-11-27"))
        gnn = {r["device"]: r for r in res["gnn"]["rows"]}
        self.assertEqual(sorted(gnn), ["gtx1080ti", "titanxp"])
        self.assertEqual((gnn["titanxp"]["gnn_mape"], gnn["titanxp"]["date"]), (0.05, "2026-11-27"))
        self.assertIsNone(gnn["titanxp"]["trees_tau"])  # NaN is stored as null (JSON has no NaN)
        self.assertEqual([r["device"] for r in res["transformer"]["rows"]], ["t4"])
        text = lodo.document(res)
        self.assertIn("## The transformer", text)
        self.assertIn("## The gnn", text)
        self.assertIn("| help_gpu | titanxp | fp32 | 3000 | 20.0% | 5.0% | 5.0% | 0.70 | n/a | 0.88 | 2026-11-27, abcdef0, 1000 rows fitted |", text)
        self.assertIn("Not measured yet (a retrain each): t4.", text)  # the GNN's
        self.assertIn("Not measured yet (a retrain each): gtx1080ti, titanxp.", text)  # the transformer's


if __name__ == "__main__":
    unittest.main()
