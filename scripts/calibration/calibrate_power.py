"""Stage D: fits the power model's exponent on ML.ENERGY's measured GPU power, through PerfCard's own
per-kernel busy fraction and intensity (`perfcard eval`; Python only optimizes), and writes it with its
provenance to weights/roofline.json "power".

    power = idle + (tdp - idle) * busy_fraction * max(floor, intensity)^gamma     (core/src/predict.cpp)

Rows: single-GPU vLLM decode serving of zoo decoder graphs (scripts/roofline/energy.py says which and
why the others are left out). Fitted on ML.ENERGY v3 (measured average power); v2's power is derived
(J/token x tokens/s) and is only evaluated. Before writing, the Python mirror of the formula is checked
against `perfcard predict --json` on real rows.

Run: /usr/bin/python3 -m scripts.calibration.calibrate_power     (after calibrate_roofline.py / calibrate_models.py)
"""
import datetime
import json
import os
import subprocess
import tempfile

from scripts import paths
from scripts.cli import no_options
from scripts.roofline import energy
from scripts.roofline.perfcard_eval import cli, write_constants

CONSTANTS = paths.ROOFLINE_JSON


def check_mirror(rows, constants, power_table, n=3):
    """The Python formula must give the CLI's power_w on the same rows (else the fit optimizes something
    the product does not compute)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(constants, f)
        cpath = f.name
    try:
        for r, q in list(zip(rows, energy.decode_queries(rows)))[:: max(1, len(rows) // n)][:n]:
            cmd = [cli(), "predict", q["model"], "--device", q["device"], "--precision", q["precision"],
                   "--runtime", q["runtime"], "--batch", str(q["dims"]["batch"]), "--dim", "sequence=1",
                   "--dim", f"past_sequence={q['dims']['past_sequence']}", "--json", "--constants", cpath,
                   "--devices", paths.DEVICES_JSON]
            doc = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            row = [x for x in _rows(doc) if x.get("device_id", x.get("device")) == q["device"]][0]
            mine = energy.power_model([r], constants["power"]["gamma"], constants["power"]["floor"], power_table)[0]
            if abs(row["power_w"] / mine - 1) > 1e-6:
                raise SystemExit(f"power mirror differs from the CLI: {row['power_w']} vs {mine} ({q})")
            print(f"mirror check: {os.path.basename(q['model'])} {q['device']} batch {q['dims']['batch']}: "
                  f"CLI {row['power_w']:.2f} W = Python {mine:.2f} W")
    finally:
        os.unlink(cpath)


def _rows(doc):
    """Prediction rows of `predict --json` wherever the schema nests them."""
    if isinstance(doc, dict):
        if "power_w" in doc:
            return [doc]
        return [x for v in doc.values() for x in _rows(v)]
    if isinstance(doc, list):
        return [x for v in doc for x in _rows(v)]
    return []


def main():
    with open(CONSTANTS) as f:
        doc = json.load(f)
    rows, skipped = energy.load_rows()
    energy.predict_rows(rows, doc)
    power_table = energy.device_power({r["device_id"] for r in rows})
    floor = float(doc["power"]["floor"])
    gamma, n_fit, loss = energy.fit_gamma(rows, floor, power_table)
    _, lofo = energy.heldout_predictions(rows, floor, power_table)
    fit_rows = [r for r in rows if r["power_measured"]]
    doc["power"] = {
        "gamma": round(gamma, 4), "floor": floor,
        "provenance": {
            "script": "scripts/calibration/calibrate_power.py", "created": datetime.date.today().isoformat(),
            "fitted": "gamma, by least squares in log(power) over every row with measured power",
            "floor": (f"not fitted: kept at {floor}; the lowest PerfCard intensity over the matched rows is "
                      f"{min(r['intensity'] for r in rows):.3f}, so the clamp is never active and the data "
                      "cannot identify it"),
            "sources": {"ML.ENERGY v3": "mlenergy_v3_llm.csv (avg_power_watts; no README beside it, commit unknown)",
                        "ML.ENERGY v2": f"mlenergy_v2_llm_diffusion.csv (ml-energy/leaderboard-v2 {energy.V2_COMMIT}); "
                                        "power derived as J/token x tokens/s, evaluated only"},
            "runtime": "vLLM serving (CUDA graphs) modelled as runtime 'kernel' (no dispatch gaps); decode step at "
                       "the row's average batch, KV cache = half the average output length",
            "rows": {"fit": n_fit, "matched": len(rows), "left_out": skipped,
                     "fit_by": sorted({(r['family'], r['device_id']) for r in fit_rows})},
            "split": "by model family: held-out figures in docs/accuracy.md use gamma refitted without the row's "
                     "family (leave-one-family-out): " + json.dumps({k: round(v, 4) for k, v in lofo.items()}),
            "fit_rmse_log": round(loss ** 0.5, 4),
        },
    }
    check_mirror(fit_rows, doc, power_table)
    write_constants(doc, CONSTANTS)
    print(f"power: gamma = {gamma:.4f} (floor {floor}) on {n_fit} rows with measured power; "
          f"RMSE of log power {loss ** 0.5:.3f}; leave-one-family-out gammas {lofo}")
    print(f"matched {len(rows)} ML.ENERGY rows; left out: {json.dumps(skipped)}")


if __name__ == "__main__":
    no_options(__doc__)
    main()
