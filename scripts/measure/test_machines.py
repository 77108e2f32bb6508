"""machines.json keeps every machine a campaign ran on; rows map to catalog entries by their own id."""
import json
import os
import tempfile
import unittest

from scripts import paths
from scripts.measure import machines


class Record(unittest.TestCase):
    def test_a_second_machine_is_added_beside_the_first_and_fields_accumulate(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "machines.json")
            machines.record({"machine_id": "a", "node": "v20", "onnxruntime_node": "1.30.0"}, path)
            machines.record({"machine_id": "b", "node": "v22"}, path)
            got = machines.record({"machine_id": "a", "node": "v20", "onnxruntime_web": "1.30.0"}, path)
            self.assertEqual(got, {"machine_id": "a", "node": "v20", "onnxruntime_node": "1.30.0", "onnxruntime_web": "1.30.0"})
            with open(path) as f:
                self.assertEqual(sorted(json.load(f)["machines"]), ["a", "b"])
            self.assertEqual(machines.load(path)["b"]["node"], "v22")

    def test_getconf_caches_keep_the_levels_reported(self):
        text = ("LEVEL1_DCACHE_SIZE                 49152\nLEVEL1_DCACHE_ASSOC                12\n"
                "LEVEL2_CACHE_SIZE                  1048576\nLEVEL3_CACHE_SIZE                  0\nLEVEL4_CACHE_SIZE                  \n")
        self.assertEqual(machines.parse_getconf(text), {"l1d": 49152, "l2": 1048576})

    def test_catalog_ids_by_machine(self):
        self.assertEqual(machines.catalog_id("AuthenticAMD-25-17-2cpu-23g"), "cpu-build-vm-amd-epyc-zen4")
        self.assertIsNone(machines.catalog_id("GenuineIntel-6-167-2cpu-23g"))
        # The committed file agrees with the map.
        for mid, desc in machines.load().items():
            self.assertEqual(desc["machine_id"], mid)
            self.assertEqual(desc.get("catalog_id"), machines.catalog_id(mid))


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(os.path.exists(paths.CLI), "needs the native build")
class ProbeNative(unittest.TestCase):
    def test_the_clis_median_of_five_probes_with_the_probes(self):
        got = machines.probe_native()
        self.assertEqual(len(got["runs"]), 5)
        for k in ("gemm_gflops", "stream_gbs"):
            self.assertGreater(got[k], 0)
            self.assertAlmostEqual(got[k], sorted(r[k] for r in got["runs"])[2], places=2)
