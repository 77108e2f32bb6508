"""Stage H: the CUDA-graphs runtime's two constants, fitted and held out by family."""
import json
import unittest
from unittest import mock

import numpy as np

from scripts.calibration import calibrate_cuda_graphs as h


class Fit(unittest.TestCase):
    def test_recovers_the_constants_that_made_the_rows(self):
        rng = np.random.default_rng(1)
        busy, issues = rng.uniform(0.01, 2.0, 40), rng.integers(20, 600, 40).astype(float)
        measured = h.predict(busy, issues, 2.5, 120.0)
        d, s = h.fit(busy, issues, measured)
        self.assertAlmostEqual(d, 2.5, delta=0.01)
        self.assertAlmostEqual(s, 120.0, delta=0.5)

    def test_a_family_is_predicted_by_constants_fitted_without_it(self):
        rows = [{"family": f} for f in ("a", "a", "b", "b", "c", "c")]
        busy = np.array([0.1, 0.5, 0.1, 0.5, 0.1, 0.5])
        issues = np.array([100.0, 100, 200, 200, 300, 300])
        measured = h.predict(busy, issues, 2.0, 50.0)
        measured[:2] *= 3  # family a is off: it must not pull the others' constants, nor its own
        pred, consts = h.held_out(rows, busy, issues, measured)
        self.assertAlmostEqual(consts["a"][0], 2.0, delta=0.01)
        np.testing.assert_allclose(pred[:2], h.predict(busy[:2], issues[:2], *consts["a"]))
        self.assertNotEqual(consts["b"], (2.0, 50.0))  # a's rows were in b's fit


class Constants(unittest.TestCase):
    BASE = {"runtimes": {h.RUNTIME: {"dispatch_us": 9.0, "serial_issue": True, "step_us": 7.0, "source": "x"}}}

    def test_before_is_stage_as_estimate(self):
        from scripts.calibration.calibrate_roofline import RUNTIMES
        rt = h.stage_a(self.BASE)["runtimes"][h.RUNTIME]
        self.assertEqual((rt["dispatch_us"], rt["serial_issue"], rt["step_us"]),
                         (RUNTIMES[h.RUNTIME]["dispatch_us"], False, 0.0))
        self.assertEqual(self.BASE["runtimes"][h.RUNTIME]["dispatch_us"], 9.0)  # a copy, not the caller's

    def test_with_graph_constants_sets_serial_issue(self):
        rt = h.with_graph_constants(self.BASE, 2.0, 3.0)["runtimes"][h.RUNTIME]
        self.assertEqual((rt["dispatch_us"], rt["step_us"], rt["serial_issue"]), (2.0, 3.0, True))


class Write(unittest.TestCase):
    def doc(self):
        return {"provenance": json.dumps({"stage_g": {}}),
                "runtimes": {h.RUNTIME: {"dispatch_us": 1.0, "source": "stage A | stage G: x | stage H: old"}},
                "host_bound_accuracy": {"pytorch-eager": {"mape": 0.43, "rows": 10, "source": "e"},
                                        h.RUNTIME: {"mape": 0.9, "rows": 3, "source": "old"}}}

    def report(self, host_bound):
        rows = [{"device_id": "h200", "family": f} for f in ("a", "b", "c")]
        meas = np.array([1.0, 2.0, 3.0])
        return {"rows": rows, "measured": meas, "held_out": meas * 1.3, "dispatch_us": 2.5, "step_us": 150.0,
                "host_bound": host_bound, "device_families": ["hopper"]}

    def written(self, host_bound):
        with mock.patch.object(h, "write_constants") as w:
            h.write(self.doc(), self.report(host_bound))
        return w.call_args[0][0]

    def test_the_runtime_its_uncertainty_as_a_fraction_and_provenance(self):
        doc = self.written((2, 30.4, 25.0, 1.0, float("nan")))  # metrics(): rows, MAPE %, median, signed, tau
        rt = doc["runtimes"][h.RUNTIME]
        self.assertEqual((rt["serial_issue"], rt["dispatch_us"], rt["step_us"]), (True, 2.5, 150.0))
        self.assertEqual(rt["source"].count("stage H:"), 1)
        self.assertIn("stage G: x", rt["source"])
        hb = doc["host_bound_accuracy"]
        self.assertEqual(hb[h.RUNTIME]["mape"], 0.304)  # a fraction, as eager's and widen_for_host's
        self.assertEqual(hb["pytorch-eager"]["mape"], 0.43)  # another runtime's entry kept
        ra = doc["runtime_accuracy"][h.RUNTIME]  # every row's held-out error (30%), on the rows' families
        self.assertEqual((ra["mape"], ra["rows"], ra["families"]), (0.3, 3, ["hopper"]))
        prov = json.loads(doc["provenance"])
        self.assertEqual(prov["stage_h"]["rows"], 3)
        self.assertAlmostEqual(prov["stage_h"]["held_out_mape"], 30.0)
        self.assertIn("stage_g", prov)

    def test_no_host_bound_rows_leaves_no_stale_entry(self):
        hb = self.written(None)["host_bound_accuracy"]
        self.assertNotIn(h.RUNTIME, hb)
        self.assertIn("pytorch-eager", hb)


if __name__ == "__main__":
    unittest.main()
