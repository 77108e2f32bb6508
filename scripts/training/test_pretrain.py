"""The GNN encoder's pretraining (pretrain.py): which zoo graphs may be pretrained on, and that the
auto-encoder's objective learns on graphs whose structure is known."""
import unittest

import numpy as np

from scripts.training import gnn, pretrain


class Families(unittest.TestCase):
    def test_a_nas_cell_answers_to_both_its_family_names(self):
        cell = {"id": "nb201_00042", "generator": "nasbench201", "family": "nasbench201",
                "config": {"arch_index": 42}}
        self.assertEqual(pretrain.family_names(cell), ["nasbench201", "nasbench201:42"])
        self.assertEqual(pretrain.family_names({"id": "resnet50", "family": "resnet"}), ["resnet"])


def chain_graphs(n_graphs: int, rng) -> list[dict]:
    """Chains op 1 -> op 2 -> op 3 -> op 1 ...: a masked node's op follows from its producer's."""
    graphs = []
    for _ in range(n_graphs):
        n = int(rng.integers(6, 20))
        op = (np.arange(n) % 3 + 1).astype(np.int64)
        graphs.append({"op": op, "cls": np.zeros(n, np.int64), "x": (op[:, None] * np.ones((1, 4))).astype(np.float32),
                       "src": np.arange(n - 1, dtype=np.int64), "dst": np.arange(1, n, dtype=np.int64)})
    return graphs


class Objective(unittest.TestCase):
    def test_the_losses_fall_and_the_encoder_fits_the_gnn(self):
        import torch
        h = dict(gnn.HYPER, hidden=16, op_embedding=4, class_embedding=2, layers=2, head_hidden=8,
                 graphs_per_step=8, lr=1e-2)
        graphs = chain_graphs(64, np.random.default_rng(0))
        init, history = pretrain.pretrain(graphs, n_ops=4, n_cls=1, n_row=3, h=h, minutes=10, seed=0, max_epochs=15)
        self.assertEqual(len(history), 15)
        first, last = history[0], history[-1]
        self.assertLess(last["op_ce"], 0.5 * first["op_ce"])
        self.assertLess(last["edge_bce"], first["edge_bce"])
        # The encoder's tensors are exactly the GNN's, head aside: fine-tuning loads them strictly.
        model = gnn.build_model(4, 1, 4, 3, h)
        own = {k for k in model.state_dict() if not k.startswith("head")}
        self.assertEqual(set(init["encoder"]), own)
        model.load_state_dict(init["encoder"], strict=False)
        self.assertTrue(torch.equal(model.state_dict()["inp.weight"], init["encoder"]["inp.weight"]))


if __name__ == "__main__":
    unittest.main()
