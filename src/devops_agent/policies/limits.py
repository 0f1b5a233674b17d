"""Output size cap: keep the head and the tail of a large tool result and say what was dropped.

The model's context is finite; a tool that returns a megabyte would crowd out everything else.
Instead of silently cutting, :func:`cap_result` keeps the beginning and the end (where errors
and summaries usually are), replaces the middle with a marker that counts what was dropped, and
flags the result ``truncated`` in its metadata. Lists lose whole middle items, text loses middle
characters, other data is capped on its JSON form.
"""

from __future__ import annotations

import json
from typing import Any

from devops_agent.tools.base import ToolResult


def _size(value: Any) -> int:
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
    sizes = [_size(i) + 2 for i in items]
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


def cap_result(result: ToolResult, cap_chars: int) -> ToolResult:
    """Return ``result`` unchanged if its data fits in ``cap_chars``, else a capped copy."""
    data = result.data
    size = _size(data) if data is not None else 0
    if size <= cap_chars:
        return result
    meta = dict(result.metadata, truncated=True, original_chars=size)
    if isinstance(data, list) and len(data) > 1:
        new_data, dropped = _cap_list(data, cap_chars)
        if _size(new_data) <= cap_chars * 1.2:
            return result.model_copy(update={"data": new_data, "metadata": meta | {"dropped_items": dropped}})
    text = as_text(data)
    new_text, dropped_chars = _cap_text(text, cap_chars)
    return result.model_copy(update={"data": new_text, "metadata": meta | {"dropped_chars": dropped_chars}})
