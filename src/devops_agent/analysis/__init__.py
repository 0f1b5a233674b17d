"""Analyzers (capability layer): turn raw operational data into findings without a model.

Log analysis lives here: time parsing (:mod:`.timeparse`), per-line message, level and error
detection (:mod:`.logline`), message shapes (:mod:`.logshape`) and streaming grouping with spike
detection (:mod:`.loggroup`), and streaming log template mining in the Drain family
(:mod:`.templates`, with :mod:`.masking` and the Loghub metrics in :mod:`.evaluation`).
Metric anomalies (:mod:`.anomaly`: causal robust/seasonal detectors with explanations, plus
pattern novelty from :mod:`.context` calibrated by :mod:`.likelihood`) and SLO multi-window
burn-rate alerts (:mod:`.slo`). Long logs condensed for a model, with their error signatures
(:mod:`.logsummary`); Alertmanager webhooks read as investigations (:mod:`.alert_intake`); Jenkins
build URLs (:mod:`.ci_urls`) and Kubernetes container states (:mod:`.k8s_status`).
Everything is a pure function over strings and iterables of lines, so the same code serves
tools, runbooks and tests, and works offline.

This package must not import from policies, agent, cli or tools, and must not open files or run
commands: callers read the data and pass it in.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from devops_agent.analysis.anomaly import (
        Anomaly,
        AnomalyResult,
        DetectorConfig,
        StreamingDetector,
        detect,
    )
    from devops_agent.analysis.loggroup import ErrorGroup, LogSummary, choose_bucket, group_lines
    from devops_agent.analysis.logline import ERROR_LEVELS, extract_message, is_error, normalize_level
    from devops_agent.analysis.logshape import message_shape
    from devops_agent.analysis.slo import BurnAlert, SloReport, evaluate_slo
    from devops_agent.analysis.templates import MinerConfig, Template, TemplateMatch, TemplateMiner
    from devops_agent.analysis.timeparse import SINCE_FORMS, extract_timestamp, parse_since

# Submodules load on first use: the CLI imports a time parser for every command, and the
# analyzers (numpy-free but large) need not load with it.
_WHERE = {
    name: f"devops_agent.analysis.{module}"
    for module, names in {
        "anomaly": ("Anomaly", "AnomalyResult", "DetectorConfig", "StreamingDetector", "detect"),
        "loggroup": ("ErrorGroup", "LogSummary", "choose_bucket", "group_lines"),
        "logline": ("ERROR_LEVELS", "extract_message", "is_error", "normalize_level"),
        "logshape": ("message_shape",),
        "slo": ("BurnAlert", "SloReport", "evaluate_slo"),
        "templates": ("MinerConfig", "Template", "TemplateMatch", "TemplateMiner"),
        "timeparse": ("SINCE_FORMS", "extract_timestamp", "parse_since"),
    }.items()
    for name in names
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)


__all__ = [
    "Anomaly",
    "AnomalyResult",
    "BurnAlert",
    "DetectorConfig",
    "SloReport",
    "StreamingDetector",
    "detect",
    "evaluate_slo",
    "ERROR_LEVELS",
    "SINCE_FORMS",
    "ErrorGroup",
    "LogSummary",
    "MinerConfig",
    "Template",
    "TemplateMatch",
    "TemplateMiner",
    "choose_bucket",
    "extract_message",
    "extract_timestamp",
    "group_lines",
    "is_error",
    "message_shape",
    "normalize_level",
    "parse_since",
]
