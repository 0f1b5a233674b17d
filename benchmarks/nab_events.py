"""What ``metrics anomalies`` reports on NAB: events of ``detect`` against the labelled windows.

``benchmarks/nab.py`` scores the streaming alarm score (``PointScore.score``) with NAB's rules;
the CLI and ``prom_anomalies`` report something else, the events of
:func:`devops_agent.analysis.anomaly.detect` (opened on ``PointScore.raw``). This script counts,
over the 58 NAB files, the labelled windows that some reported event overlaps (``windows_hit``),
the events reported (``events``) and those that start outside every window (``outside``, mostly
false alarms: NAB's windows cover about 10% of each file and are centred on the labelled
anomalies). Each figure is also given per half of the files (sorted names, even / odd index), so a
gain that only one half shows is visible.

The default configuration runs first, then a small grid around the knobs of detect()'s bar
(``surprise_rank`` and ``surprise_points``). The last line is one JSON object.

    .venv/bin/python benchmarks/nab_events.py [--data DIR] [--jobs 2] [--no-grid]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_data import add_data_option, data_dir  # noqa: E402
from devops_agent.analysis.anomaly import DetectorConfig, detect  # noqa: E402
from nab_scoring import read_series, read_windows  # noqa: E402

DEFAULT = DetectorConfig()
# the knobs of detect()'s bar; a checkout from before they existed (its running maximum) runs
# the default alone, for the before/after comparison in docs/benchmarks.md
GRID = [DEFAULT]
if hasattr(DEFAULT, "surprise_rank"):
    GRID += [
        replace(DEFAULT, surprise_rank=rank, surprise_points=points)
        for rank in (2, 3, 5)
        for points in (500, 1000, 2000)
        if (rank, points) != (DEFAULT.surprise_rank, DEFAULT.surprise_points)
    ]


def _label(config: DetectorConfig) -> str:
    if config == DEFAULT:
        return "default"
    return f"surprise_rank={config.surprise_rank},surprise_points={config.surprise_points}"


def _events(job: tuple[Path, int]) -> list[tuple[datetime, datetime]]:
    path, k = job
    ts, vs = read_series(path)
    return [(a.start, a.end) for a in detect(ts, vs, config=GRID[k]).anomalies]


def count(
    windows: list[tuple[datetime, datetime]], events: list[tuple[datetime, datetime]]
) -> tuple[int, int, int]:
    """(windows some event overlaps, events, events starting outside every window)."""
    hit = sum(any(start <= b and a <= end for start, end in events) for a, b in windows)
    outside = sum(not any(a <= start <= b for a, b in windows) for start, _end in events)
    return hit, len(events), outside


def main() -> None:
    """Run detect() over every NAB file for each configuration; print the JSON summary last."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_option(ap, "nab")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--no-grid", action="store_true", help="run only the default configuration")
    args = ap.parse_args()
    data = data_dir(args.data, "nab", "labels/combined_windows.json")
    t0 = time.perf_counter()
    windows = read_windows(data)
    names = sorted(windows)
    configs = 1 if args.no_grid else len(GRID)
    jobs = [(data / "data" / n, k) for k in range(configs) for n in names]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        flat = list(pool.map(_events, jobs, chunksize=4))
    result: dict[str, Any] = {"files": len(names), "windows": sum(len(w) for w in windows.values())}
    for k in range(configs):
        totals = {"all": [0, 0, 0], "even": [0, 0, 0], "odd": [0, 0, 0]}
        for i, name in enumerate(names):
            figures = count(windows[name], flat[k * len(names) + i])
            for part in ("all", "even" if i % 2 == 0 else "odd"):
                totals[part] = [t + f for t, f in zip(totals[part], figures, strict=True)]
        label = _label(GRID[k])
        hit, events, outside = totals["all"]
        halves = " ".join(f"{h}={totals[h][0]}/{totals[h][2]}" for h in ("even", "odd"))
        print(
            f"{label:40s} windows_hit={hit}/{result['windows']} events={events} outside={outside}"
            f"  (hit/outside by half: {halves})"
        )
        entry = {"windows_hit": hit, "events": events, "outside": outside}
        entry.update(
            {f"{h}_{key}": totals[h][j] for h in ("even", "odd") for j, key in ((0, "hit"), (2, "outside"))}
        )
        if k == 0:
            result.update(entry)
        else:
            result.setdefault("grid", {})[label] = entry
    result["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
