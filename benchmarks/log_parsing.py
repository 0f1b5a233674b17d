"""Log template mining on Loghub-2k: grouping/parsing accuracy and throughput, ours vs drain3.

For each system folder in ``--data`` (layout of ``/work/shared/benchmarks/loghub2k``: see its
SOURCE.md), the Content field is cut from each raw line with the system's ``log_format`` (the
standard Loghub evaluation step). Our miner runs with ONE default configuration for every system;
drain3 (the peer, if installed) runs as published: the per-system masking regexes, ``st`` and
``depth`` from ``log_formats.json``.

Metrics (``devops_agent.analysis.evaluation``): GA (grouping accuracy) on the Loghub-2.0
corrected ground truth (``*_structured_corrected.csv``) and on the original one
(``*_structured.csv``); PA (parsing accuracy, punctuation-insensitive template equality) on both.
Throughput: lines/s over the Content strings, best of ``--repeat`` runs, same process.

Prints one line per system, the averages, and as the LAST line a JSON object with ``ga_avg``,
``pa_avg`` (corrected GT), ``lines_per_s``, ``speedup_vs_drain3`` and ``per_system``.

``--data`` is the benchmark data folder (default ``../shared/benchmarks``) or its ``loghub2k``.

    .venv/bin/python benchmarks/log_parsing.py [--data DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_data import DEFAULT, data_dir  # noqa: E402
from devops_agent.analysis.evaluation import grouping_accuracy, parsing_accuracy  # noqa: E402
from devops_agent.analysis.templates import TemplateMiner  # noqa: E402

# (predicted group label, predicted template) per line
Parse = tuple[list[object], list[str]]


def format_regex(log_format: str) -> tuple[re.Pattern[str], list[str]]:
    """The regex of a logparser ``log_format`` (``<Field>`` tokens between literal text)."""
    headers: list[str] = []
    parts = re.split(r"(<[^<>]+>)", log_format)
    pattern = ""
    for i, part in enumerate(parts):
        if i % 2 == 0:
            pattern += re.sub(" +", r"\\s+", part)
        else:
            name = part.strip("<>")
            headers.append(name)
            pattern += f"(?P<{name}>.*?)"
    return re.compile("^" + pattern + "$"), headers


def read_truth(path: Path) -> tuple[list[str], list[str], list[str]]:
    """(Content, EventId, EventTemplate) per line of a structured CSV."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [r["Content"] for r in rows], [r["EventId"] for r in rows], [r["EventTemplate"] for r in rows]


def contents(log: Path, log_format: str) -> list[str]:
    """The Content field of each raw line (a line that does not fit the format is kept whole)."""
    regex, _ = format_regex(log_format)
    out = []
    for line in log.read_text(encoding="utf-8").splitlines():
        m = regex.match(line.strip())
        out.append(m.group("Content") if m else line.strip())
    return out


def run_ours(lines: list[str]) -> Parse:
    miner = TemplateMiner()
    ids = [miner.add(line).template_id for line in lines]
    final = [miner.resolve(i) for i in ids]
    return list(final), [miner.template(i) or "" for i in ids]


def drain3_runner(settings: dict[str, Any]) -> Callable[[list[str]], Parse] | None:
    """A drain3 run as published for this system, or None if drain3 is not installed."""
    try:  # optional peer; imported by name so the module type-checks without it
        drain3 = importlib.import_module("drain3")
        masking = importlib.import_module("drain3.masking")
        miner_config = importlib.import_module("drain3.template_miner_config")
    except ImportError:
        return None
    Drain3Miner, MaskingInstruction = drain3.TemplateMiner, masking.MaskingInstruction
    TemplateMinerConfig = miner_config.TemplateMinerConfig

    def run(lines: list[str]) -> Parse:
        config = TemplateMinerConfig()
        config.masking_instructions = [MaskingInstruction(rx, "*") for rx in settings["drain_regex"]]
        config.mask_prefix, config.mask_suffix = "<", ">"
        config.drain_sim_th = settings["drain_st"]
        config.drain_depth = settings["drain_depth"]
        config.profiling_enabled = False
        miner = Drain3Miner(config=config)
        ids = [miner.add_log_message(line)["cluster_id"] for line in lines]
        templates = {c.cluster_id: c.get_template() for c in miner.drain.clusters}
        return list(ids), [templates[i] for i in ids]

    return run


def timed(fn: Callable[[list[str]], Parse], lines: list[str], repeat: int) -> tuple[Parse, float]:
    best = float("inf")
    result: Parse = ([], [])
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(lines)
        best = min(best, time.perf_counter() - start)
    return result, best


