"""NAS-Bench-201 networks as torch modules, written from the benchmark's description (not its code): the
independent construction test_nasbench201.py checks the onnx.helper graphs against, and the modules the
GPU campaign (scripts/measure/gpu_campaign.py) times.
"""
import torch.nn as nn

from scripts.zoo import nasbench201 as nb


class ReLUConvBN(nn.Sequential):
    def __init__(self, c_in, c_out, k, stride, pad):
        super().__init__(nn.ReLU(), nn.Conv2d(c_in, c_out, k, stride, pad, bias=False), nn.BatchNorm2d(c_out))


class Zero(nn.Module):
    def forward(self, x):
        return x * 0.0


class Cell(nn.Module):
    """zeros="computed": every edge runs, `none` as a multiply by 0, and a node is Python's sum() of its edges
    (from 0), as NAS-Bench-201's cells; "dropped": `none` edges left out (what this twin ran until 2026-11-28)."""

    def __init__(self, arch, c, zeros="computed"):
        super().__init__()
        self.zeros = zeros
        self.edges = [(s, d, op) for s, d, op in nb.parse_arch(arch) if zeros == "computed" or op != "none"]
        mods = []
        for _, _, op in self.edges:
            if op == "nor_conv_3x3":
                mods.append(ReLUConvBN(c, c, 3, 1, 1))
            elif op == "nor_conv_1x1":
                mods.append(ReLUConvBN(c, c, 1, 1, 0))
            elif op == "avg_pool_3x3":
                mods.append(nn.AvgPool2d(3, 1, 1, count_include_pad=False))
            elif op == "none":
                mods.append(Zero())
            else:
                mods.append(nn.Identity())
        self.ops = nn.ModuleList(mods)

    def forward(self, x):
        vals = {0: x}
        if self.zeros == "computed":
            for j in (1, 2, 3):
                vals[j] = sum(m(vals[s]) for (s, d, _), m in zip(self.edges, self.ops) if d == j)
            return vals[3]
        for j in (1, 2, 3):
            terms = []
            for (s, d, _), m in zip(self.edges, self.ops):
                if d == j:
                    terms.append(m(vals[s] if s in vals else x * 0.0))
            vals[j] = sum(terms[1:], terms[0]) if terms else (x * 0.0 if j == 3 else None)
            if vals[j] is None:
                del vals[j]
        return vals[3]


class Reduction(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.a = ReLUConvBN(c_in, c_out, 3, 2, 1)
        self.b = ReLUConvBN(c_out, c_out, 3, 1, 1)
        self.short = nn.Sequential(nn.AvgPool2d(2, 2), nn.Conv2d(c_in, c_out, 1, bias=False))

    def forward(self, x):
        return self.short(x) + self.b(self.a(x))


class Net(nn.Module):
    def __init__(self, arch, classes=100, zeros="computed"):
        super().__init__()
        layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16)]
        prev = 16
        for i, c in enumerate((16, 32, 64)):
            if i:
                layers.append(Reduction(prev, c))
            layers += [Cell(arch, c, zeros) for _ in range(5)]
            prev = c
        layers += [nn.BatchNorm2d(prev), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(prev, classes)

    def forward(self, x):
        return self.fc(self.body(x))
