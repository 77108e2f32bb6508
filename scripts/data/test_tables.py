"""Checks on the training tables (scripts/data/build_tables.py) with the real public files and the zoo.

    cd <repo root> && /usr/bin/python3 -m unittest scripts.data.test_tables -v

Skips (with the reason) when ../shared/data/public or the perfcard binary is absent. Analyze results are
cached under build/tables/analyze_cache (shared with the build command), so a second run is quick.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import numpy as np

from scripts import paths
from scripts.data import build_tables, op_table, sources
from scripts.data.graph_features import op_classes, op_vocab, schema_hash
from scripts.data.core_cost import Node, Tensor, cost_nodes, graph_of
from scripts.zoo import manifest as zm

_STATE: dict = {}


def _require():
    if not sources.data_available():
        raise unittest.SkipTest("public data absent: " + sources.missing_message().replace("\n", " "))
    try:
        zm.perfcard_binary()
    except FileNotFoundError as e:
        raise unittest.SkipTest(str(e))


# A clean clone has no graph files (scripts/zoo/out/ is generated, not committed), so the tests export
# what they join on: from the committed manifest's own configs, the smallest timm-named graph of a few
# families (a few seconds each; kept for later runs like any generated zoo file).
SAMPLE_FAMILIES = ("resnet", "mobilenet_v2", "densenet", "efficientnet", "regnet_x", "mnasnet")


def ensure_zoo_sample() -> dict:
    """{graph id: (manifest structure_hash, the re-export's)} for the graphs this call had to export."""
    entries = [e for e in zm.read_all() if e["generator"] == "torchvision" and e.get("names", {}).get("timm")]
    exported = {}
    for fam in SAMPLE_FAMILIES:
        cands = sorted((e for e in entries if e["family"] == fam), key=lambda e: e["macs"])
        if not cands:
            continue
        e = cands[0]
        path = Path(zm.OUT_DIR) / e["file"]
        if path.exists():
            continue
        from scripts.zoo import export_variants  # (torch: only when a file is missing)
        import torch

        path.parent.mkdir(parents=True, exist_ok=True)
        torch.set_num_threads(1)
        with torch.no_grad():
            proto = export_variants.export(e["config"], e["family"], str(path))
        exported[e["id"]] = (e["structure_hash"], zm.structure_hash(proto))
    return exported


def tables():
    """timm, DLE and our CPU rows (HELP is left to the full build: 421k rows)."""
    if "t" not in _STATE:
        _STATE["exported"] = ensure_zoo_sample()
        t = build_tables.Tables(tempfile.mkdtemp(), os.path.join(paths.BUILD, "tables", "analyze_cache"))
        t.timm()
        t.dle()
        t.cpu_ours()
        t.gpu_ours()
        _STATE["t"] = t
        _STATE["whole"] = t.whole_model()
    return _STATE["t"], _STATE["whole"]


def ops():
    if "ops" not in _STATE:
        rep: dict = {}
        _STATE["ops"] = op_table.build(rep)
        _STATE["ops_report"] = rep
    return _STATE["ops"], _STATE["ops_report"]


def analyze_one_node(node: Node) -> dict:
    """The core's --per-node figures for a graph of just this node, its initializers inline zeros (the
    tables cost many nodes per graph with unbacked external initializers: both must agree)."""
    with tempfile.NamedTemporaryFile(suffix=".onnx", delete=False) as f:
        f.write(graph_of([node], external=False).SerializeToString())
        path = f.name
    try:
        r = subprocess.run([zm.perfcard_binary(), "analyze", path, "--json", "--per-node"], capture_output=True,
                           text=True, check=True)
    finally:
        os.unlink(path)
    (only,) = json.loads(r.stdout)["nodes"]
    return only


def node_of_row(row) -> Node:
    shapes = json.loads(row.input_shapes)
    init = json.loads(row.input_initializer)
    dtypes = ["int64" if (row.op_type == "Gather" and i == 1) else row.dtype for i in range(len(shapes))]
    return Node(row.op_type, [Tensor(s, d, b) for s, d, b in zip(shapes, dtypes, init)],
                [Tensor(json.loads(row.output_shape), row.dtype)], domain=row.op_domain or "")


class SplitTest(unittest.TestCase):
    def setUp(self):
        _require()

    def test_hash_split_is_deterministic_and_uses_all_three(self):
        got = {op_table.hash_split(f"family{i}") for i in range(200)}
        self.assertEqual(got, {"train", "val", "test"})
        self.assertEqual(op_table.hash_split("resnet"), op_table.hash_split("resnet"))

    def test_every_family_and_every_graph_is_in_one_split(self):
        _, whole = tables()
        self.assertGreater(len(whole), 0)
        non_nas = whole[whole.family != "nasbench201"]  # (its cells: each its own group, both forms)
        per_family = non_nas.groupby("family").split.nunique()
        self.assertTrue((per_family == 1).all(), per_family[per_family > 1])
        per_graph = whole.groupby(["generator", "graph_id"]).split.nunique()
        self.assertTrue((per_graph == 1).all())
        self.assertGreater(whole.family.nunique(), 3)

    def test_nasbench_cells_are_their_own_group(self):
        e = {"generator": "nasbench201", "family": "nasbench201", "structure_hash": "ab" * 32}
        self.assertEqual(build_tables.split_group(e), "nasbench201:" + "ab" * 32)
        self.assertEqual(build_tables.split_group({"generator": "torchvision", "family": "resnet"}), "resnet")


class MatchTest(unittest.TestCase):
    def setUp(self):
        _require()

    def test_zoo_sample_reproduces_the_manifest(self):
        tables()
        for gid, (committed, again) in _STATE["exported"].items():
            self.assertEqual(committed, again, f"{gid}: the generator no longer builds the committed graph")

    def test_timm_and_cpu_rows_match(self):
        t, whole = tables()
        timm = t.report["timm_benchmarks_long"]
        self.assertGreater(sum(timm["matched"].values()), 0)
        # every unmatched timm row carries a reason
        self.assertTrue(all(k[1] for k in timm["unmatched"]))
        w = whole[whole.source == "timm_benchmarks_long"]
        self.assertTrue(w.latency_ms.gt(0).all())
        self.assertTrue(w.m_macs.gt(0).all())
        # catalog devices get catalog features, the others none (never invented)
        self.assertTrue(w[w.in_catalog].dev_peak_fp32_tflops.notna().all())
        self.assertTrue(whole[~whole.in_catalog.astype(bool)].dev_bandwidth_gbs.isna().all())

    def test_our_rows_name_their_runtime_and_memory(self):
        t, whole = tables()
        ours = whole[whole.source.isin(["perfcard_cpu_ort_node", "perfcard_web_ort_wasm"])]
        for src in ("perfcard_cpu_ort_node", "perfcard_web_ort_wasm"):
            # every row of ours is either in the table or counted with a reason
            rep = t.report.get(src, {"matched": {}, "unmatched": {}})
            self.assertEqual(sum(rep["matched"].values()), int((ours.source == src).sum()))
        self.assertTrue(ours.latency_ms.gt(0).all())
        node = ours[ours.source == "perfcard_cpu_ort_node"]
        self.assertTrue((node.runtime == "onnxruntime-node").all())
        self.assertTrue(node.memory_mib.gt(0).all())
        web = ours[ours.source == "perfcard_web_ort_wasm"]
        self.assertTrue(web.runtime.isin(["onnxruntime-web-wasm (node)", "onnxruntime-web-wasm (chromium)"]).all())
        self.assertTrue((web.threads == 1).all())
        # Chromium's renderer memory is not visible to the driver: no figure rather than a wrong one
        self.assertTrue(web[web.runtime.str.contains("chromium")].memory_mib.isna().all())

    def test_our_gpu_rows_keep_protocol_memory_and_energy(self):
        t, whole = tables()
        src = "perfcard_gpu_torch"
        rep = t.report.get(src, {"matched": {}, "unmatched": {}})
        gpu = whole[whole.source == src]
        self.assertEqual(sum(rep["matched"].values()), len(gpu))
        if not len(gpu):
            self.skipTest("no GPU campaign rows with their zoo graph on this machine")
        self.assertTrue((gpu.runtime == "pytorch-eager").all())
        self.assertTrue(set(gpu["mode"]) <= {"inference", "inference-grad", "training"})
        # autocast training is named as the core models it; no_grad inference runs at the precision itself
        self.assertFalse(((gpu["mode"] == "training") & (gpu.precision == "fp16")).any())
        self.assertTrue(gpu.memory_mib.gt(0).all() and gpu.energy_j.gt(0).all())
        self.assertTrue(all(reason for _, reason in rep["unmatched"]))

    def test_help_arch_strings_find_zoo_cells(self):
        t, _ = tables()
        if not t.zoo.nb201:
            self.skipTest("no nasbench201 manifest yet")
        import pandas as pd
        h = pd.read_csv(sources.data_dir() / "help_latency_long.csv.gz", usecols=["search_space", "arch_str"])
        archs = h[h.search_space == "nasbench201"].arch_str.drop_duplicates()
        self.assertEqual(len(archs), 15625)
        found = archs.isin(set(t.zoo.nb201)).mean()
        # the generator may still be writing; once done every HELP cell has its graph
        self.assertGreater(found, 0.5 if len(t.zoo.nb201) < 15625 else 0.999)

    def test_neusight_rows_match(self):
        df, rep = ops()
        self.assertGreater(sum(rep["neusight_gemm_ops_fp32"]["matched"].values()), 100_000)
        n = df[df.source == "neusight_gemm_ops_fp32"]
        # NeuSight's own FLOP count (2*B*M*N*K) equals the core's for a MatMul
        src = sources.load("neusight_gemm_ops_fp32")
        self.assertEqual(len(n), len(src))
        np.testing.assert_allclose(n.flops.to_numpy(), 2.0 * src.batch * src.neusight_M * src.neusight_N *
                                   src.neusight_K, rtol=1e-12)

    def test_vidur_unmatched_ops_have_reasons(self):
        _, rep = ops()
        v = rep["vidur_mlp_op_times"]
        self.assertGreater(sum(v["matched"].values()), 0)
        self.assertTrue(all("attn_rope" in k[1] or "mlp_act" in k[1] for k in v["unmatched"]))


class CoreAgreementTest(unittest.TestCase):
    """The per-op table's FLOPs/bytes/params are the core's, costed many nodes to a graph with unbacked
    external weights: a sample of rows equals one-node graphs with real (zero) weights."""

    def setUp(self):
        _require()

    def check(self, node: Node, want: dict):
        got = analyze_one_node(node)
        for k in ("macs", "flops", "bytes_read", "bytes_written", "params"):
            self.assertAlmostEqual(float(got.get(k) or 0), float(want[k]), delta=1e-9 * max(1.0, float(want[k])),
                                   msg=f"{node.op_type} {k}")
        self.assertEqual(got["class"], want["op_class"])

    def test_table_rows_equal_the_core(self):
        df, _ = ops()
        weight_bytes = df.bytes_read - df.bytes_written  # small rows keep the temp graphs small
        picked = 0
        for (src, op), g in df.groupby(["source", "op_type"]):
            g = g.assign(wbytes=weight_bytes[g.index]).sort_values("wbytes")
            for row in list(g.head(2).itertuples(index=False)) + list(g.iloc[len(g) // 50:len(g) // 50 + 1]
                                                                      .itertuples(index=False)):
                if row.wbytes > 64 << 20:
                    continue
                with self.subTest(source=src, op=op, shapes=row.input_shapes):
                    self.check(node_of_row(row), row._asdict())
                    picked += 1
        self.assertGreaterEqual(picked, 12)

    def test_gemm_with_transposes_and_bias(self):
        f = "float32"
        node = Node("Gemm", [Tensor([64, 32], f), Tensor([48, 64], f, True), Tensor([48], f, True)],
                    [Tensor([32, 48], f)], attrs={"transA": 1, "transB": 1})
        (c,) = cost_nodes([node], zm.perfcard_binary())
        self.assertEqual(c["flops"], 2 * 32 * 48 * 64 + 32 * 48)
        self.assertEqual(c["params"], 48 * 64 + 48)
        self.check(node, c)

    def test_equal_descriptions_are_costed_once_and_each_row_gets_its_own(self):
        f = "float16"
        small = Node("MatMul", [Tensor([8, 16], f), Tensor([16, 4], f, True)], [Tensor([8, 4], f)])
        big = Node("MatMul", [Tensor([8, 16], f), Tensor([16, 32], f, True)], [Tensor([8, 32], f)])
        got = cost_nodes([small, big, small], zm.perfcard_binary(), chunk=1)
        self.assertEqual([c["macs"] for c in got], [8 * 4 * 16, 8 * 32 * 16, 8 * 4 * 16])

    def test_a_description_the_core_disagrees_with_is_an_error(self):
        f = "float32"
        wrong = Node("MatMul", [Tensor([8, 16], f), Tensor([16, 4], f, True)], [Tensor([8, 5], f)])
        with self.assertRaisesRegex(ValueError, r"infers output \[8, 4\].*says \[8, 5\]"):
            cost_nodes([wrong], zm.perfcard_binary())
        unknown = Node("NoSuchOp", [Tensor([8], f)], [Tensor([8], f)])
        with self.assertRaisesRegex(ValueError, "cannot cost NoSuchOp"):
            cost_nodes([unknown], zm.perfcard_binary())


class GraphDatasetTest(unittest.TestCase):
    def setUp(self):
        _require()

    def test_schema_hash_changes_when_a_feature_is_added(self):
        vocab = {"op_type": op_vocab(), "op_class": ["conv"], "device": [], "precision": [], "runtime": [],
                 "source": []}
        parts = build_tables.schema_parts(vocab)
        h = schema_hash(parts)
        self.assertEqual(h, schema_hash(build_tables.schema_parts(vocab)))
        for key in ("node_features", "static_features", "device_features", "labels"):
            grown = dict(parts, **{key: list(parts[key]) + ["new_feature"]})
            self.assertNotEqual(schema_hash(grown), h, key)
        more_ops = dict(parts, op_type=dict(parts["op_type"], NewOp=len(parts["op_type"])))
        self.assertNotEqual(schema_hash(more_ops), h)

    def test_op_vocab_is_the_registry(self):
        v = op_vocab()
        self.assertEqual(v["<unknown>"], 0)
        self.assertIn("Conv", v)
        self.assertIn("com.microsoft::SkipLayerNormalization", v)
        self.assertEqual(len(set(v.values())), len(v))

    def test_op_classes_are_the_cores(self):
        classes = op_classes()
        self.assertEqual((classes[0], classes[-1]), ("conv", "other"))
        self.assertEqual(len(set(classes)), len(classes))
        df, _ = ops()
        self.assertTrue(set(df.op_class) <= set(classes))

    def test_npz_is_consistent(self):
        t, whole = tables()
        vocab = build_tables.vocabularies(whole)
        out = tempfile.mkdtemp()
        counts = build_tables.write_graphs(t, whole, vocab, out)
        self.assertEqual(sum(c["labels"] for c in counts.values()), len(whole))
        for split in ("train", "val", "test"):
            z = np.load(os.path.join(out, f"graphs_{split}.npz"))
            self.assertEqual(str(z["schema_hash"]), schema_hash(build_tables.schema_parts(vocab)))
            ptr, eptr, e = z["node_ptr"], z["edge_ptr"], z["edge_index"]
            self.assertEqual(ptr[-1], len(z["node_op"]))
            self.assertEqual(len(z["static"]), len(ptr) - 1)
            for g in range(len(ptr) - 1):  # edges stay inside their graph (indices are graph-local)
                ee = e[:, eptr[g]:eptr[g + 1]]
                if ee.size:
                    self.assertLess(ee.max(), ptr[g + 1] - ptr[g])
                    self.assertTrue((ee[0] < ee[1]).all() or (ee[0] != ee[1]).all())
            if len(z["label_graph"]):
                self.assertLess(z["label_graph"].max(), len(ptr) - 1)
                num = z["label_numeric"]
                lat = num[:, build_tables.LABEL_NUMERIC.index("latency_ms")]
                thr = num[:, build_tables.LABEL_NUMERIC.index("throughput_per_s")]
                self.assertTrue(((lat > 0) | (thr > 0)).all())  # DLE has throughput-only rows


if __name__ == "__main__":
    unittest.main()
