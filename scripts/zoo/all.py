"""Every zoo graph the evaluations and the training tables need, in one command (resumable: graphs already
on disk are kept):

    nice -n 19 /usr/bin/python3 -m scripts.zoo.all [--skip NAME,...]

  classic       scripts.zoo.export_torchvision --resume   torchvision models at their native input size
  bert          scripts.zoo.export_bert                    BERT-base (out/bert_base.onnx)
  variants      scripts.zoo.export_variants --resume      the torchvision zoo at scale (sizes, widths, depths)
  nasbench201   scripts.zoo.nasbench201                   HELP's 15,625 NAS-Bench-201 cells
  transformers  scripts.zoo.transformers                  encoders and decoders from configs

Exit 1 naming the generators that failed. Tens of minutes on a 2-core machine the first time (the
classic and variant exports dominate); seconds afterwards.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time

from scripts import paths

STEPS = [
    ("classic", ["-m", "scripts.zoo.export_torchvision", "--resume"]),
    ("bert", ["-m", "scripts.zoo.export_bert"]),
    ("variants", ["-m", "scripts.zoo.export_variants", "--resume"]),
    ("nasbench201", ["-m", "scripts.zoo.nasbench201"]),
    ("transformers", ["-m", "scripts.zoo.transformers"]),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip", default="", help="comma-separated step names to leave out")
    args = ap.parse_args(argv)
    skip = {s for s in args.skip.split(",") if s}
    failed = []
    for name, cmd in STEPS:
        if name in skip:
            continue
        t = time.time()
        print(f"== {name}: {' '.join(cmd)}", flush=True)
        r = subprocess.run([sys.executable] + cmd, cwd=paths.ROOT)
        print(f"== {name}: exit {r.returncode}, {time.time() - t:.0f} s", flush=True)
        if r.returncode != 0:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
