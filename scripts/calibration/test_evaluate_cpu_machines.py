"""A measured machine's device entry is made of what it recorded of itself, and refuses what it cannot source."""
import unittest

import pandas as pd

from scripts.calibration import evaluate_cpu_machines as ecm

ZEN3 = {"machine_id": "AuthenticAMD-25-1-2cpu-23g", "vendor": "AuthenticAMD", "family": "25", "model": "1",
        "cpus": "2", "cpu_model": "AMD EPYC", "bogomips": "4890.85", "l3": "32 MiB (1 instance)",
        "l2": "1 MiB (2 instances)", "native_probe": {"stream_gbs": 13.3, "gemm_gflops": 20.3}}
FIT = {"id": "cpu-build-vm-amd-epyc-zen4", "clock_ratio": {"value": 1.59}, "memory_bandwidth_gbs": {"value": 65.6}}


class DeviceEntry(unittest.TestCase):
    def test_own_entry_from_lscpu_and_the_probe(self):
        e = ecm.device_entry(ZEN3)
        self.assertEqual(e["kind"], "cpu")
        self.assertEqual(e["cores"]["value"], 2)
        self.assertAlmostEqual(e["clock_base_ghz"]["value"], 2.445425)
        self.assertAlmostEqual(e["peak_fp32_gflops"]["value"], 2 * 32 * 2.445425)
        self.assertAlmostEqual(e["memory_bandwidth_gbs"]["value"], 26.6)
        self.assertEqual(e["l3_mb"]["value"], 32)
        self.assertEqual(e["l2_mb"]["value"], 0.5)
        self.assertNotIn("clock_ratio", e)

    def test_fit_entry_carries_the_build_vms_clock_ratio_and_bandwidth(self):
        e = ecm.device_entry(ZEN3, FIT)
        self.assertEqual(e["clock_ratio"]["value"], 1.59)
        self.assertEqual(e["memory_bandwidth_gbs"]["value"], 65.6)
        self.assertNotEqual(e["id"], ecm.device_entry(ZEN3)["id"])
        self.assertEqual(e["peak_fp32_gflops"], ecm.device_entry(ZEN3)["peak_fp32_gflops"])

    def test_unknown_core_or_missing_probe_is_refused_by_name(self):
        with self.assertRaisesRegex(SystemExit, "GenuineIntel family 6"):
            ecm.device_entry(dict(ZEN3, vendor="GenuineIntel", family="6"))
        with self.assertRaisesRegex(SystemExit, "native probe"):
            ecm.device_entry({k: v for k, v in ZEN3.items() if k != "native_probe"})

    def test_zen5_server_cores_have_512_bit_pipes_and_other_models_no_rule(self):
        zen5 = dict(ZEN3, family="26", model="2", bogomips="4192.04")
        self.assertAlmostEqual(ecm.device_entry(zen5)["peak_fp32_gflops"]["value"], 2 * 64 * 2.09602)
        with self.assertRaisesRegex(SystemExit, "family 26 model 36"):
            ecm.device_entry(dict(zen5, model="36"))

    def test_caches_a_guest_hides_from_lscpu(self):
        # a Zen 5 guest: lscpu reports no cache; CPUID's L2 is per core, its L3 the host socket's (508 MiB)
        zen5 = dict(ZEN3, family="26", model="2", l2=None, l3=None,
                    getconf_caches={"l1d": 49152, "l2": 1048576, "l3": 532676608})
        e = ecm.device_entry(zen5)
        self.assertEqual(e["l2_mb"]["value"], 1)
        self.assertIn("getconf", e["l2_mb"]["source"])
        self.assertEqual(e["l3_mb"]["value"], 32)
        self.assertIn("per CCD", e["l3_mb"]["source"])
        # Zen 3's line has no L3 of its own: lscpu's is the only source there
        self.assertNotIn("l3_mb", ecm.device_entry(dict(ZEN3, l3=None)))

    def test_the_band_that_would_have_held_80_percent(self):
        # twice as fast, twice as slow and eight right (a NaN left out): 70% lie within a factor 1, all within 2
        err = pd.Series([-0.5, 1.0] + [0.0] * 8 + [float("nan")])
        self.assertAlmostEqual(ecm.needs(err, 0.7), 1.0, places=6)
        self.assertAlmostEqual(ecm.needs(err, 1.0), 2.0, places=6)
        self.assertGreater(ecm.needs(err), 1.0)
        self.assertIsNone(ecm.needs(pd.Series([float("nan")])))

    def test_models_parse_as_lscpu_prints_them(self):
        self.assertIsNotNone(ecm.core_of(dict(ZEN3, family="26", model="0")))
        self.assertIsNone(ecm.core_of(dict(ZEN3, family="26", model="0x2")))
        self.assertIsNone(ecm.core_of(dict(ZEN3, model=None)))

    def test_a_learned_predictor_must_be_nearer_on_every_probed_machine(self):
        n = 12
        rows = pd.DataFrame({"machine_id": ["a"] * n + ["b"] * n, "latency_ms": [10.0] * (2 * n),
                             "roofline_probe": [13.0] * (2 * n)})  # 30% off on both machines
        for p in ecm.LEARNED:
            rows[f"{p}_probe_took"] = p
        rows["trees_probe"] = [10.5] * n + [12.0] * n       # 5% and 20%: nearer on both
        rows["gnn_probe"] = [10.0] * n + [13.5] * n         # 0% and 35%: nearer pooled, not on b
        rows["transformer_probe"] = [12.0] * (2 * n)        # 20% on both
        rows["ensemble_probe"] = rows.roofline_probe
        rows["ensemble_probe_took"] = "roofline"            # declined the family
        acc = ecm.probe_accuracy(rows)
        self.assertNotIn("ensemble", acc)
        self.assertTrue(acc["trees"]["beats"])
        self.assertAlmostEqual(acc["trees"]["mape"], 0.125)
        self.assertAlmostEqual(acc["trees"]["machines"]["b"]["mape"], 0.2)
        self.assertLess(acc["gnn"]["mape"], acc["gnn"]["roofline_mape"])
        self.assertFalse(acc["gnn"]["beats"])
        self.assertTrue(acc["transformer"]["beats"])
        few = ecm.probe_accuracy(rows.iloc[[0, 1, n, n + 1]])
        self.assertFalse(few["trees"]["beats"])  # 4 rows: fewer than a family needs

    def test_the_probed_figure_joins_a_files_other_unseen_families(self):
        meta = {"accuracy.unseen.families": ["cpu", "turing"], "accuracy.unseen.mape": [0.3, 0.2],
                "accuracy.unseen.roofline_mape": [0.35, 0.4], "accuracy.unseen.rows": [100, 50],
                "accuracy.unseen.beats_roofline": [1, 1]}
        a = {"mape": 0.18, "roofline_mape": 0.32, "rows": 551, "beats": True}

        def plain(values):
            return {k: (v.values if hasattr(v, "values") else v) for k, v in values.items()}
        values, remove = ecm.with_probe_figure(meta, a, ["m1", "m2"])
        new = plain(values)
        self.assertEqual(remove, ())
        self.assertEqual(new["accuracy.unseen.families"], ["cpu", "cpu-probed", "turing"])
        self.assertEqual(new["accuracy.unseen.mape"], [0.3, 0.18, 0.2])
        self.assertEqual(new["accuracy.unseen.beats_roofline"], [1, 1, 1])
        self.assertIn("2 machines: m1, m2", new[ecm.PROBE_SPLIT_KEY])
        self.assertEqual(ecm.recorded(new), {"mape": 0.18, "roofline_mape": 0.32, "rows": 551, "beats_roofline": 1})
        again = plain(ecm.with_probe_figure(new, dict(a, mape=0.4, beats=False), ["m1"])[0])
        self.assertEqual(again["accuracy.unseen.families"], ["cpu", "cpu-probed", "turing"])  # replaced, not added
        self.assertEqual(ecm.recorded(again)["beats_roofline"], 0)
        self.assertIsNone(ecm.recorded({}))  # a file without figures on unseen devices (the networks before)
        # A predictor with no figure now loses its stale one; a file left with no family loses the arrays.
        values, remove = ecm.with_probe_figure(new, None, [])
        self.assertEqual(plain(values)["accuracy.unseen.families"], ["cpu", "turing"])
        self.assertEqual(remove, (ecm.PROBE_SPLIT_KEY,))
        only = plain(ecm.with_probe_figure({}, a, ["m1"])[0])
        values, remove = ecm.with_probe_figure(only, None, [])
        self.assertEqual(values, {})
        self.assertIn("accuracy.unseen.families", remove)
        self.assertIn(ecm.PROBE_SPLIT_KEY, remove)
        with self.assertRaisesRegex(SystemExit, "accuracy.unseen.extra"):
            ecm.with_probe_figure(dict(meta, **{"accuracy.unseen.extra": [1, 2]}), a, ["m1"])

    def test_lscpu_cache_sizes_per_instance(self):
        self.assertEqual(ecm.mib("32 MiB (1 instance)"), 32)
        self.assertEqual(ecm.mib("1 MiB (2 instances)"), 0.5)
        self.assertEqual(ecm.mib("512 KiB (1 instance)"), 0.5)
        self.assertIsNone(ecm.mib(None))


