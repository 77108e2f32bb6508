"""Every path the Python scripts use, in one place (absolute, as strings for os.path).

The scripts are one package run from the repository root with Debian's Python:
``/usr/bin/python3 -m scripts.<folder>.<module>``; they import this module as ``from scripts import paths``.
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repository
SCRIPTS = os.path.join(ROOT, "scripts")

BUILD = os.path.join(ROOT, "build")
BUILD_NATIVE = os.path.join(BUILD, "native")
CLI = os.path.join(BUILD_NATIVE, "core", "perfcard")  # the native CLI (scripts/build.sh)

WEIGHTS = os.path.join(ROOT, "weights")
DEVICES_JSON = os.path.join(WEIGHTS, "devices.json")
ROOFLINE_JSON = os.path.join(WEIGHTS, "roofline.json")
DOCS = os.path.join(ROOT, "docs")
TEST_DATA = os.path.join(ROOT, "tests", "data")
MEASURED = os.path.join(ROOT, "data", "measured")  # our own measurements (scripts/measure/)

ZOO = os.path.join(SCRIPTS, "zoo")
ZOO_OUT = os.path.join(ZOO, "out")  # exported graphs (git-ignored)
ZOO_MANIFESTS = os.path.join(ZOO, "manifests")  # the committed manifests
MEASURE = os.path.join(SCRIPTS, "measure")  # the node runners and their package.json

# The public measurements, read-only, next to the repository (never copied into it).
SHARED_DATA = os.path.normpath(os.path.join(ROOT, "..", "shared", "data", "public"))


def shared(name: str) -> str:
    """A file of the public measurements, e.g. shared("help_latency_long.csv.gz")."""
    return os.path.join(SHARED_DATA, name)
