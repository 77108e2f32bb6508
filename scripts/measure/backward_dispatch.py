"""The autograd engine's host cost per backward kernel against eager's per forward op, measured on this CPU.

    /usr/bin/python3 -m scripts.measure.backward_dispatch [--layers 100] [--reps 300]

A chain of tiny Linear(8, 8) + ReLU layers at batch 1 on one thread: every kernel's work is negligible, so
the time is the host's (Python and the module call in the forward, the C++ engine in the backward, ATen's
dispatcher in both). Kernels are counted with the profiler (matrix products, ReLU and its backward, the
bias's sum). The training plan (docs/training-time.md) charges a backward kernel the runtime's forward
dispatch; this prints how far that is from what the engine costs.
"""
import argparse
import collections
import statistics
import time

KERNELS = {"aten::addmm", "aten::mm", "aten::relu", "aten::threshold_backward", "aten::sum"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=100)
    ap.add_argument("--reps", type=int, default=300)
    a = ap.parse_args(argv)
    import torch
    from torch.profiler import profile
    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = torch.nn.Sequential(*[m for _ in range(a.layers) for m in (torch.nn.Linear(8, 8), torch.nn.ReLU())])
    x = torch.randn(1, 8)
    fwd, bwd = [], []
    for i in range(a.reps + 50):
        net.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        y = net(x).sum()
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        if i >= 50:  # warm-up
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
    net.zero_grad(set_to_none=True)
    with profile() as p:
        y = net(x).sum()
    nf = collections.Counter(e.name for e in p.events() if e.name in KERNELS)
    with profile() as p:
        y.backward()
    nb = collections.Counter(e.name for e in p.events() if e.name in KERNELS)
    f, b = statistics.median(fwd) * 1e6, statistics.median(bwd) * 1e6
    per_f, per_b = f / sum(nf.values()), b / sum(nb.values())
    print(f"torch {torch.__version__}, {a.layers} x (Linear(8, 8), ReLU), batch 1, one thread")
    print(f"forward:  {f:.0f} us for {sum(nf.values())} kernels ({dict(nf)}): {per_f:.2f} us each")
    print(f"backward: {b:.0f} us for {sum(nb.values())} kernels ({dict(nb)}): {per_b:.2f} us each")
    print(f"backward / forward host cost per kernel: {per_b / per_f:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
