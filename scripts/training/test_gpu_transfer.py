"""gpu_transfer scores the trees' correction against the roofline on the rows it is given."""
import unittest

import numpy as np
import pandas as pd

from scripts.training import gpu_transfer


def frame(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, size=(n, 4)).astype(np.float32)
    roofline = rng.uniform(1, 10, size=n)
    # measured = roofline x 2 where the first feature is high: a correction the trees can learn
    latency = roofline * np.where(x[:, 0] > 0.5, 2.0, 1.0)
    return pd.DataFrame({"roofline_ms": roofline, "latency_ms": latency, "source": "gpu_ours", "_x": list(x)})


class Scored(unittest.TestCase):
    def test_a_learnable_correction_beats_the_roofline_on_new_rows(self):
        rows, roof, corrected = gpu_transfer.scored(frame(400, 0), frame(100, 1))
        self.assertEqual(rows, 100)
        self.assertAlmostEqual(roof, gpu_transfer.mape(frame(100, 1).roofline_ms, frame(100, 1).latency_ms))
        self.assertGreater(roof, 20.0)
        self.assertLess(corrected, 5.0)


if __name__ == "__main__":
    unittest.main()
