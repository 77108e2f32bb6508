"""Writes weights/manifest.json: every weights/*.pcwt and weights/*.json (but manifest.json itself) with
its size in bytes and sha256; predictor files also with their predictor name, version and format version
(each is read and validated with pcwt.py on the way).

    /usr/bin/python3 -m scripts.weights.update_manifest           rewrite weights/manifest.json
    /usr/bin/python3 -m scripts.weights.update_manifest --check   exit 1, naming each problem, when a file
                                                                  is unlisted, missing, or its size / sha256
                                                                  / metadata differ from the manifest

The test suite checks the same (tests/weights_file_test.cpp), so after adding or changing a file under
weights/ run this script and commit weights/manifest.json with the file.
"""
import argparse
import hashlib
import json
import os
import sys

from scripts import paths
from scripts.weights import pcwt

WEIGHTS = paths.WEIGHTS
MANIFEST = os.path.join(WEIGHTS, "manifest.json")


def listed_files(weights_dir):
    names = []
    for name in sorted(os.listdir(weights_dir)):
        path = os.path.join(weights_dir, name)
        if name == "manifest.json" or not os.path.isfile(path) or os.path.islink(path):
            continue
        if name.endswith(".pcwt") or name.endswith(".json"):
            names.append(name)
    return names


def entry(weights_dir, name):
    with open(os.path.join(weights_dir, name), "rb") as f:
        data = f.read()
    e = {"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    if name.endswith(".pcwt"):
        try:
            w = pcwt.read_bytes(data)
        except pcwt.PcwtError as e:
            raise ValueError(f"weights/{name}: {e}") from None
        e["format"] = f"{w.major}.{w.minor}"
        e["predictor"] = w.metadata["predictor"]
        e["predictor_version"] = w.metadata["predictor.version"]
        e["feature_schema_hash"] = w.metadata["feature_schema.hash"]
    elif name.endswith(".json"):
        try:
            json.loads(data.decode("utf-8"))  # must at least be JSON
        except ValueError as e:
            raise ValueError(f"weights/{name} is not JSON: {e}") from None
    return e


def build(weights_dir):
    return {"format": "perfcard-weights-manifest", "version": 1,
            "files": [entry(weights_dir, n) for n in listed_files(weights_dir)]}


def render(manifest):
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


def check(weights_dir, manifest_path):
    problems = []
    try:
        expected = build(weights_dir)
    except ValueError as e:
        return [str(e)]
    try:
        with open(manifest_path, encoding="utf-8") as f:
            text = f.read()
        current = json.loads(text)
    except (OSError, ValueError) as e:
        return [f"cannot read {os.path.relpath(manifest_path, paths.ROOT)}: {e}"]
    have = {f.get("path"): f for f in current.get("files", [])}
    want = {f["path"]: f for f in expected["files"]}
    for name in sorted(set(want) - set(have)):
        problems.append(f"weights/{name} is not listed in weights/manifest.json")
    for name in sorted(set(have) - set(want)):
        problems.append(f"weights/manifest.json lists weights/{name}, which does not exist")
    for name in sorted(set(have) & set(want)):
        for field in want[name]:
            if have[name].get(field) != want[name][field]:
                problems.append(f"weights/{name}: {field} is {want[name][field]!r}, the manifest says "
                                f"{have[name].get(field)!r}")
    if not problems and text != render(expected):
        problems.append("weights/manifest.json is not in the form this script writes")
    return problems


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--check", action="store_true", help="verify instead of writing")
    ap.add_argument("--weights-dir", default=WEIGHTS, help=argparse.SUPPRESS)  # for tests
    args = ap.parse_args(argv)
    manifest_path = os.path.join(args.weights_dir, "manifest.json")
    if args.check:
        problems = check(args.weights_dir, manifest_path)
        for p in problems:
            print(f"update_manifest.py --check: {p}", file=sys.stderr)
        if problems:
            print("run /usr/bin/python3 -m scripts.weights.update_manifest and commit weights/manifest.json",
                  file=sys.stderr)
            return 1
        print(f"weights/manifest.json: {len(json.load(open(manifest_path))['files'])} files, all match")
        return 0
    manifest = build(args.weights_dir)
    with open(manifest_path, "w", encoding="utf-8") as f:
        f.write(render(manifest))
    print(f"wrote {os.path.relpath(manifest_path, paths.ROOT)}: {len(manifest['files'])} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
