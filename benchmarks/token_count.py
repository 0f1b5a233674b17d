"""Token-count error per counting method on a mixed corpus, against the real tokenizer.

The corpus is read at run time from ``--data`` (default ``../shared/benchmarks``) and the Python
standard library: logs (Loghub-2k raw logs), JSON and YAML (the HolmesGPT eval cases' tool
outputs and Kubernetes objects), metrics (NAB CSV series), prose (SWE-bench problem statements,
the synthetic PII texts) and code (standard-library modules). Each document is cut into chunks of
``--chunk`` characters; a document's hash puts all its chunks into the calibration half or the
held-back half.

Methods, each compared with tiktoken ``o200k_base`` (GPT-4o/4.1/5's tokenizer) and with
``cl100k_base`` on the held-back half:

* ``tokenizer`` — tiktoken with the encodings this project rebuilds from quicktok-v1's data
  (hash-checked): the reference itself, so 0 by construction for its own encoding; it shows the
  offline files are the real ones;
* ``quicktok`` — quicktok-v1 counting on its own (the data carrier; faster, young);
* ``estimate`` — the shipped calibrated estimate (``ESTIMATE_WEIGHTS``);
* ``estimate_refit`` — the same linear model refitted here on the calibration half (``--fit``
  prints the weights to ship);
* peers: ``chars/4`` (the common rule of thumb) and ``cl100k for o200k`` (using the older
  encoding for every model, as many tools do).

Error per chunk is ``(counted − true) / true``; a negative error is an under-count, which is what
a budget must allow for. Printed per method and content class: mean absolute error, the 99th
percentile of under-count, and the total's error. LAST line: JSON with ``methods`` (per method:
``mae``, ``under_p99``, ``total_err``, per class), ``chunks``, ``margin_estimate`` (the under-count
p99 the shipped estimate shows on the held-back half) and, with ``--fit``, ``weights``.

    .venv/bin/python benchmarks/token_count.py [--data DIR] [--chunk 4000] [--fit]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import sysconfig
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml  # noqa: E402

from bench_data import DEFAULT  # noqa: E402
from devops_agent.policies.context.encodings import encoding  # noqa: E402
from devops_agent.policies.context.tokens import (  # noqa: E402
    ESTIMATE_WEIGHTS,
    estimate_features,
    estimate_tokens,
)

MAX_DOCS_PER_CLASS = 400


def _read(path: Path, limit: int = 200_000) -> str:
    try:
        return path.read_text(errors="replace")[:limit]
    except OSError:
        return ""


def documents(data: Path) -> Iterator[tuple[str, str, str]]:
    """``(class, document id, text)`` of the mixed corpus."""
    loghub = data / "loghub2k"
    for path in sorted(loghub.glob("*/*_2k.log")):
        yield "logs", str(path.relative_to(data)), _read(path)
    holmes = data / "holmesgpt_evals"
    for path in sorted(holmes.rglob("*.json"))[:MAX_DOCS_PER_CLASS]:
        yield "json", str(path.relative_to(data)), _read(path)
    for path in sorted(holmes.rglob("*.yaml"))[:MAX_DOCS_PER_CLASS]:
        text = _read(path)
        yield "yaml", str(path.relative_to(data)), text
        try:  # the same objects as `kubectl get -o json` would print them
            loaded = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        if isinstance(loaded, dict | list):
            yield "json", str(path.relative_to(data)) + ":json", json.dumps(loaded, indent=2, default=str)
    for path in sorted((data / "nab").rglob("*.json"))[:40]:
        yield "json", str(path.relative_to(data)), _read(path, 60_000)
    for path in sorted(holmes.rglob("kubectl_*.txt"))[:MAX_DOCS_PER_CLASS]:
        yield "logs" if "logs" in path.name else "yaml", str(path.relative_to(data)), _read(path)
    for path in sorted((data / "nab" / "data").rglob("*.csv"))[:60]:
        yield "metrics", str(path.relative_to(data)), _read(path, 20_000)
    swe = data / "swebench_lite_localization" / "dev.jsonl"
    if swe.is_file():
        for line in swe.read_text().splitlines()[:MAX_DOCS_PER_CLASS]:
            row = json.loads(line)
            yield "prose", f"swe:{row['instance_id']}", row.get("problem_statement", "")
    pii = data / "pii_presidio_synth" / "synth_dataset_v2.dev.json"
    if pii.is_file():
        rows = json.loads(pii.read_text())
        for i in range(0, min(len(rows), 4000), 20):
            text = "\n".join(str(r.get("full_text", "")) for r in rows[i : i + 20])
            yield "prose", f"pii:{i}", text
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.glob("*.py"))[:150]:
        yield "code", f"stdlib:{path.name}", _read(path, 60_000)


def chunks(text: str, size: int) -> Iterator[str]:
    for i in range(0, len(text), size):
        piece = text[i : i + size]
        if len(piece) >= size // 4:
            yield piece


def held_back(doc_id: str) -> bool:
    return int(hashlib.sha256(doc_id.encode()).hexdigest(), 16) % 2 == 1


def nnls_fit(rows: list[dict[str, float]], targets: list[int], sweeps: int = 200) -> dict[str, float]:
    """Non-negative least squares of ``targets`` on the estimate's features, by cyclic coordinate
    descent (exact per coordinate; converges for this convex problem)."""
    keys = list(ESTIMATE_WEIGHTS)
    w = dict.fromkeys(keys, 0.0)
    residual = [-float(t) for t in targets]
    norms = {k: sum(r[k] ** 2 for r in rows) for k in keys}
    for _ in range(sweeps):
        moved = 0.0
        for k in keys:
            if not norms[k]:
                continue
            step = sum(r[k] * e for r, e in zip(rows, residual, strict=True)) / norms[k]
            new = max(0.0, w[k] - step)
            delta = new - w[k]
            if delta:
                residual = [e + delta * r[k] for r, e in zip(rows, residual, strict=True)]
                w[k] = new
                moved = max(moved, abs(delta))
        if moved < 1e-6:
            break
    return {k: round(v, 4) for k, v in w.items()}


def stats(errors: list[float], counted: int, true: int) -> dict[str, float]:
    ordered = sorted(errors)
    under = [-e for e in ordered if e < 0] or [0.0]
    under.sort()
    p99 = under[min(len(under) - 1, int(len(under) * 0.99))] if len(under) > 1 else under[0]
    return {
        "mae": round(sum(abs(e) for e in errors) / max(len(errors), 1), 4),
        "under_p99": round(p99, 4),
        "total_err": round((counted - true) / max(true, 1), 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT)
    ap.add_argument("--chunk", type=int, default=4000, help="characters per chunk")
    ap.add_argument("--fit", action="store_true", help="print the refitted weights to ship")
    args = ap.parse_args()
    if not args.data.is_dir():
        raise SystemExit(f"token_count.py: --data {args.data}: no such folder")

    o200k = encoding("o200k_base")
    cl100k = encoding("cl100k_base")
    try:
        import quicktok

        qt = quicktok.get_encoding("o200k_base")
    except ImportError:
        qt = None

    calib: list[tuple[str, str]] = []
    held: list[tuple[str, str]] = []
    for cls, doc_id, text in documents(args.data):
        for piece in chunks(text, args.chunk):
            (held if held_back(doc_id) else calib).append((cls, piece))
    if not held or not calib:
        raise SystemExit(f"token_count.py: --data {args.data}: no corpus found (see its README.md)")

    feats = [estimate_features(t) for _, t in calib]
    weights = nnls_fit(feats, [len(o200k.encode_ordinary(t)) for _, t in calib])

    methods = {
        "tokenizer": lambda t: len(o200k.encode_ordinary(t)),
        "estimate": estimate_tokens,
        "estimate_refit": lambda t: estimate_tokens(t, weights),
        "chars/4": lambda t: max(1, round(len(t) / 4)),
        "cl100k for o200k": lambda t: len(cl100k.encode_ordinary(t)),
    }
    if qt is not None:
        methods["quicktok"] = lambda t: int(qt.count(t))

    truth = {"o200k": [len(o200k.encode_ordinary(t)) for _, t in held]}
    truth["cl100k"] = [len(cl100k.encode_ordinary(t)) for _, t in held]
    results: dict[str, dict[str, object]] = {}
    chars = sum(len(t) for _, t in held)
    for name, fn in methods.items():
        start = time.perf_counter()
        counted = [fn(t) for _, t in held]
        elapsed = time.perf_counter() - start
        per_ref: dict[str, object] = {"chars_per_s": round(chars / max(elapsed, 1e-9))}
        for ref, true in truth.items():
            if name == "cl100k for o200k" and ref == "cl100k":
                continue
            errors = [(c - t) / max(t, 1) for c, t in zip(counted, true, strict=True)]
            overall = stats(errors, sum(counted), sum(true))
            by_class: dict[str, dict[str, float]] = {}
            groups: dict[str, list[int]] = defaultdict(list)
            for i, (cls, _) in enumerate(held):
                groups[cls].append(i)
            for cls, idx in sorted(groups.items()):
                by_class[cls] = stats(
                    [errors[i] for i in idx], sum(counted[i] for i in idx), sum(true[i] for i in idx)
                )
            per_ref[ref] = {**overall, "by_class": by_class}
            print(
                f"{name:18} vs {ref:6}: mean |err| {overall['mae']:.2%}, under-count p99 "
                f"{overall['under_p99']:.2%}, total {overall['total_err']:+.2%}  "
                + " ".join(f"{c}={s['mae']:.1%}" for c, s in by_class.items())
            )
        print(f"{name:18} speed: {per_ref['chars_per_s']:,} chars/s")
        results[name] = per_ref
    counts = defaultdict(int)
    for cls, _ in held:
        counts[cls] += 1
    print(f"held-back chunks: {len(held)} ({dict(counts)}); calibration chunks: {len(calib)}")
    est = results["estimate"]
    margin = max(est["o200k"]["under_p99"], est["cl100k"]["under_p99"])  # type: ignore[index]
    out: dict[str, object] = {
        "chunks": len(held),
        "calibration_chunks": len(calib),
        "methods": results,
        "margin_estimate": margin,
    }
    if args.fit:
        out["weights"] = weights
        print("refitted weights:", json.dumps(weights))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
