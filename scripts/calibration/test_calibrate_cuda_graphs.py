"""Stage H: the CUDA-graphs runtime's two constants, fitted and held out by family."""
import unittest

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


if __name__ == "__main__":
    unittest.main()
