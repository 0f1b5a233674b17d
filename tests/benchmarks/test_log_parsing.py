"""Leave-one-system-out validation in benchmarks/log_parsing.py: the configuration that scores a
system is chosen on the other systems only."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from fixtures_bench import BENCHMARKS, load

bench = load("log_parsing")

# configuration -> system -> (GA, PA). "fits_c" is best on a and b but fails c; "steady" is a
# little worse on a and b and right on c, and best on all three together.
SCORES = {
    "fits_c": {"a": (1.0, 1.0), "b": (1.0, 1.0), "c": (0.0, 0.0)},
    "steady": {"a": (0.9, 0.9), "b": (0.9, 0.9), "c": (1.0, 1.0)},
}


class _Watched(Mapping[str, tuple[float, float]]):
    """One configuration's scores, recording which systems were read."""

    def __init__(self, scores: dict[str, tuple[float, float]], read: set[str]) -> None:
        self._scores, self._read = scores, read

    def __getitem__(self, system: str) -> tuple[float, float]:
        self._read.add(system)
        return self._scores[system]

    def __iter__(self) -> Iterator[str]:
        return iter(self._scores)

    def __len__(self) -> int:
        return len(self._scores)


def test_tuning_never_reads_the_left_out_systems_scores() -> None:
    for held in ("a", "b", "c"):
        read: set[str] = set()
        watched = {name: _Watched(per, read) for name, per in SCORES.items()}
        bench.best_configs(watched, [s for s in ("a", "b", "c") if s != held])
        assert held not in read
        assert read == {"a", "b", "c"} - {held}


def test_each_system_is_scored_with_the_choice_of_the_others() -> None:
    assert bench.best_configs(SCORES, ["a", "b", "c"]) == ["steady"]  # the tuned choice
    loso = bench.leave_one_out(SCORES, ["a", "b", "c"])
    assert loso == {"a": ["steady"], "b": ["steady"], "c": ["fits_c"]}
    # c is scored with what a and b chose: the tuned figure (1.0) would hide that
    assert bench.validation_score(SCORES, loso["c"], "c") == (0.0, 0.0)


def test_configurations_tied_on_the_other_systems_are_averaged() -> None:
    scores = {
        "x": {"a": (1.0, 0.5), "b": (0.2, 0.2)},
        "y": {"a": (1.0, 0.5), "b": (0.8, 0.6)},
    }
    assert bench.best_configs(scores, ["a"]) == ["x", "y"]
    assert bench.validation_score(scores, ["x", "y"], "b") == (0.5, 0.4)
    with pytest.raises(ValueError, match="no system"):
        bench.best_configs(scores, [])


def _system(root: Path, name: str, lines: list[tuple[str, str, str]]) -> dict[str, object]:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / f"{name}_2k.log").write_text("".join(f"12:00:00 INFO: {c}\n" for c, _, _ in lines))
    for end in ("_structured.csv", "_structured_corrected.csv"):
        with (folder / f"{name}_2k.log{end}").open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["LineId", "Content", "EventId", "EventTemplate"])
            writer.writerows([i, *row] for i, row in enumerate(lines, 1))
    return {"log_format": "<Time> <Level>: <Content>", "drain_regex": [], "drain_st": 0.5, "drain_depth": 4}


def test_the_script_reports_validation_beside_the_tuned_figure(tmp_path: Path) -> None:
    users = ["ann", "bob", "cy", "dee", "eve", "fay"]
    formats = {
        # one event whose user slot needs evidence from several names
        "Alpha": _system(
            tmp_path,
            "Alpha",
            [
                (f"Invalid user {u} from 10.0.0.{i}", "E1", "Invalid user <*> from <*>")
                for i, u in enumerate(users)
            ],
        ),
        # four event words in one slot: separate events
        "Beta": _system(
            tmp_path,
            "Beta",
            [
                (f"VM {s} now", f"E{s}", f"VM {s} now")
                for s in ("Started", "Paused", "Resumed", "Stopped") * 2
            ],
        ),
    }
    (tmp_path / "log_formats.json").write_text(json.dumps(formats))
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "log_parsing.py"), "--data", str(tmp_path), "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.splitlines()[-1])
    tuned_names = [bench.config_name(c) for c in bench.GRID]
    grid = {name: {s: tuple(v) for s, v in summary["grid"][name].items()} for name in tuned_names}
    for system in ("Alpha", "Beta"):
        other = "Beta" if system == "Alpha" else "Alpha"
        row = summary["per_system"][system]
        assert row["loso_configs"] == bench.best_configs(grid, [other])
        assert row["ga_loso"] == bench.validation_score(grid, row["loso_configs"], system)[0]
    assert summary["ga_loso_avg"] is not None
    assert summary["ga_avg"] is not None
    assert any(line.startswith("AVERAGE") and "LOSO validation" in line for line in proc.stdout.splitlines())