if __name__ == "__main__":
    unittest.main()


class MachineRatios(unittest.TestCase):
    def test_ratios_on_shared_configurations_with_the_probes(self):
        def row(m, model, batch, ms):
            return {"machine_id": m, "model": model, "batch": batch, "sequence": 0, "past_sequence": 0, "threads": 1,
                    "median_ms": ms}
        rows = pd.DataFrame(
            [row("slow", f"m{i}", 1, 30.0) for i in range(6)] + [row("slow", "extra", 1, 5.0)]
            + [row("fast", f"m{i}", 1, 10.0) for i in range(6)]
            + [row("slow", f"transformers/t{i}", 1, 8.0) for i in range(3)]
            + [row("fast", f"transformers/t{i}", 1, 4.0) for i in range(3)])
        described = {"slow": {"native_probe": {"gemm_gflops": 10.0, "stream_gbs": 10.0}},
                     "fast": {"native_probe": {"gemm_gflops": 25.0, "stream_gbs": 20.0}}}
        out = ecm.machine_ratios(rows, described)
        # Pairs in name order: "fast" / "slow"; "extra" ran on one machine only; three transformers are too few.
        self.assertEqual(out[2:], ["| fast / slow | image models | 6 | 0.33 | 0.33-0.33 | 0.40 | 0.50 |"])
        self.assertIn("- | - |", ecm.machine_ratios(rows, {"slow": described["slow"]})[2])
