"""Fit the ensemble of the roofline and the learned members (of trees, GNN, transformer; issue 12):
its weights, its calibrated band and the embedding distance beyond which a model is out of distribution.

    nice -n 19 /usr/bin/python3 -m scripts.training.ensemble [--write] [--folds 3] [--cache FILE]
        [--members roofline,trees,gnn,transformer]   (every candidate, the default; leaving the GNN out saves
                                                    its three refits, ~75 minutes on 2 cores)

Nothing here is fitted on held-out test rows. The train families are split into K folds (by family); for
each fold the learned predictors (trees, GNN, transformer) are refitted with their committed recipes on the
other folds and predict the fold's rows, so every train row gets a prediction from models that never saw
its family (out-of-fold). On those rows, per group (GPUs: PyTorch eager; CPUs: onnxruntime; and each device
family with MIN_GROUP_ROWS rows of MIN_FAMILIES model families, which the core prefers to its kind's):
  - weights w (on the simplex, a 0.05 grid) minimizing the mean APE of exp(sum_i w_i log latency_i), each
    row weighing 1/rows of its source, as in the members' training (a source of fewer than MIN_FAMILIES
    model families weighs nothing: see source_weights), and the roofline's weight only where its constants
    were not fitted on the rows (see fit_group_weights);
  - a band latency x exp(+-(base + spread s)), s = the standard deviation of the learned members' log
    latencies: for each spread on a grid, base is the weighted 80% quantile of |log error| - spread s
    (so 80% of the rows are inside), and the pair with the narrowest mean band is kept;
  - out of distribution: the GNN's graph embeddings of the train models or the transformer's of their
    kernel sequences, standardized, clustered (k-means); a model's distance is to the nearest centroid, and
    the threshold is the 95th percentile of out-of-fold distances (each fold's embeddings against centroids
    of the other folds'); of the two, the one whose out-of-fold flag separates the errors best
    (choose_ood);
  - a learned member whose weight is at most NEGLIGIBLE in every group is left out and the weights refitted
    without it (it would cost its embedding on every first prediction for nothing measurable), unless its
    embedding is the one that places a model.
The shipped members (weights/*.pcwt, trained on every train family) then predict the held-out families
through the core (`perfcard eval`, predictor "ensemble"), which gives the file's held-out accuracy per
device family and the figures printed here: MAPE and Kendall's tau per source and device, the band's
coverage per source, and the error of rows flagged out of distribution against the rest.
--write exports weights/ensemble.pcwt and refreshes weights/manifest.json; --cache keeps the rows, graphs and
sequences the core computed (a pickle) so that a second run skips them, and FILE.oofK the out-of-fold
predictions of every learned predictor (one added later is computed alone and joined to them).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import pickle
import sys

import numpy as np
import pandas as pd

from scripts import paths
from scripts.roofline.perfcard_eval import refresh_manifest, run_queries
from scripts.training import gnn, networks, report, rows as trows, transformer, trees
from scripts.weights import pcwt

OUT = os.path.join(paths.WEIGHTS, "ensemble.pcwt")
PREDICTOR_VERSION = 1
MEMBERS = ("roofline", "trees", "gnn", "transformer")  # the candidates, in the order the core requires
# A learned member whose fitted weight is at most this (one step of the weights' grid) in every group adds
# nothing measurable and costs its embedding on every first prediction: it is left out and the weights are
# refitted without it (unless its embedding is the one that places a model).
NEGLIGIBLE = 0.05
# The embeddings whose distance to the training models' may flag a model out of distribution: "graph" (the
# GNN's, one per model) or "sequence" (the transformer's, one per model, dims, runtime and precision).
# choose_ood picks one on the out-of-fold rows, never on held-out ones.
OOD_EMBEDDINGS = ("graph", "sequence")
GROUPS = ("gpu", "cpu")
COVERAGE = 0.8
OOD_QUANTILE = 0.95
MIN_FAMILIES = 5      # model families a source (or a device family's group) needs to count in a fit
MIN_GROUP_ROWS = 100  # out-of-fold rows a device family needs for weights and a band of its own
# Sources whose train families the roofline's constants were fitted on (weights/roofline.json's provenance:
# stage C on timm's eager rows, stage E on our onnxruntime CPU rows, stage W on our onnxruntime-web rows):
# the roofline is in-sample there.
ROOFLINE_FITTED_ON = ("timm", "cpu_ours", "web_ours")
CENTROIDS = 32
SPREADS = np.round(np.arange(0, 4.01, 0.25), 2)


def group_of(runtime: pd.Series) -> np.ndarray:
    """Each row's group: its runtime's kind ("cpu" or "gpu") as weights/roofline.json declares it, the
    constants the core reads (onnxruntime, native or web, runs on CPUs)."""
    with open(paths.ROOFLINE_JSON) as f:
        kinds = {name: rt["kind"] for name, rt in json.load(f)["runtimes"].items()}
    unknown = sorted(set(runtime) - set(kinds))
    if unknown:
        raise SystemExit(f"runtimes {unknown} are not in weights/roofline.json: no kind to group their rows by")
    return runtime.map(kinds).to_numpy()


def fold_of(family: str, folds: int) -> int:
    return int(hashlib.sha1(f"ensemble-fold:{family}".encode()).hexdigest()[:8], 16) % folds


def load(cache: str | None, help_sample: int):
    """The rows, the GNN's graphs and the transformer's sequences (with each row's index into them)."""
    got = ()
    if cache and os.path.exists(cache):
        with open(cache, "rb") as f:
            got = pickle.load(f)
        if len(got) == 3:
            return got
    if got:
        df, graphs = got
    else:
        df, missing = trows.load(help_sample=help_sample)
        if missing:
            raise SystemExit("rows of " + ", ".join(missing) + " are missing (zoo graphs not exported: "
                             "/usr/bin/python3 -m scripts.zoo.all)")
        graphs = gnn.graphs_for(df)
    got = (df, graphs, transformer.sequences_for(df))
    if cache:
        with open(cache, "wb") as f:
            pickle.dump(got, f)
    return got


# ------------------------------------------------------------------------------------------ out of fold

def out_of_fold(df: pd.DataFrame, graphs, sequences, folds: int, schema: dict, members=MEMBERS[1:],
                fold_cache: str | None = None) -> pd.DataFrame:
    """The train rows with the log latency of each of `members` from models that never saw the row's family.
    With `fold_cache`, each member's predictions of each fold are kept in FOLD_CACHE.<member><fold> as they are
    made, and read back instead of refitted: a run cut short (the GNN's folds take the better part of an
    hour each on two cores) resumes at the first fold it had not finished."""
    (graph_list, gid), (seq_list, sid) = graphs, sequences
    n_ops, n_cls = len(schema["ops"]) + 1, len(schema["op_classes"])
    if "transformer" in members:
        tf_recipe = networks.recipe(transformer)
        win = transformer.Windows(seq_list, tf_recipe["window"], len(schema["sequence"]["kernel_features"]))
    train_idx = np.flatnonzero((df.split == "train").to_numpy())
    fold = np.array([fold_of(f, folds) for f in df.family.iloc[train_idx]])
    parts = []
    for k in range(folds):
        tr, va = train_idx[fold != k], train_idx[fold == k]
        fit_rows, val_rows = df.iloc[tr], df.iloc[va].copy()
        lo, hi = trees.target(fit_rows).min(), trees.target(fit_rows).max()
        print(f"fold {k + 1}/{folds}: {len(tr)} rows fit, {len(va)} predicted", flush=True)
        base = np.log(val_rows.roofline_ms.to_numpy())
        val_rows["log_roofline"] = base
        fitters = {
            "trees": lambda: trees.margins(trees.fit(fit_rows.reset_index(drop=True)), val_rows),
            "gnn": lambda: gnn.fit_predict(fit_rows, val_rows, graph_list, gid, n_ops, n_cls, networks.recipe(gnn)),
            "transformer": lambda: transformer.fit_predict(fit_rows, val_rows, win, sid, n_ops, n_cls, tf_recipe)}
        for name in (m for m in MEMBERS[1:] if m in members):
            kept = f"{fold_cache}.{name}{k}" if fold_cache else None
            if kept and os.path.exists(kept):
                margin = pd.read_pickle(kept)
                print(f"  {name}: fold {k + 1} read from {kept}", flush=True)
            else:
                margin = np.asarray(fitters[name]())
                if kept:
                    pd.to_pickle(margin, kept)
            val_rows[f"log_{name}"] = base + np.clip(margin, lo, hi)
        val_rows["fold"] = k
        parts.append(val_rows)
    return pd.concat(parts)


# ------------------------------------------------------------------------------------------------- fit

def source_weights(df: pd.DataFrame) -> np.ndarray:
    """Each source weighs the same, as in the members' training (trees.weights_of); but a source with fewer
    than MIN_FAMILIES model families among the rows weighs nothing: its rows say how one family errs, not how
    a new one will (DLE's ResNet-50 sweeps, one family, would otherwise weigh as much as timm's or HELP's)."""
    fams = df.groupby("source").family.nunique()
    keep = df.source.map(fams >= MIN_FAMILIES).to_numpy(bool)
    w = np.where(keep, trees.weights_of(df), 0.0)
    return w / w.sum()


def simplex(members: int, step: float = 0.05):
    """Every point of the simplex on a grid of `step`: weights >= 0 that sum to 1."""
    n = int(round(1 / step))

    def parts(left: int, k: int):
        if k == 1:
            yield (left,)
            return
        for a in range(left + 1):
            for rest in parts(left - a, k - 1):
                yield (a,) + rest

    for p in parts(n, members):
        yield np.array(p, np.float64) / n


def fit_weights(logs: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    best, best_w = np.inf, None
    for cand in simplex(logs.shape[1]):
        err = float(np.sum(w * np.abs(np.exp(logs @ cand - y) - 1)))
        if err < best - 1e-12:
            best, best_w = err, cand
    return best_w


def weighted_quantile(v: np.ndarray, w: np.ndarray, q: float) -> float:
    order = np.argsort(v)
    c = np.cumsum(w[order]) / w.sum()
    return float(v[order][min(len(v) - 1, np.searchsorted(c, q))])


def fit_band(err: np.ndarray, spread: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """(base, spread coefficient): COVERAGE of the weighted rows inside, the narrowest mean band."""
    best = None
    for a in SPREADS:
        b = max(0.0, weighted_quantile(err - a * spread, w, COVERAGE))
        width = float(np.sum(w * (b + a * spread)))
        if best is None or width < best[0] - 1e-12:
            best = (width, b, float(a))
    return best[1], best[2]


def member_logs(df: pd.DataFrame, members) -> np.ndarray:
    return df[[f"log_{m}" for m in members]].to_numpy(np.float64)


def groups(oof: pd.DataFrame) -> dict[str, np.ndarray]:
    """Row masks of the groups fitted: gpu and cpu (every row of the kind), and each device family with
    MIN_GROUP_ROWS rows of MIN_FAMILIES model families (the core uses a family's own group where there is
    one, else its kind's). The core looks a family's group up by name first, so a device family that shares
    a kind's name (the "cpu" family: every native CPU, onnxruntime) is predicted with that group, which
    therefore holds the family's own rows, not the kind's (those would mix in the browser family's
    onnxruntime-web rows at the same source weight)."""
    kind = group_of(oof.runtime)
    out = {g: kind == g for g in GROUPS}
    for fam, g in oof.groupby("device_family"):
        if (fam not in out or fam in GROUPS) and len(g) >= MIN_GROUP_ROWS and g.family.nunique() >= MIN_FAMILIES:
            out[fam] = (oof.device_family == fam).to_numpy()
    return out


def fit_group_weights(rows: pd.DataFrame, members) -> np.ndarray:
    """The roofline's constants were fitted on some of these rows (ROOFLINE_FITTED_ON), where its error is
    in-sample and would buy it weight it has not earned: its weight is fitted on the other rows only, and
    is 0 in a group that has none (the learned members, out-of-fold everywhere, share it)."""
    fresh = ~rows.source.isin(ROOFLINE_FITTED_ON).to_numpy()
    if fresh.any():
        part = rows[fresh]
        return fit_weights(member_logs(part, members), np.log(part.latency_ms.to_numpy()), source_weights(part))
    logs, y, w = member_logs(rows, members), np.log(rows.latency_ms.to_numpy()), source_weights(rows)
    learned = fit_weights(logs[:, 1:], y, w)
    return np.concatenate([[0.0], learned])


def fit(oof: pd.DataFrame, members) -> dict:
    out = {}
    for g, mask in groups(oof).items():
        rows = oof[mask]
        logs, y, w = member_logs(rows, members), np.log(rows.latency_ms.to_numpy()), source_weights(rows)
        weights = fit_group_weights(rows, members)
        err = np.abs(logs @ weights - y)
        spread = logs[:, 1:].std(1)  # population std of the learned members, as the core computes it
        base, a = fit_band(err, spread, w)
        out[g] = {"weights": weights, "band_base": base, "band_spread": a, "rows": len(rows)}
        mape = {m: float(np.sum(w * np.abs(np.exp(logs[:, i] - y) - 1))) for i, m in enumerate(members)}
        print(f"{g}: {len(rows)} out-of-fold rows ({', '.join(f'{s} {n}' for s, n in rows.source.value_counts().items())}); "
              f"weights " + ", ".join(f"{m} {v:.2f}" for m, v in zip(members, weights)) +
              f"; band exp(+-({base:.3f} + {a:.2f} s)); source-weighted MAPE " +
              ", ".join(f"{m} {v:.1%}" for m, v in mape.items()) +
              f", ensemble {float(np.sum(w * np.abs(np.exp(logs @ weights - y) - 1))):.1%}")
    return out


# ---------------------------------------------------------------------------------- out of distribution

def embedding_key(df: pd.DataFrame, kind: str) -> pd.Series:
    """Which embedding each row has: its model's (graph) or its kernel sequence's."""
    return df.model if kind == "graph" else transformer.sequence_key(df)


def embeddings(df: pd.DataFrame, kind: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows that each stand for one embedded input (a model for "graph", a kernel sequence for
    "sequence") and that embedding, from the core."""
    if kind == "graph":
        first = df.drop_duplicates("model")
        res = run_queries(trows.queries(first, predictor="gnn", embedding=True))
        return first, np.array([r["embedding"] for r in res], np.float64)
    first = df[~transformer.sequence_key(df).duplicated()]
    res = run_queries(trows.queries(first, predictor="transformer", sequence_embedding=True))
    return first, np.array([r["sequence_embedding"] for r in res], np.float64)


def kmeans(x: np.ndarray, k: int, seed: int = 0, iters: int = 50) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = x[rng.choice(len(x), min(k, len(x)), replace=False)].copy()
    for _ in range(iters):
        lab = np.argmin(((x[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
        for j in range(len(c)):
            if np.any(lab == j):
                c[j] = x[lab == j].mean(0)
    return c


def distance(x: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """What LearnedEnsemble::embedding_distance computes, on standardized embeddings."""
    return np.sqrt(((x[:, None, :] - centroids[None]) ** 2).sum(-1).min(1) / x.shape[1])


def fit_ood(train: pd.DataFrame, folds: int, kind: str) -> dict:
    """Centroids of the train embeddings and the threshold; also each embedding's out-of-fold distance
    (`held`, by embedding key: each fold's embeddings against centroids of the other folds')."""
    first, x = embeddings(train, kind)
    scale = np.maximum(x.std(0), 1e-3)
    z = x / scale
    fold = np.array([fold_of(f, folds) for f in first.family])
    held = np.zeros(len(first))
    for k in range(folds):
        held[fold == k] = distance(z[fold == k], kmeans(z[fold != k], CENTROIDS))
    centroids = kmeans(z, CENTROIDS)
    threshold = float(np.quantile(held, OOD_QUANTILE))
    print(f"out of distribution ({kind}): {len(first)} train embeddings, {CENTROIDS} centroids; out-of-fold distance "
          f"median {np.median(held):.2f}, {OOD_QUANTILE:.0%} {threshold:.2f}")
    return {"centroids": (centroids * scale).astype(np.float32), "scale": scale.astype(np.float32),
            "threshold": threshold, "kind": kind,
            "held": dict(zip(embedding_key(first, kind), held))}


def choose_ood(oof: pd.DataFrame, params: dict, folds: int, members) -> dict:
    """The embedding whose out-of-fold flag separates the errors best: per kind, the ensemble's out-of-fold
    error on rows flagged (distance beyond the threshold) over its error on the rest, each source weighing
    the same; the kind with the larger ratio is kept (of the kinds whose network is a candidate member).
    Out-of-fold rows only: the held-out families never choose."""
    kind_of = group_of(oof.runtime)
    logs, y, w = member_logs(oof, members), np.log(oof.latency_ms.to_numpy()), source_weights(oof)
    weights = np.stack([params.get(f, params[k])["weights"] for f, k in zip(oof.device_family, kind_of)])
    err = np.abs(np.exp((logs * weights).sum(1) - y) - 1)
    best = None
    embedder = {"graph": "gnn", "sequence": "transformer"}
    for kind in [k for k in OOD_EMBEDDINGS if embedder[k] in members]:
        ood = fit_ood(oof, folds, kind)
        flag = embedding_key(oof, kind).map(ood["held"]).to_numpy() > ood["threshold"]
        mean = lambda m: float(np.sum(w[m] * err[m]) / max(np.sum(w[m]), 1e-12))
        ratio = mean(flag) / mean(~flag) if flag.any() and (~flag).any() else 0.0
        print(f"  {kind}: out of fold, {flag.mean():.1%} of rows flagged, error {mean(flag):.1%} against "
              f"{mean(~flag):.1%} on the rest ({ratio:.2f}x)")
        if best is None or ratio > best[0]:
            best = (ratio, ood)
    print(f"out-of-distribution embedding: {best[1]['kind']}")
    return best[1]


# ---------------------------------------------------------------------------------------------- export

def member_versions(row: pd.Series, members) -> list[str]:
    """The versions the core gives the members it loads now (the ensemble is refused with others)."""
    q = trows.queries(row.to_frame().T)[0]
    return [r["version"] for r in run_queries([dict(q, predictor=m) for m in members])]


def export(params: dict, ood: dict, train: pd.DataFrame, accuracy: dict, schema: dict, members, versions: list[str],
           provenance: str) -> bytes:
    domain_meta, domain_tensors = trees.training_domain(train, accuracy)
    names = list(params)
    meta = {"predictor": "ensemble", "predictor.version": PREDICTOR_VERSION, "feature_schema.hash": schema["hash"],
            "graph_schema.hash": schema["graph"]["hash"], "training.provenance": provenance,
            "training.sources": pcwt.Array("string", sorted(train.source.unique())),
            "training.commit": trees.git_commit(), "training.date": datetime.date.today().isoformat(),
            "created_by": "scripts/training/ensemble.py",
            "ensemble.members": pcwt.Array("string", list(members)),
            "ensemble.member_versions": pcwt.Array("string", versions),
            "ensemble.groups": pcwt.Array("string", names),
            "band.coverage": COVERAGE, "ood.threshold": ood["threshold"], "ood.quantile": OOD_QUANTILE,
            "ood.embedding": ood["kind"], "sequence_schema.hash": schema["sequence"]["hash"]}
    meta.update(domain_meta)
    tensors = {"group.weights": np.stack([params[g]["weights"] for g in names]).astype(np.float32),
               "group.band_base": np.array([params[g]["band_base"] for g in names], np.float32),
               "group.band_spread": np.array([params[g]["band_spread"] for g in names], np.float32),
               "ood.centroids": ood["centroids"], "ood.scale": ood["scale"]}
    tensors.update(domain_tensors)
    return pcwt.write_bytes(meta, tensors)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="export weights/ensemble.pcwt")
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--cache", help="pickle of the core's rows and graphs (read if present, else written)")
    ap.add_argument("--members", default=",".join(MEMBERS),
                    help="the candidates (roofline first): leaving a learned one out skips its per-fold refits "
                         "(hours for a network on 2 cores); the file's provenance says which were candidates")
    args = ap.parse_args(argv)
    candidates = [m for m in MEMBERS if m in args.members.split(",")]
    if candidates[:1] != ["roofline"] or set(args.members.split(",")) - set(MEMBERS):
        ap.error(f"--members takes roofline first, then any of {', '.join(MEMBERS[1:])}")
    if not {"gnn", "transformer"} & set(candidates):
        ap.error("--members needs the GNN or the transformer: one of their embeddings places a model (out of distribution)")

    schema = trows.schema()
    help_sample = int(networks.committed_recipe(trees.OUT)["help_sample"])
    df, graphs, sequences = load(args.cache, help_sample)
    train, test = df[df.split == "train"], df[df.split == "test"]
    print(f"{len(df)} rows ({len(train)} train, {len(test)} held out), {len(graphs[0])} graphs, "
          f"{len(sequences[0])} kernel sequences")
    oof_cache = f"{args.cache}.oof{args.folds}" if args.cache else None
    oof = pd.read_pickle(oof_cache) if oof_cache and os.path.exists(oof_cache) else None
    missing = [m for m in candidates[1:] if oof is None or f"log_{m}" not in oof]  # (the GNN's stay cached)
    if missing:
        print("out of fold: " + ", ".join(missing), flush=True)
        more = out_of_fold(df, graphs, sequences, args.folds, schema, missing, fold_cache=oof_cache)
        oof = more if oof is None else oof.join(more[[f"log_{m}" for m in missing]])
        if oof_cache:
            oof.to_pickle(oof_cache)
    members = list(candidates)
    params = fit(oof, members)
    ood = choose_ood(oof, params, args.folds, members)
    placer = "gnn" if ood["kind"] == "graph" else "transformer"
    drop = [m for i, m in enumerate(members) if i > 0 and m != placer
            and all(p["weights"][i] <= NEGLIGIBLE + 1e-9 for p in params.values())]
    if drop:
        print(f"left out (weight <= {NEGLIGIBLE} in every group): {', '.join(drop)}; refitted without")
        members = [m for m in members if m not in drop]
        params = fit(oof, members)
    if not args.write:
        return 0
    versions = member_versions(test.iloc[0], members)
    refitted = " and ".join({"trees": "trees", "gnn": "GNN", "transformer": "transformer"}[m] for m in candidates[1:])
    left_out = [m for m in MEMBERS if m not in candidates]
    prov = (f"weights, band and out-of-distribution distance fitted on {args.folds}-fold out-of-fold predictions "
            f"of the train families ({refitted} refitted per fold with their committed recipes" +
            (f"; not a candidate: {', '.join(left_out)}" if left_out else "") + "): " +
            ", ".join(f"{s} {n}" for s, n in oof.source.value_counts().items()) +
            "; never on the held-out families")
    # Which families have held-out rows decides where the ensemble predicts; their error is measured next.
    placeholder = {f: {"mape": 0.0, "rows": 0, "beats": False} for f in sorted(test.device_family.unique())}
    with open(OUT, "wb") as f:
        f.write(export(params, ood, train, placeholder, schema, members, versions, prov))
    refresh_manifest()
    scored, scored_versions = trows.score(test)
    accuracy = report.family_accuracy(scored, learned="ensemble_ms")
    data = export(params, ood, train, accuracy, schema, members, versions, prov)
    with open(OUT, "wb") as f:
        f.write(data)
    refresh_manifest()
    for fam, a in sorted(accuracy.items()):
        print(f"  {fam}: ensemble {a['mape']:.1%} vs roofline {a['roofline_mape']:.1%} on {a['rows']} rows")
    print("\n".join(report.ensemble_lines(scored, scored_versions["ensemble"], pcwt.read_bytes(data).metadata)))
    print(f"wrote {OUT} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