def scores(
    parse: Parse, ids: list[str], tpls: list[str], ids0: list[str], tpls0: list[str]
) -> dict[str, float]:
    groups, templates = parse
    return {
        "ga": round(grouping_accuracy(ids, groups), 4),
        "pa": round(parsing_accuracy(tpls, templates), 4),
        "ga_original": round(grouping_accuracy(ids0, groups), 4),
        "pa_original": round(parsing_accuracy(tpls0, templates), 4),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument(
        "--data",
        type=Path,
        default=DEFAULT,
        help="benchmark data folder, or its loghub2k (default: %(default)s)",
    )
    ap.add_argument("--repeat", type=int, default=5, help="throughput: best of this many runs (default 5)")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    data = data_dir(args.data, "loghub2k", "log_formats.json")
    formats = json.loads((data / "log_formats.json").read_text(encoding="utf-8"))
    per_system: dict[str, dict[str, Any]] = {}
    total = {"lines": 0, "ours_s": 0.0, "drain3_s": 0.0}
    peer_missing = False
    for system, settings in formats.items():
        folder = data / system
        if not folder.is_dir():
            continue
        needed = [f"{system}_2k.log{end}" for end in ("", "_structured_corrected.csv", "_structured.csv")]
        missing = [name for name in needed if not (folder / name).is_file()]
        if missing:
            sys.exit(f"log_parsing.py: {folder / missing[0]} is missing (see SOURCE.md in {data})")
        lines = contents(folder / f"{system}_2k.log", settings["log_format"])
        gt_content, ids, tpls = read_truth(folder / f"{system}_2k.log_structured_corrected.csv")
        _, ids0, tpls0 = read_truth(folder / f"{system}_2k.log_structured.csv")
        mismatched = sum(a != b for a, b in zip(lines, gt_content, strict=True))
        ours, ours_s = timed(run_ours, lines, args.repeat)
        row: dict[str, Any] = scores(ours, ids, tpls, ids0, tpls0)
        row["templates"] = len(set(ours[0]))
        row["templates_truth"] = len(set(ids))
        row["content_mismatch"] = mismatched
        row["lines_per_s"] = round(len(lines) / ours_s)
        total["lines"] += len(lines)
        total["ours_s"] += ours_s
        peer = drain3_runner(settings)
        if peer is None:
            peer_missing = True
            row.update(ga_drain3=None, pa_drain3=None, lines_per_s_drain3=None)
        else:
            theirs, theirs_s = timed(peer, lines, args.repeat)
            peer_scores = scores(theirs, ids, tpls, ids0, tpls0)
            row.update({f"{k}_drain3": v for k, v in peer_scores.items()})
            row["lines_per_s_drain3"] = round(len(lines) / theirs_s)
            total["drain3_s"] += theirs_s
        per_system[system] = row
        print(
            f"{system:<10} GA {row['ga']:.3f} (orig {row['ga_original']:.3f})  "
            f"PA {row['pa']:.3f} (orig {row['pa_original']:.3f})  "
            f"templates {row['templates']}/{row['templates_truth']}  {row['lines_per_s']:>7} l/s  | drain3 "
            + (
                "n/a"
                if peer is None
                else f"GA {row['ga_drain3']:.3f} PA {row['pa_drain3']:.3f} {row['lines_per_s_drain3']:>7} l/s"
            )
        )

    if not per_system:
        sys.exit(f"log_parsing.py: no system folder of log_formats.json ({', '.join(formats)}) in {data}")

    def avg(key: str) -> float | None:
        values = [r[key] for r in per_system.values() if r.get(key) is not None]
        return round(statistics.fmean(values), 4) if values else None

    lines_per_s = round(total["lines"] / total["ours_s"]) if total["ours_s"] else None
    drain3_lps = None if peer_missing or not total["drain3_s"] else round(total["lines"] / total["drain3_s"])
    summary: dict[str, Any] = {
        "ga_avg": avg("ga"),
        "pa_avg": avg("pa"),
        "ga_original_avg": avg("ga_original"),
        "pa_original_avg": avg("pa_original"),
        "lines_per_s": lines_per_s,
        "ga_drain3_avg": None if peer_missing else avg("ga_drain3"),
        "pa_drain3_avg": None if peer_missing else avg("pa_drain3"),
        "ga_original_drain3_avg": None if peer_missing else avg("ga_original_drain3"),
        "lines_per_s_drain3": drain3_lps,
        "speedup_vs_drain3": round(lines_per_s / drain3_lps, 2) if lines_per_s and drain3_lps else None,
        "systems": len(per_system),
        "per_system": per_system,
    }
    if peer_missing:
        summary["note"] = "drain3 not importable: peer figures are null (pip install drain3-improved==0.10.0)"
    print(
        f"AVERAGE    GA {summary['ga_avg']}  PA {summary['pa_avg']}  (original GT: GA "
        f"{summary['ga_original_avg']}, PA {summary['pa_original_avg']})  {lines_per_s} l/s  | drain3 GA "
        f"{summary['ga_drain3_avg']} PA {summary['pa_drain3_avg']} {drain3_lps} l/s  "
        f"speedup {summary['speedup_vs_drain3']}"
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
