"""ensure_models: what it cannot write is handed back by name, and the CPU rows stop on it instead of
fitting on the rows that happen to have a graph."""
import os
import tempfile
import unittest
from unittest import mock

from scripts.roofline import cpu_rows
from scripts.zoo import ensure, graph_only, manifest


class SaveTest(unittest.TestCase):
    """graph_only.save: a graph is on disk whole or not at all (the exporters resume past any file there)."""

    def model(self):
        import onnx
        from onnx import TensorProto, helper
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
        return helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]))

    def test_the_file_is_written_and_no_temporary_is_left(self):
        import onnx
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.onnx")
            graph_only.save(self.model(), path)
            self.assertEqual(onnx.load(path).graph.node[0].op_type, "Relu")
            self.assertEqual(os.listdir(d), ["m.onnx"])

    def test_a_write_cut_short_leaves_no_file_under_the_graph_s_name(self):
        def cut_short(model, where):
            with open(where, "wb") as f:
                f.write(b"\x08\x07")  # the start of a ModelProto, then the process dies
            raise KeyboardInterrupt
        with tempfile.TemporaryDirectory() as d, mock.patch("onnx.save_model", side_effect=cut_short):
            path = os.path.join(d, "m.onnx")
            with self.assertRaises(KeyboardInterrupt):
                graph_only.save(self.model(), path)
            self.assertFalse(os.path.exists(path))


class EnsureModels(unittest.TestCase):
    def test_a_name_no_manifest_line_has_is_handed_back(self):
        self.assertEqual(ensure.ensure_models(["nosuchgenerator/nosuch-id"]), ["nosuchgenerator/nosuch-id"])

    def test_graphs_on_disk_are_left_alone(self):
        with tempfile.TemporaryDirectory() as d, mock.patch.object(manifest, "OUT_DIR", d):
            os.makedirs(os.path.join(d, "transformers"))
            open(os.path.join(d, "transformers", "gpt2.onnx"), "wb").close()
            with mock.patch.object(ensure, "ensure_graph") as build:
                self.assertEqual(ensure.ensure_models(["transformers/gpt2"]), [])
                build.assert_not_called()

    def test_a_manifest_line_goes_to_its_generator_and_what_it_did_not_write_is_handed_back(self):
        entry = {"file": "transformers/gpt2.onnx", "id": "gpt2", "generator": "transformers", "config": {}}
        with tempfile.TemporaryDirectory() as d, mock.patch.object(manifest, "OUT_DIR", d), \
                mock.patch.object(manifest, "read_all", return_value=[entry]), \
                mock.patch.object(ensure, "ensure_graph") as build:
            build.side_effect = lambda e: open(os.path.join(d, "gpt2-written"), "wb").close()
            self.assertEqual(ensure.ensure_models(["transformers/gpt2"]), ["transformers/gpt2"])
            build.assert_called_once_with(entry)

    def test_a_recorded_duplicate_is_written_as_the_graph_it_equals(self):
        # A row measured under a variant id later found to build another id's graph (torchvision's own name
        # wins): its graph is that id's, which a clean clone writes (the variant has no manifest line).
        entry = {"file": "torchvision/resnet18_r384.onnx", "id": "resnet18_r384", "generator": "torchvision", "config": {}}
        with tempfile.TemporaryDirectory() as d, mock.patch.object(manifest, "OUT_DIR", d), \
                mock.patch.object(manifest, "_duplicates", return_value={"resnet_basic_2-2-2-2_r384": "resnet18_r384"}), \
                mock.patch.object(manifest, "read_all", return_value=[entry]), \
                mock.patch.object(ensure, "ensure_graph") as build:
            os.makedirs(os.path.join(d, "torchvision"))
            build.side_effect = lambda e: open(os.path.join(d, e["file"]), "wb").close()
            self.assertEqual(ensure.ensure_models(["torchvision/resnet_basic_2-2-2-2_r384"]), [])
            build.assert_called_once_with(entry)

    def test_rows_without_a_graph_stop_the_fit_by_name(self):
        with mock.patch.object(cpu_rows, "ensure_models", return_value=["transformers/a", "transformers/b"]):
            with self.assertRaises(SystemExit) as e:
                cpu_rows.require_graphs(["transformers/a", "transformers/b"], "web_ort_wasm.csv")
        self.assertIn("2 models of web_ort_wasm.csv", str(e.exception))
        self.assertIn("transformers/a, transformers/b", str(e.exception))


if __name__ == "__main__":
    unittest.main()
