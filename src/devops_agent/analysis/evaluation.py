"""Accuracy metrics for log template mining, as used by the Loghub parsing benchmarks.

Grouping accuracy (GA): a message counts as correct when the set of messages in its predicted
group is exactly the set in its ground-truth group. Parsing accuracy (PA): a message counts as
correct when its predicted template equals the ground-truth template after both are normalized
by :func:`normalize_template` (punctuation-insensitive tokens, runs of wildcards collapsed).

Shared by ``benchmarks/log_parsing.py`` and the tests. Pure functions over sequences: this
module must not read files, and must not import from tools, policies, agent or interfaces.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Hashable, Sequence

__all__ = ["grouping_accuracy", "normalize_template", "parsing_accuracy"]

_WORD_RE = re.compile(r"<\*>|[A-Za-z0-9_]+")


def normalize_template(template: str) -> tuple[str, ...]:
    """Tokens of a template, ignoring punctuation and whitespace, with wildcard runs collapsed.

    ``"onExtend:<*> <*> <*>"`` and ``"onExtend <*>"`` both give ``("onExtend", "<*>")``;
    ``"<*>:<*>"`` gives ``("<*>",)``. Words keep their case.
    """
    out: list[str] = []
    for token in _WORD_RE.findall(template):
        if token == "<*>" and out and out[-1] == "<*>":
            continue
        out.append(token)
    return tuple(out)


def grouping_accuracy(truth: Sequence[Hashable], predicted: Sequence[Hashable]) -> float:
    """Fraction of messages whose predicted group has exactly the members of their true group.

    Args:
        truth: the ground-truth group label of each message.
        predicted: the predicted group label of each message, same order and length.
    """
    if len(truth) != len(predicted):
        raise ValueError("truth and predicted differ in length")
    if not truth:
        return 0.0
    true_groups: dict[Hashable, list[int]] = defaultdict(list)
    pred_groups: dict[Hashable, list[int]] = defaultdict(list)
    for i, (t, p) in enumerate(zip(truth, predicted, strict=True)):
        true_groups[t].append(i)
        pred_groups[p].append(i)
    correct = 0
    for members in pred_groups.values():
        labels = {truth[i] for i in members}
        if len(labels) == 1 and len(true_groups[next(iter(labels))]) == len(members):
            correct += len(members)
    return correct / len(truth)


def parsing_accuracy(truth_templates: Sequence[str], predicted_templates: Sequence[str]) -> float:
    """Fraction of messages whose predicted template matches the true one after normalization.

    Args:
        truth_templates: the ground-truth template of each message.
        predicted_templates: the predicted template of each message, same order and length.
    """
    if len(truth_templates) != len(predicted_templates):
        raise ValueError("truth and predicted differ in length")
    if not truth_templates:
        return 0.0
    cache: dict[str, tuple[str, ...]] = {}

    def norm(t: str) -> tuple[str, ...]:
        got = cache.get(t)
        if got is None:
            got = cache[t] = normalize_template(t)
        return got

    correct = sum(norm(t) == norm(p) for t, p in zip(truth_templates, predicted_templates, strict=True))
    return correct / len(truth_templates)
