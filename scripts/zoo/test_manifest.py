"""A measured id whose graph the export later recorded as another id's duplicate keeps its graph."""
import json
import os
import tempfile
import unittest
from unittest import mock

from scripts.zoo import manifest as zm


class GraphPathTest(unittest.TestCase):
    def test_a_duplicate_id_resolves_to_the_graph_it_duplicates(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, man = os.path.join(tmp, "out"), os.path.join(tmp, "manifests")
            os.makedirs(os.path.join(out, "torchvision"))
            os.makedirs(man)
            open(os.path.join(out, "torchvision", "resnet18_r384.onnx"), "wb").close()
            open(os.path.join(out, "alexnet.onnx"), "wb").close()
            with open(os.path.join(man, "torchvision_failures.json"), "w") as f:
                json.dump({"_duplicates": {"resnet_basic_2-2-2-2_r384": "resnet18_r384"}}, f)
            with mock.patch.object(zm, "OUT_DIR", out), mock.patch.object(zm, "MANIFEST_DIR", man), \
                    mock.patch.object(zm, "_duplicates_of", {}):
                self.assertEqual(zm.graph_path("torchvision/resnet_basic_2-2-2-2_r384"),
                                 os.path.join(out, "torchvision", "resnet18_r384.onnx"))
                self.assertEqual(zm.graph_path("torchvision/resnet18_r384"),
                                 os.path.join(out, "torchvision", "resnet18_r384.onnx"))
                self.assertEqual(zm.graph_path("alexnet"), os.path.join(out, "alexnet.onnx"))
                # Neither a file nor a recorded duplicate: the path that does not exist, for the caller to drop.
                self.assertFalse(os.path.exists(zm.graph_path("torchvision/never_exported")))
                self.assertFalse(os.path.exists(zm.graph_path("nasbench201/cell_1")))


if __name__ == "__main__":
    unittest.main()
