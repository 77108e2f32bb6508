"""onnxruntime's profile read as kernels per run: warm-up runs left out, shape arithmetic told apart."""
import unittest

from scripts.measure import kernel_profile as kp


def run(start, dur):
    return {"cat": "Session", "name": "model_run", "ts": start, "dur": dur}


def kernel(ts, dur, op, out="float"):
    return {"cat": "Node", "name": f"n{ts}_kernel_time", "ts": ts, "dur": dur,
            "args": {"op_name": op, "output_type_shape": [{out: [1, 2]}]}}


def fence(ts):  # onnxruntime's other events of a node (its fence, before and after) are not kernels
    return {"cat": "Node", "name": f"n{ts}_fence_before", "ts": ts, "dur": 0, "args": {"op_name": "Conv"}}


class ParseProfile(unittest.TestCase):
    def test_kernels_per_run_after_the_warm_up(self):
        events = [run(0, 100), kernel(10, 90, "Conv"),                                    # warm-up
                  run(200, 60), kernel(205, 30, "Conv"), kernel(240, 5, "Gather", "int64"), fence(241),
                  kernel(250, 4, "ReorderOutput"),
                  run(300, 80), kernel(305, 50, "Conv"), kernel(360, 7, "Gather", "int64"), kernel(370, 3, "ReorderOutput"),
                  run(400, 70), kernel(405, 40, "Conv"), kernel(450, 6, "Gather", "int64"), kernel(460, 5, "ReorderOutput")]
        kinds, run_ms, kernels_ms, runs = kp.parse_profile(events, warmup=1)
        self.assertEqual(runs, 3)
        by = {(k["op"], k["shape_only"]): k for k in kinds}
        self.assertEqual(by[("Conv", 0)]["median_us"], 40)  # 30, 50, 40: the warm-up's 90 left out
        self.assertEqual(by[("Gather", 1)]["calls"], 1)
        self.assertEqual(by[("Gather", 1)]["median_us"], 6)
        self.assertAlmostEqual(run_ms, 0.070)
        self.assertAlmostEqual(kernels_ms, 0.051)  # per-run sums 39, 60, 51

    def test_runs_that_ran_different_kernels_are_refused(self):
        events = [run(0, 50), kernel(5, 10, "Conv"), run(100, 50), kernel(105, 10, "Conv"), kernel(120, 10, "Conv")]
        with self.assertRaisesRegex(ValueError, "runs differ in how many Conv kernels"):
            kp.parse_profile(events, warmup=0)
        with self.assertRaisesRegex(ValueError, "none after the 3 warm-up runs"):
            kp.parse_profile(events, warmup=3)

    def test_onnxruntime_ops_fall_in_the_class_of_the_op_they_replace(self):
        classes = {"Conv": "conv", "Gather": "data_movement"}
        self.assertEqual(kp.ort_class("FusedConv", 0, classes), "conv")
        self.assertEqual(kp.ort_class("Gather", 1, classes), kp.SHAPE_CLASS)
        self.assertEqual(kp.ort_class("Gather", 0, classes), "data_movement")
        self.assertEqual(kp.ort_class("ReorderInput", 0, classes), kp.LAYOUT_CLASS)
        self.assertEqual(kp.ort_class("QuickGelu", 0, {"Sigmoid": "elementwise"}), "elementwise")  # SiLU, fused
        self.assertEqual(kp.ort_class("LayerNormalization", 0, classes), "LayerNormalization (onnxruntime's fusion)")




class Configurations(unittest.TestCase):
    def test_each_kind_is_profiled_at_the_campaigns_first_shape(self):
        self.assertEqual(kp.shape_of({"kind": "image"}, 16), (16, 0, 0))
        self.assertEqual(kp.shape_of({"kind": "sequence"}, 4), (4, 128, 0))   # 128 tokens of prompt
        self.assertEqual(kp.shape_of({"kind": "decode"}, 1), (1, 1, 128))     # one token over a 128-token cache

    def test_rows_from_before_the_sequence_columns_are_image_configurations(self):
        self.assertEqual(kp.config_of({"model": "resnet18", "batch": "1", "threads": "2"}), ("resnet18", 1, 0, 0, 2))
        self.assertEqual(kp.config_of({"model": "m", "batch": "1", "sequence": "1", "past_sequence": "128",
                                       "threads": "1"}), ("m", 1, 1, 128, 1))


if __name__ == "__main__":
    unittest.main()
