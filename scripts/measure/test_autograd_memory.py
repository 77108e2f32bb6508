"""The memory measurement's instruments on cases counted by hand, and the core against PyTorch on a
small exported module (saved bytes and both forward peaks exactly)."""
import os
import tempfile
import unittest

from scripts.measure import autograd_memory as am


class Instruments(unittest.TestCase):
    def test_peak_follows_frees(self):
        import torch

        def chain():
            x = torch.empty(1 << 20)
            y = x + 1
            del x
            z = y * 2
            del y
            return z
        # x and y, or y and z, are alive together: two 4 MiB buffers (and malloc's bookkeeping, page rounding).
        peak = am.peak_above(chain)
        self.assertTrue(8 << 20 <= peak <= (8 << 20) * 1.01, peak)

    def test_saved_counts_unique_storages_and_leaves_weights_out(self):
        import torch
        m = torch.nn.Sequential(torch.nn.Linear(8, 16, bias=False), torch.nn.ReLU())
        acts, weights, n = am.saved_for_backward(m, (torch.randn(4, 8),))
        self.assertEqual(acts, 4 * 8 * 4 + 4 * 16 * 4)  # the input (for the weight's gradient), ReLU's output
        self.assertEqual(weights, 0)  # the weight would be kept for the input's gradient, which is not needed

    def test_plan_spans_every_family_first(self):
        p = am.plan(quick=True)
        fams = [(e["set"], e["family"]) for e, _, _ in p]
        self.assertEqual(len(set(fams)) * len(am.BATCHES), len(p), "quick: one model per family, each batch")
        self.assertTrue(all(e["set"] != "transformers" or s == 128 for e, _, s in p))


class CoreAgainstPyTorch(unittest.TestCase):
    def test_linear_gelu_layernorm(self):
        """An exported Linear -> GELU -> LayerNorm (opset 13: both decomposed): the core takes the
        decompositions back and equals PyTorch's saved bytes exactly, its no_grad and autograd-on peaks to
        0.5% (eager's LayerNorm also makes its per-row statistics under no_grad). Tensors of a megabyte, so
        that the profiler's microsecond clock orders every allocation and free."""
        import torch
        from scripts.roofline.perfcard_eval import run_queries

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(256, 1024)
                self.act = torch.nn.GELU()
                self.norm = torch.nn.LayerNorm(1024)

            def forward(self, x):
                return self.norm(self.act(self.fc(x)))
        torch.manual_seed(0)
        m = Block().eval()
        x = torch.randn(256, 256)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "block.onnx")
            with torch.no_grad():
                torch.onnx.export(m, (x,), path, opset_version=13, input_names=["x"], output_names=["y"])
            got = {mode: r["memory_bytes"] for mode, r in zip(
                ("training", "inference", "inference-grad"),
                run_queries([{"model": path, "device": "a100-sxm4-80gb", "precision": "fp32", "memory": {"mode": mode}}
                             for mode in ("training", "inference", "inference-grad")]))}
        acts, _, _ = am.saved_for_backward(m, (x,))

        def nograd():
            with torch.no_grad():
                return m(x)
        self.assertEqual(got["training"]["saved_activations"], acts)
        for mode, fn in (("inference", nograd), ("inference-grad", lambda: m(x))):
            measured = am.peak_above(fn) + x.numel() * 4
            self.assertLess(abs(got[mode]["activations"] / measured - 1), 0.005, (mode, got[mode], measured))


if __name__ == "__main__":
    unittest.main()
