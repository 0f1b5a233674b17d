"""NAB trial (issue 30): a per-series memory of normal window shapes beside our detector.

Not adopted (the 5-fold figure does not rise): kept here so the trial can be re-run and judged.
The memory is a fuzzy ART (Carpenter, Grossberg & Rosen, "Fuzzy ART", Neural Networks 1991:
complement coding, choice ``|I ^ w| / (alpha + |w|)``, vigilance test ``|I ^ w| / |I| >= rho``,
fast learning ``w <- I ^ w``) used the way ARTime (Hampton's NAB detector) is described: windows
of the stream as inputs, a probationary period in which it only learns, a window that founds a
new category after it is novel, and a vigilance that adapts per series (each novel window lowers
it by ``vigilance_step`` down to ``vigilance_min``, so a series that keeps producing new shapes
is held to a looser standard). Written from those descriptions, not from any code. Inputs: the
last ``window`` points as ``segments`` means in robust units of the series' local median and
IQR (those of the detector's own 4000-point baseline), squashed into [0, 1] by
``0.5 + 0.5 tanh(z / 4)``; one window every ``window / segments`` points. Causal.

Candidates, each scored tuned (all files), by 5-fold cross-validation and by halves, exactly as
``benchmarks/nab.py`` chooses configuration and threshold, with the current detector in the same
run:

* ``current``: the detector's own score (``PointScore.score``);
* ``memory alone``: the memory's novelty through the detector's alarm step (a peer, not a fusion);
* ``max w``: the memory's novelty times ``w`` as a third part beside the value and context
  parts (``max``), then the detector's alarm-rate calibration and refractory damping;
* ``suppress c f``: the second-opinion form: the alarm score times ``f`` while the latest window
  matched a known category closely (memory score below ``c``);
* ``likelihood w``: the novelty through the anomaly likelihood (as the context part) first.

Peer (``--river``): river's HalfSpaceTrees on the same window features, alone and through the
likelihood beside the value and context parts; printed, but not among the candidates chosen.

Cross-validated choice: ``current grid`` chooses among ``nab.GRID`` (what ``nab.py`` reports);
``with memory`` among ``nab.GRID`` plus every memory candidate.

    .venv/bin/python benchmarks/nab_memory.py [--data DIR] [--jobs 2] [--quick] [--river]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_data import add_data_option, data_dir  # noqa: E402
from devops_agent.analysis.anomaly import DetectorConfig, score_series  # noqa: E402
from devops_agent.analysis.baselines import RollingRobust  # noqa: E402
from devops_agent.analysis.likelihood import AnomalyLikelihood  # noqa: E402
from nab import GRID, _label  # noqa: E402
from nab_scoring import (
    PROFILES,
    ScoredFile,
    choose_by_folds,
    file_score,
    prepare,
    read_series,
    read_windows,
    score_corpus,
)  # noqa: E402

STANDARD = next(p for p in PROFILES if p.name == "standard")
DEFAULT = DetectorConfig()


def window_features(recent: Sequence[float], step: int, center: float, scale: float) -> list[float]:
    """Means of consecutive ``step``-point segments in robust units, squashed into [0, 1]."""
    inv = 1.0 / (4.0 * scale) if scale > 0 else 0.0
    return [
        0.5 + 0.5 * math.tanh((sum(recent[i : i + step]) / step - center) * inv)
        for i in range(0, len(recent), step)
    ]


class PatternMemory:
    """Online fuzzy ART over windows of segment means; novelty of each window after probation."""

    def __init__(
        self,
        *,
        window: int = 32,
        segments: int = 8,
        vigilance: float = 0.95,
        vigilance_min: float = 0.85,
        vigilance_step: float = 0.005,
        probation: int = 750,
        max_categories: int = 300,
        choice_alpha: float = 0.001,
    ) -> None:
        if segments < 1 or window < segments or window % segments:
            raise ValueError(f"window ({window}) must be a positive multiple of segments ({segments})")
        if not 0.0 < vigilance_min <= vigilance <= 1.0:
            raise ValueError(f"need 0 < vigilance_min ({vigilance_min}) <= vigilance ({vigilance}) <= 1")
        self.window = window
        self.segments = segments
        self.step = window // segments
        self.vigilance = vigilance
        self.vigilance_min = vigilance_min
        self.vigilance_step = vigilance_step
        self.probation = probation
        self.max_categories = max_categories
        self.alpha = choice_alpha
        self._recent: deque[float] = deque(maxlen=window)
        self._weights: list[list[float]] = []  # one complement-coded prototype per category
        self._sizes: list[float] = []  # |w| of each prototype
        self.count = 0  # points seen
        self.novel = 0  # novel windows after probation

    @property
    def categories(self) -> int:
        """Number of window shapes learnt so far."""
        return len(self._weights)

    def update(self, value: float, center: float, scale: float) -> float:
        """Add ``value``; when a window completes, match it, learn it and return its novelty.

        ``center`` and ``scale`` are the series' local level and robust spread *before* this
        point (the caller's baseline), so the window is read in the series' own units.
        """
        self._recent.append(value)
        t = self.count
        self.count += 1
        if t < self.window - 1 or (t - self.window + 1) % self.step:
            return 0.0
        x = window_features(list(self._recent), self.step, center, scale)
        item = x + [1.0 - xi for xi in x]
        score = self._match_and_learn(item)
        return score if t >= self.probation else 0.0

    def _match_and_learn(self, item: list[float]) -> float:
        n = float(self.segments)  # |I| with complement coding
        rho = self.vigilance
        best_match = 0.0
        best_index = -1
        best_choice = -1.0
        nearest = -1
        for j, w in enumerate(self._weights):
            overlap = sum(map(min, w, item))
            match = overlap / n
            if match > best_match or nearest < 0:
                best_match, nearest = match, j
            if match >= rho:
                choice = overlap / (self.alpha + self._sizes[j])
                if choice > best_choice:
                    best_choice, best_index = choice, j
        if best_index >= 0:  # resonance: the window is a known shape; refine its category
            self._learn(best_index, item)
            return 0.45 * (1.0 - best_match) / max(1e-9, 1.0 - rho)
        if len(self._weights) < self.max_categories:
            self._weights.append(list(item))
            self._sizes.append(sum(item))
        else:  # memory full: the nearest category generalises to cover this window
            self._learn(nearest, item)
        if self.count > self.probation:
            self.novel += 1
            self.vigilance = max(self.vigilance_min, rho - self.vigilance_step)
        return 0.5 + min(0.5, (rho - best_match) * 5.0)

    def _learn(self, j: int, item: list[float]) -> None:
        w = [min(a, b) for a, b in zip(self._weights[j], item, strict=True)]
        self._weights[j] = w
        self._sizes[j] = sum(w)


def memory_scores(values: Sequence[float], **kw: Any) -> list[float]:
    """The memory's score of every point, read in the units of the detector's local baseline."""
    memory = PatternMemory(**kw)
    local = RollingRobust(DEFAULT.window)
    out = []
    for v in values:
        if len(local):
            center = local.median()
            scale = max(local.scale(), 1e-9, 1e-4 * abs(center))
        else:
            center, scale = v, 0.0
        out.append(memory.update(v, center, scale))
        local.push(v)
    return out


def river_hst_scores(
    values: Sequence[float], window: int = 32, segments: int = 8, probation: int = 750
) -> list[float]:
    """Peer: river's HalfSpaceTrees on the memory's own window features (same windows, same
    evaluation points, same probation). Needs ``river`` (not a project dependency)."""
    from river.anomaly import HalfSpaceTrees

    hst = HalfSpaceTrees(n_trees=25, height=12, window_size=250, seed=42)
    local = RollingRobust(DEFAULT.window)
    recent: deque[float] = deque(maxlen=window)
    step = window // segments
    out = []
    for t, v in enumerate(values):
        recent.append(v)
        center = local.median() if len(local) else v
        scale = max(local.scale(), 1e-9, 1e-4 * abs(center)) if len(local) else 0.0
        score = 0.0
        if t >= window - 1 and (t - window + 1) % step == 0:
            x = dict(enumerate(window_features(list(recent), step, center, scale)))
            score = hst.score_one(x) if t >= probation else 0.0
            hst.learn_one(x)
        out.append(score)
        local.push(v)
    return out


def alarm_scores(
    parts: Sequence[Sequence[float]], c: DetectorConfig = DEFAULT, gain: Sequence[float] | None = None
) -> list[float]:
    """The detector's alarm step over the larger of ``parts`` (each already weighted), times
    ``gain`` per point: alarm-rate calibration, then refractory damping (``StreamingDetector``)."""
    n = len(parts[0])
    out = [0.0] * n
    since = c.refractory + 1
    alarms: deque[int] = deque()
    for i in range(n):
        while alarms and alarms[0] < i - c.alarm_rate_window:
            alarms.popleft()
        alarm = max(p[i] for p in parts) * max(c.alarm_rate_floor, 1.0 - c.alarm_rate_step * len(alarms))
        if gain is not None:
            alarm *= gain[i]
        score = alarm
        if since <= c.refractory:
            score *= c.refractory_damping
        elif alarm >= c.alarm_level:
            since = 0
            alarms.append(i)
        since += 1
        out[i] = score
    return out


def candidates(value: list[float], context: list[float], memory: list[float]) -> dict[str, list[float]]:
    """Every fused candidate's alarm scores for one file."""
    out: dict[str, list[float]] = {"memory alone": alarm_scores([memory])}
    for w in (0.7, 0.8, 0.9):
        out[f"max {w}"] = alarm_scores([value, context, [w * m for m in memory]])
    last, carried = 1.0, []
    for m in memory:  # the latest evaluated window's score holds until the next window
        last = m if m > 0 else last
        carried.append(last)
    for close, f in ((0.1, 0.8), (0.2, 0.8)):
        out[f"suppress {close} {f}"] = alarm_scores(
            [value, context], gain=[f if m < close else 1.0 for m in carried]
        )
    likelihood = AnomalyLikelihood(
        history=DEFAULT.likelihood_history, short=1, min_sd=DEFAULT.likelihood_min_sd
    )
    lik = [likelihood.update(m) for m in memory]
    for w in (0.8, 0.9):
        out[f"likelihood {w}"] = alarm_scores([value, context, [w * x for x in lik]])
    return out


def _detect(job: tuple[Path, int]) -> tuple[list[float], list[float], list[float], float]:
    path, k = job
    ts, vs = read_series(path)
    t0 = time.process_time()
    points = score_series(ts, vs, GRID[k])
    cpu = time.process_time() - t0
    return [p.score for p in points], [p.value for p in points], [p.context for p in points], cpu


def _memory(path: Path) -> tuple[list[float], float]:
    values = read_series(path)[1]
    t0 = time.process_time()
    scores = memory_scores(values)
    return scores, time.process_time() - t0


def _river(path: Path) -> tuple[list[float], float]:
    values = read_series(path)[1]
    t0 = time.process_time()
    scores = river_hst_scores(values)
    return scores, time.process_time() - t0


def choose(
    files: dict[str, ScoredFile], runs: Sequence[dict[str, list[float]]], folds: int
) -> tuple[float, list[int]]:
    """Normalised standard score when each fold is scored with the candidate and threshold that
    score best on the other folds, and the choices (:func:`nab_scoring.choose_by_folds`)."""
    return choose_by_folds(files, runs, folds, STANDARD)


def figures(files: dict[str, ScoredFile], run: dict[str, list[float]]) -> dict[str, Any]:
    """Tuned, 5-fold and halves figures of one candidate, and its windows and false positives."""
    names = sorted(files)
    fit = score_corpus([files[n] for n in names], [run[n] for n in names], STANDARD)
    windows = fps = 0
    for n in names:
        _raw, tp, fp = file_score(files[n], run[n], fit["threshold"], STANDARD)
        windows += tp
        fps += fp
    return {
        "tuned": round(fit["score"], 2),
        "cv5": round(choose(files, [run], 5)[0], 2),
        "halves": round(choose(files, [run], 2)[0], 2),
        "windows": windows,
        "false_positives": fps,
    }


def main() -> None:
    """Run the detector grid and the memory over NAB, fuse, score; print the JSON summary last."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_option(ap, "nab")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--quick", action="store_true", help="the default configuration only, no grid")
    ap.add_argument(
        "--river",
        action="store_true",
        help="also score river's HalfSpaceTrees on the same windows as a peer (needs `pip install river`)",
    )
    args = ap.parse_args()
    if args.river and importlib.util.find_spec("river") is None:
        ap.error("--river needs the river package (pip install river); it is not a project dependency")
    data = data_dir(args.data, "nab", "labels/combined_windows.json")
    t0 = time.perf_counter()
    windows = read_windows(data)
    names = sorted(windows)
    files = {n: prepare(n, read_series(data / "data" / n)[0], windows[n]) for n in names}
    configs = 1 if args.quick else len(GRID)
    paths = [data / "data" / n for n in names]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        mem_runs = list(pool.map(_memory, paths))
        flat = list(pool.map(_detect, [(p, k) for k in range(configs) for p in paths]))
        river_runs = list(pool.map(_river, paths)) if args.river else []
    memory = {n: run[0] for n, run in zip(names, mem_runs, strict=True)}
    # CPU seconds over the corpus (process time in the workers: the machine is shared)
    cpu = {
        "detector": round(sum(f[3] for f in flat[: len(names)]), 1),
        "memory": round(sum(r[1] for r in mem_runs), 1),
    }
    if river_runs:
        cpu["river_hst"] = round(sum(r[1] for r in river_runs), 1)
    per = len(names)
    grid = [{n: flat[k * per + i][0] for i, n in enumerate(names)} for k in range(configs)]
    fused: dict[str, dict[str, list[float]]] = {}
    for i, n in enumerate(names):
        _score, value, context, _cpu = flat[i]
        for label, scores in candidates(value, context, memory[n]).items():
            fused.setdefault(label, {})[n] = scores
    result: dict[str, Any] = {"current": figures(files, grid[0])}
    print(f"{'current':22s} {json.dumps(result['current'])}")
    for label, run in fused.items():
        result[label] = figures(files, run)
        print(f"{label:22s} {json.dumps(result[label])}")
    peers: dict[str, dict[str, list[float]]] = {}
    for n, (hst, _cpu) in zip(names, river_runs, strict=False):
        _score, value, context, _c = flat[names.index(n)]
        likelihood = AnomalyLikelihood(
            history=DEFAULT.likelihood_history, short=1, min_sd=DEFAULT.likelihood_min_sd
        )
        peers.setdefault("river HST alone", {})[n] = alarm_scores([hst])
        lik = [0.8 * likelihood.update(x) for x in hst]
        peers.setdefault("river HST likelihood 0.8", {})[n] = alarm_scores([value, context, lik])
    for label, run in peers.items():  # peers, outside the cross-validated choice below
        result[label] = figures(files, run)
        print(f"{label:22s} {json.dumps(result[label])}")
    everything = grid + list(fused.values())
    labels = [f"grid: {_label(GRID[k])}" for k in range(configs)] + list(fused)
    for key, runs in (("current grid", grid), ("with memory", everything)):
        cv5, chosen5 = choose(files, runs, 5)
        halves, chosen2 = choose(files, runs, 2)
        result[key] = {
            "cv5": round(cv5, 2),
            "halves": round(halves, 2),
            "chosen_cv5": [labels[c] for c in chosen5],
            "chosen_halves": [labels[c] for c in chosen2],
        }
        print(f"{key:22s} {json.dumps(result[key])}")
    print(f"cpu seconds over the corpus: {json.dumps(cpu)}")
    result.update(
        cpu_seconds=cpu, configs_run=configs, files=len(files), seconds=round(time.perf_counter() - t0, 1)
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
