"""The peers of ``log_parsing.py``: drain3 and Brain, each run as its authors published it.

- **drain3** (``drain3-improved`` in the ``bench`` extra): per-system masking regexes, ``st`` and
  ``depth`` from Loghub's ``log_formats.json``.
- **Brain** (Yu et al., IEEE TSC 2023; the strongest statistical parser in logpai's
  ``logparser`` toolkit, published GA 0.94-1.0 on every Loghub-2k system), from the PyPI package
  ``logparser3`` 1.0.4. Its per-system settings (regexes, delimiters, threshold) are read from
  the ``benchmark_settings`` literal of the installed ``logparser/Brain/benchmark.py`` (parsed,
  never executed: that file runs the whole benchmark when imported). Brain also splits some
  systems' messages differently by the system's name (inside its own code), so it is the
  strongest and most per-system-tuned peer. ``logparser3`` pins ``regex==2022.3.2``, which has
  no wheel for Python 3.11 and would build from source; it works with the current ``regex``, so
  it is installed without its pins (see ``docs/benchmarks.md``).

Each runner takes the Content strings of one system and returns (group label, template) per
line, doing only the parsing (no file reading or writing), so its time is comparable with ours.
A peer that is not installed gives ``None``.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

# (predicted group label, predicted template) per line
Parse = tuple[list[object], list[str]]
Runner = Callable[[list[str]], Parse]


def drain3_runner(settings: dict[str, Any]) -> Runner | None:
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


def brain_settings() -> dict[str, dict[str, Any]] | None:
    """Brain's published per-system settings, or None if ``logparser3`` is not installed."""
    try:
        spec = importlib.util.find_spec("logparser.Brain")
    except ImportError:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    source = Path(next(iter(spec.submodule_search_locations))) / "benchmark.py"
    if not source.is_file():
        return None
    with warnings.catch_warnings():  # its regexes are written with invalid escapes ("\[")
        warnings.simplefilter("ignore")
        tree = ast.parse(source.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "benchmark_settings" for t in node.targets
        ):
            settings: dict[str, dict[str, Any]] = ast.literal_eval(node.value)
            return settings
    return None


def brain_runner(system: str, settings: dict[str, Any]) -> Runner | None:
    """A Brain run with its published settings for ``system``, or None if it is not installed."""
    try:
        brain = importlib.import_module("logparser.Brain.Brain")
    except ImportError:
        return None

    def run(lines: list[str]) -> Parse:
        # LogParser.parse() without its file input and CSV output: the same calls in order
        parser = brain.LogParser(
            logname=system,
            log_format=settings["log_format"],
            rex=settings["regex"],
            delimeter=settings["delimiter"],
            threshold=settings["theshold"],
        )
        group_len, tuple_vector, frequency_vector = parser.get_frequecy_vector(
            lines, parser.rex, parser.delimeter, parser.logname
        )
        sorted_tuples, combinations, combinations_reverse = parser.tuple_generate(
            group_len, tuple_vector, frequency_vector
        )
        template_set: dict[tuple[str, ...], list[int]] = {}
        for key in group_len:
            tree = brain.tupletree(
                sorted_tuples[key],
                combinations[key],
                combinations_reverse[key],
                tuple_vector[key],
                group_len[key],
            )
            detail_ids, root_set, root_detail = tree.find_root(0)
            detail_ids = tree.up_split(detail_ids, root_set)
            template_set.update(
                brain.output_result(tree.down_split(detail_ids, parser.threshold, root_detail))
            )
        labels: list[object] = [None] * len(lines)
        templates = [""] * len(lines)
        for template, members in template_set.items():
            text = " ".join(template)
            for i in members:
                labels[int(i)], templates[int(i)] = text, text
        return labels, templates

    return run
