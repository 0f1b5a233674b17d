"""Output size cap: keep the head and the tail of a large tool result and say what was dropped.

The model's context is finite; a tool that returns a megabyte would crowd out everything else.
Instead of silently cutting, :func:`cap_result` keeps the beginning and the end (where errors
and summaries usually are), replaces the middle with a marker that counts what was dropped, and
flags the result ``truncated`` in its metadata. Lists lose whole middle items, text loses middle
characters, other data is capped on its JSON form.

A ranking is the exception: its middle is not less important than its end. A tool whose data
is ranked best first says so in its metadata (:data:`RANKED`), and the cap then drops the lowest
ranks, keeps the result's shape and says in its hint how many were left out.
"""

from __future__ import annotations

import json
from typing import Any

from devops_agent.tools.base import ToolResult

RANKED = "ranked"
"""Metadata key of a result whose lists are ranked best first. Its value is a noun for the items
when the data itself is the ranked list (``ranked="hits"``), or the names of the ranked list
fields when the data is a dict (``ranked=["groups"]``)."""

RANKED_TALLY = "ranked_tally"
"""Metadata key of a ranked dict result whose items each stand for several records, and whose data
says how many items are shown and how many records are in items left out. Its value maps a ranked
field to ``{"count": ITEM FIELD, "shown": DATA KEY, "hidden": DATA KEY}``; when the cap drops items
of that field, ``shown`` becomes the number left and the dropped items' counts are added to
``hidden`` (``logs_errors``: ``groups_shown`` and ``records_in_hidden_groups``)."""


def size_of(value: Any) -> int:
    """Characters of ``value`` as a model reads it: text as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return len(value)
    return len(json.dumps(value, default=str, ensure_ascii=False))


def as_text(data: Any) -> str:
    """``data`` as the text a cap cuts: strings as they are, anything else as indented JSON."""
    return data if isinstance(data, str) else json.dumps(data, default=str, ensure_ascii=False, indent=1)


def _cap_text(text: str, cap: int) -> tuple[str, int]:
    keep = max(cap - 80, 20)
    head, tail = keep * 2 // 3, keep // 3
    dropped = len(text) - head - tail
    marker = f"\n… [{dropped} characters dropped] …\n"
    return text[:head] + marker + text[len(text) - tail :], dropped


def _cap_list(items: list[Any], cap: int) -> tuple[list[Any], int]:
    """Drop middle items until the list fits; at least one item is kept at each end."""
    sizes = [size_of(i) + 2 for i in items]
    budget = cap - 60
    head: list[Any] = []
    tail: list[Any] = []
    lo, hi = 0, len(items) - 1
    used = 0
    # Alternate two items from the head for every one from the tail.
    turn = 0
    while lo <= hi:
        take_head = turn % 3 != 2
        idx = lo if take_head else hi
        if used + sizes[idx] > budget and (head or tail):
            break
        used += sizes[idx]
        if take_head:
            head.append(items[lo])
            lo += 1
        else:
            tail.insert(0, items[hi])
            hi -= 1
        turn += 1
    dropped = hi - lo + 1
    marker = f"… [{dropped} items dropped] …"
    return [*head, marker, *tail], dropped


def _fit_ranked(result: ToolResult, cap: int) -> ToolResult | None:
    """``result`` with its ranked lists cut from the end until its data fits in ``cap``, or None
    when it is not ranked or does not fit even with one item left in each ranked list.

    Of several ranked lists, the one with the most items left loses its last item first.
    """
    data, ranked = result.data, result.metadata.get(RANKED)
    lists: dict[str, list[Any]]  # "": the data itself
    if isinstance(data, list) and isinstance(ranked, str):
        lists = {"": data}
    elif isinstance(data, dict) and isinstance(ranked, list):
        lists = {k: data[k] for k in ranked if isinstance(data.get(k), list)}
    else:
        return None
    keep = {k: len(v) for k, v in lists.items()}
    size = size_of(data)
    while size > cap:
        shrinkable = [k for k in keep if keep[k] > 1]
        if not shrinkable:
            return None
        longest = max(shrinkable, key=lambda k: keep[k])
        keep[longest] -= 1
        size -= size_of(lists[longest][keep[longest]]) + 2  # the item and its ", "
    cut = {k: len(v) - keep[k] for k, v in lists.items() if keep[k] < len(v)}
    if "" in keep:
        new_data: Any = data[: keep[""]]
        nouns = [f"{cut['']} lower-ranked {ranked}"]
        omitted: Any = cut[""]
    else:
        new_data = {k: v[: keep[k]] if k in keep else v for k, v in data.items()}
        nouns = [f"{n} lower-ranked {k}" for k, n in cut.items()]
        omitted = cut
        _retally(new_data, lists, keep, cut, result.metadata.get(RANKED_TALLY))
    if size_of(new_data) > cap:
        return None
    hint = f"{', '.join(nouns)} left out to fit the output limit; ask for fewer or narrow the query"
    return result.model_copy(
        update={
            "data": new_data,
            "hint": f"{result.hint}; {hint}" if result.hint else hint,
            "metadata": result.metadata | {"omitted": omitted},
        }
    )


def _retally(
    data: dict[str, Any], lists: dict[str, list[Any]], keep: dict[str, int], cut: dict[str, int], tally: Any
) -> None:
    """Bring the counts of shown and hidden records in ``data`` up to date with the items the cap
    kept (:data:`RANKED_TALLY`)."""
    if not isinstance(tally, dict):
        return
    for field, spec in tally.items():
        if field not in cut or not isinstance(spec, dict):
            continue
        dropped = lists[field][keep[field] :]
        records = sum(
            n
            for item in dropped
            if isinstance(item, dict) and isinstance(n := item.get(spec.get("count")), int)
        )
        if isinstance(hidden := spec.get("hidden"), str) and isinstance(data.get(hidden), int):
            data[hidden] += records
        if isinstance(shown := spec.get("shown"), str) and shown in data:
            data[shown] = keep[field]


def cap_result(result: ToolResult, cap_chars: int) -> ToolResult:
    """Return ``result`` unchanged if its data fits in ``cap_chars``, else a capped copy.

    A ranked result (:data:`RANKED`) loses its lowest ranks; anything else its middle.
    """
    data = result.data
    size = size_of(data) if data is not None else 0
    if size <= cap_chars:
        return result
    if (fitted := _fit_ranked(result, cap_chars)) is not None:
        return fitted
    meta = dict(result.metadata, truncated=True, original_chars=size)
    if isinstance(data, list) and len(data) > 1:
        new_data, dropped = _cap_list(data, cap_chars)
        if size_of(new_data) <= cap_chars * 1.2:
            return result.model_copy(update={"data": new_data, "metadata": meta | {"dropped_items": dropped}})
    text = as_text(data)
    new_text, dropped_chars = _cap_text(text, cap_chars)
    return result.model_copy(update={"data": new_text, "metadata": meta | {"dropped_chars": dropped_chars}})
