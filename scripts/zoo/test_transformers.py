"""Checks of transformers.py:  /usr/bin/python3 -m scripts.zoo.test_transformers

The torch cross-check (params and MACs equal to exports of the same small modules) runs as one test;
the others check what a large graph-only build must guarantee and what a KV-cache decode step implies.
"""
import os
import subprocess
import sys
import tempfile
import time
import unittest

import onnx

from scripts import paths
from scripts.zoo import manifest
from scripts.zoo import transformers as zt

CFG = {row[0]: row[3] for row in zt.CATALOG}


class TransformersTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, cid, decode=False):
        gid = cid + (".decode" if decode else "")
        path = os.path.join(self.tmp.name, gid + ".onnx")
        onnx.save_model(zt.build(CFG[cid], gid, decode), path)
        return path

    def test_70b_is_graph_only_and_fast(self):
        t0 = time.time()
        path = self.write("llama-3.1-70b", decode=True)
        self.assertLess(time.time() - t0, 10.0)
        self.assertLess(os.path.getsize(path), 5 << 20)  # structure only: 141 GB of weights are declared
        self.assertEqual(os.listdir(self.tmp.name), [os.path.basename(path)])  # no data file written
        tot = manifest.analyze(path, zt.DECODE_BIND)
        self.assertEqual(tot["params"], 70_553_706_496)

    def test_decode_cost_grows_with_the_cache(self):
        """Per layer, QK^T and AV each cost heads x head_dim MACs per cached token (batch 1, one query)."""
        c = CFG["mistral-7b-v0.1"]
        path = self.write("mistral-7b-v0.1", decode=True)
        a = manifest.analyze(path, {"batch": 1, "sequence": 1, "past_sequence": 100})
        b = manifest.analyze(path, {"batch": 1, "sequence": 1, "past_sequence": 612})
        self.assertEqual(b["macs"] - a["macs"], c["layers"] * 2 * c["heads"] * (c["hidden"] // c["heads"]) * 512)

    def test_decode_io(self):
        m = onnx.load(self.write("qwen3-8b", decode=True), load_external_data=False)
        ins = manifest.input_dims(m)
        self.assertEqual(ins["past_key_0"], ["batch", 8, "past_sequence", 128])
        outs = [o.name for o in m.graph.output]
        self.assertIn("present_value_35", outs)
        self.assertEqual(len(outs), 1 + 2 * 36)

    def test_every_published_count(self):
        for cid, _, _, cfg, published, _ in zt.CATALOG:
            if published:
                self.assertLess(abs(zt.config_params(cfg) / published - 1), 0.005, cid)

    def test_torch_cross_check(self):
        r = subprocess.run([sys.executable, "-m", "scripts.zoo.check_transformers"], capture_output=True,
                           text=True, cwd=paths.ROOT)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-2000:])


if __name__ == "__main__":
    unittest.main()
