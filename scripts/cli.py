"""The command line of a script that takes no options: `--help` prints its docstring, anything else given is
an error. Without it such a script ran its whole job for `--help` (a calibration stage refitted and rewrote
weights/roofline.json when asked what it does)."""
from __future__ import annotations

import argparse


def no_options(doc: str, argv=None) -> None:
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.parse_args(argv)
