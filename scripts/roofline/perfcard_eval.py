"""Drives `perfcard eval`: one C++ process answers a batch of prediction queries, so calibration and
evaluation exercise exactly the code the CLI and the web page run."""
import atexit
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

from scripts import paths

# $PERFCARD names another build's CLI (a private build directory while build/native is in use).
BUILT_CLI = os.environ.get("PERFCARD") or paths.CLI
_private_cli = None


def cli():
    """A private copy of the CLI, so a rebuild during a long fit cannot pull the binary away."""
    global _private_cli
    if _private_cli is None:
        if not os.path.exists(BUILT_CLI):
            raise SystemExit(f"{BUILT_CLI} is missing: build first (bash scripts/build.sh --native-only)")
        home = tempfile.mkdtemp(prefix="perfcard-cli-")
        # Gone with the process: each run's copy (megabytes) was left in the temp folder for good.
        atexit.register(shutil.rmtree, home, ignore_errors=True)
        _private_cli = os.path.join(home, "perfcard")
        shutil.copy2(BUILT_CLI, _private_cli)
    return _private_cli


def run_queries(queries, constants=None, devices=None, cli_path=None, weights_dir=None):
    """queries: list of dicts {model, dims, device, precision, runtime, threads, ...}; returns list of results.
    constants / devices: dicts used instead of the working tree's weights/roofline.json / weights/devices.json
    (the catalog by default with the probed machines' entries added when a query names one: the
    onnxruntime-web rows' devices, and the cpu-probed entries of machines.json's native probes);
    cli_path: another build's CLI (default: the private copy of this one's);
    weights_dir: learned files (and their manifest) used instead of weights/."""
    if devices is None:
        from scripts.measure import machines, probe_web
        named = {str(q.get("device", "")) for q in queries}
        web = any(d.startswith(probe_web.DEVICE_PREFIX) for d in named)
        native = any(d.startswith(machines.PROBED_PREFIX) for d in named)
        if web or native:
            devices = probe_web.catalog_with_probes(None if web else {})
            if native:
                devices["devices"] += list(machines.probed_entries().values())
    with tempfile.TemporaryDirectory() as tmp:
        qpath = os.path.join(tmp, "q.jsonl")
        with open(qpath, "w") as f:
            for q in queries:
                f.write(json.dumps(q) + "\n")
        # The working tree's catalog, not the copy embedded at the last build.
        dpath = paths.DEVICES_JSON
        if devices is not None:
            dpath = os.path.join(tmp, "devices.json")
            with open(dpath, "w") as f:
                json.dump(devices, f)
        # Likewise the working tree's learned predictors (a file just trained is used without a rebuild).
        cmd = [cli_path or cli(), "eval", qpath, "--devices", dpath, "--weights", weights_dir or paths.WEIGHTS]
        # And the working tree's constants: a stage just refitted is what the next script's rows are
        # predicted with (learned predictors are trained on the residual over them), rebuilt or not.
        cpath = paths.ROOFLINE_JSON
        if constants is not None:
            cpath = os.path.join(tmp, "constants.json")
            with open(cpath, "w") as f:
                json.dump(constants, f)
        cmd += ["--constants", cpath]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    results = [json.loads(line) for line in out.splitlines()]
    errors = [(q, r["error"]) for q, r in zip(queries, results) if "error" in r]
    if errors:
        q, e = errors[0]
        raise RuntimeError(f"{len(errors)} of {len(queries)} queries failed; first: {e} (query {json.dumps(q)})")
    return results


def catalog_devices():
    """The catalog's devices as the core lists them (`perfcard devices --json`: id, kind, family, ...): the
    family of a device is the core's rule (roofline.json's arch prefixes), never re-derived here."""
    out = subprocess.run([cli(), "devices", "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["devices"]


def refresh_manifest():
    """Every script that rewrites a file in weights/ refreshes weights/manifest.json (sha256, size)."""
    subprocess.run([sys.executable, "-m", "scripts.weights.update_manifest"], check=True, cwd=paths.ROOT)


def finite_or_none(value):
    """The value with every float that is not finite (a Kendall tau of one row is NaN) made None: JSON has no
    NaN, and the core and the page's build read the provenance record as JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def write_constants(doc, path=None):
    """Every calibration stage writes weights/roofline.json the same way (sorted keys, one-space indent, a final
    newline, the provenance record as valid JSON text) and refreshes weights/manifest.json's sha256 and size
    for it."""
    prov = doc.get("provenance")
    if isinstance(prov, str) and prov.startswith("{"):
        doc = {**doc, "provenance": json.dumps(finite_or_none(json.loads(prov)), sort_keys=True, allow_nan=False)}
    with open(path or paths.ROOFLINE_JSON, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True, allow_nan=False)
        f.write("\n")
    refresh_manifest()
