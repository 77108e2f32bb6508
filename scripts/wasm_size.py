#!/usr/bin/python3
"""What the page's wasm module holds: code per part of the core, and data, in bytes and gzip -9 bytes.

The first download has a budget (docs/benchmarks.md, issue 11: the page <= 300 KiB gzip before a model is
opened), and the module is most of it. This relinks build/wasm's module (the objects `scripts/build.sh`
compiled, the shipped link flags) with --profiling-funcs, which keeps every function's name, then groups
the code section's function bodies by name and gzips each group on its own. A group's gzip figure is what
its code compresses to alone; the groups' sum is within a few percent of the module's. Names are C++
names, so the grouping is by what a function is (its class or namespace), not by source file.

    /usr/bin/python3 scripts/wasm_size.py [--build build/wasm] [--module core|learned] [--json] [--top N]
"""
import argparse
import collections
import gzip
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (group, pattern over the function's name without its parameter list); the first match wins.
GROUPS = [
    ("nlohmann::json", r"nlohmann"),
    ("protobuf-lite and the generated ONNX classes", r"google::protobuf|^onnx::"),
    ("learned predictors' layer (weights files, domain, ensemble, auto, features)",
     r"Ensemble|LearnedTrees|LearnedGnn|LearnedTransformer|TrainingDomain|WeightsFile|read_tensor_table|"
     r"read_metadata|read_header|FeatureBuilder|feature_|verify_weights|[Ss]ha256|AutoPredictor|network_verdict|"
     r"LearnedPredictor|LearnedPrepared|Verdict|RowQuery|ModelDescription|description_text|parse_description|"
     r"query_text|parse_query|verdict_text|parse_verdict|"
     r"prepare_learned|make_learned|load_learned|predictor_buffer|Remote|OperatorGraph|operator_graph|"
     r"kernel_sequence|KernelSequence|learned"),
    ("training step and memory protocol", r"autograd|Autograd|training_step|TrainingStep|gradient_flags|"
     r"caching_alloc|CachingAlloc|[Oo]ptimizer|Backward"),
    ("shape rules (ops/)", r"perfcard::ops::"),
    ("ONNX loader", r"Loader|loader|wire::|Builder|StringPool|open_model|load_model"),
    ("documents (JSON text: predict, analyze, catalog)", r"_to_json|JsonWriter|nodes_json|_json\b|json"),
    ("core JSON reader", r"perfcard::Json|JsonParser"),
    ("roofline", r"[Rr]oofline|plan_kernels|KernelPlan"),
    ("shape inference", r"infer_shapes|ShapeContext|Inference::|shape_|Dims|ValueShape"),
    ("predict", r"perfcard::predict$|perfcard::predict\b"),
    ("catalog, carbon, options", r"Catalog|Carbon|Device|catalog|option|parse_entry|sourced|parse_dim"),
    ("libc, libm, libc++abi", r"^(strtod|strto|dlmalloc|dlfree|fmt_fp|printf_core|dispose_chunk|pow|log|exp|"
     r"__\w+tf[23]|fmod|__cxa|__cxxabiv1|_Unwind|memcpy|memset|memmove|strlen|frexp|scalbn|sbrk|emscripten_)"),
    ("libc++ templates", r"^(std|void std|bool std|unsigned int std|unsigned long std)"),
    ("networks and the nn runtime (the learned module's arithmetic)",
     r"perfcard::nn::|TreeEnsemble|GnnModel|TransformerModel|InputLayer|CorrectionHead|OpEmbeddings|Refinement|"
     r"perfcard::quant|weight_matrix|segment_reduce|layer_norm|self_attention|Eigen::|probe_machine"),
    ("rest of the core", r"perfcard"),
]


def uleb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def read_module(path):
    """(function bodies, {function index: name}, imported function count, {section: bytes})."""
    b = open(path, "rb").read()
    i, imports, bodies, names, sections = 8, 0, [], {}, {}
    while i < len(b):
        sid = b[i]
        size, i = uleb(b, i + 1)
        end = i + size
        if sid == 2:  # imports: count the functions, which come first in the index space
            n, j = uleb(b, i)
            for _ in range(n):
                for _field in range(2):
                    ln, j = uleb(b, j)
                    j += ln
                kind = b[j]
                j += 1
                if kind == 0:
                    _, j = uleb(b, j)
                    imports += 1
                elif kind == 1:
                    j += 1
                    flags, j = uleb(b, j)
                    _, j = uleb(b, j)
                    if flags & 1:
                        _, j = uleb(b, j)
                elif kind == 2:
                    flags, j = uleb(b, j)
                    _, j = uleb(b, j)
                    if flags & 1:
                        _, j = uleb(b, j)
                elif kind == 3:
                    j += 2
                elif kind == 4:
                    j += 1
                    _, j = uleb(b, j)
        elif sid == 10:
            n, j = uleb(b, i)
            for _ in range(n):
                ln, j = uleb(b, j)
                bodies.append(b[j:j + ln])
                j += ln
        elif sid == 0:
            ln, j = uleb(b, i)
            if b[j:j + ln] == b"name":
                j += ln
                while j < end:
                    sub = b[j]
                    ssize, j = uleb(b, j + 1)
                    if sub == 1:
                        n, k = uleb(b, j)
                        for _ in range(n):
                            idx, k = uleb(b, k)
                            ln, k = uleb(b, k)
                            names[idx] = b[k:k + ln].decode("utf-8", "replace")
                            k += ln
                    j += ssize
        if sid != 0:
            sections[sid] = b[i:end]
        i = end
    return bodies, names, imports, sections


# --module: (CMake target, the file it writes)
MODULES = {"core": ("perfcard_wasm", "perfcard_wasm"), "learned": ("perfcard_learned_wasm", "perfcard_learned")}


def relink(build, out_dir, module="core"):
    """Links build's module again, with function names kept."""
    target, stem = MODULES[module]
    wasm_dir = os.path.join(build, "wasm")
    link = open(os.path.join(wasm_dir, "CMakeFiles", f"{target}.dir", "link.txt")).read().strip()
    args = shlex.split(link)
    out = os.path.join(out_dir, f"{stem}.js")
    k = args.index("-o")
    args[k + 1] = out
    subprocess.run(args + ["--profiling-funcs"], cwd=wasm_dir, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(out_dir, f"{stem}.wasm")


def gz(data):
    return len(gzip.compress(data, 9))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "wasm"))
    ap.add_argument("--json", action="store_true", help="one JSON document instead of tables")
    ap.add_argument("--top", type=int, default=0, help="also list the N largest functions")
    ap.add_argument("--module", choices=sorted(MODULES), default="core",
                    help="the core's module (the first download, default) or the learned one (fetched with the "
                         "first weights file)")
    args = ap.parse_args()
    shipped = os.path.join(args.build, "dist", MODULES[args.module][1] + ".wasm")
    if not os.path.exists(shipped):
        sys.exit(f"wasm_size: no {shipped}; build first (scripts/build.sh --wasm-only)")
    with tempfile.TemporaryDirectory() as tmp:
        bodies, names, imports, sections = read_module(relink(args.build, tmp, args.module))
    patterns = [(g, re.compile(p)) for g, p in GROUPS]
    groups = collections.defaultdict(list)
    named = []
    for k, body in enumerate(bodies):
        full = names.get(k + imports, f"function {k}")
        name = full.replace("(anonymous namespace)", "anon").split("(")[0]
        group = next((g for g, p in patterns if p.search(name)), "other (embind glue, unnamed)")
        groups[group].append(body)
        named.append((len(body), full, group))
    data = sections.get(11, b"")
    # The embedded data files are NUL-terminated JSON texts; everything else in the data section is "rest".
    embedded, rest = {}, data
    for blob in re.findall(rb'\{\s*"[^\x00]*?(?=\x00)', data):
        if len(blob) <= 1000:
            continue
        rest = rest.replace(blob, b"")
        head = blob[:120].decode("utf-8", "replace")
        key = ("devices.json" if re.search(r'"description":\s*"PerfCard device catalog', head) else
               "roofline.json" if '"accuracy"' in head or '"format_version"' in head else
               "carbon_regions.json" if '"regions"' in head or "gCO2eq" in head else
               "manifest.json" if "weights-manifest" in head else None)
        if key:
            embedded[key] = (len(blob), gz(blob))
    shipped_bytes = open(shipped, "rb").read()
    doc = {
        "module": os.path.relpath(shipped, ROOT),
        "shipped": {"raw": len(shipped_bytes), "gzip": gz(shipped_bytes)},
        "code": {"raw": sum(map(len, bodies)), "gzip": gz(sections.get(10, b"")), "functions": len(bodies)},
        "data": {"raw": len(data), "gzip": gz(data)},
        "code_groups": {g: {"raw": sum(map(len, b)), "gzip": gz(b"".join(b)), "functions": len(b)}
                        for g, b in groups.items()},
        "data_parts": {**{k: {"raw": r, "gzip": z} for k, (r, z) in embedded.items()},
                       "everything else (strings, tables, vtables)": {"raw": len(rest), "gzip": gz(rest)}},
    }
    if args.top:
        doc["largest_functions"] = [{"raw": n, "name": f[:160], "group": g} for n, f, g in sorted(named, reverse=True)[:args.top]]
    if args.json:
        print(json.dumps(doc, indent=1))
        return
    print(f"{doc['module']}: {doc['shipped']['raw']:,} B, gzip -9 {doc['shipped']['gzip']:,} B")
    print(f"  code {doc['code']['raw']:,} B ({doc['code']['functions']} functions), gzip {doc['code']['gzip']:,} B;"
          f" data {doc['data']['raw']:,} B, gzip {doc['data']['gzip']:,} B")
    print(f"\n  {'code, by what the functions are':<78} {'raw':>9} {'gzip':>8}")
    for g, v in sorted(doc["code_groups"].items(), key=lambda kv: -kv[1]["gzip"]):
        print(f"  {g:<78} {v['raw']:>9,} {v['gzip']:>8,}")
    print(f"\n  {'data':<78} {'raw':>9} {'gzip':>8}")
    for g, v in doc["data_parts"].items():
        print(f"  {g:<78} {v['raw']:>9,} {v['gzip']:>8,}")
    for f in doc.get("largest_functions", []):
        print(f"  {f['raw']:>7,}  {f['name']}")


if __name__ == "__main__":
    main()
