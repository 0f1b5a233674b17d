"""Full tool outputs: of the running process, for ``query_result`` before the store has them;
and a result as the session's conversation stored it (:func:`stored_result`).

The session keeps every summarized or capped result's full output in the store, written behind
the run by its journal; a model may ask ``query_result`` about a result one step later, before
that write is committed. The recorder therefore also remembers the same text (secrets already
scrubbed) here, in a bounded least-recently-used map. This module holds data only; it must not
import policies, agent or interface code.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from devops_agent.store import Store


class KeptOutputs:
    """``(session id, tool call id) → text``, at most ``max_chars`` characters in all."""

    def __init__(self, max_chars: int = 64_000_000) -> None:
        self.max_chars = max_chars
        self._items: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def remember(self, session_id: str, call_id: str, text: str) -> None:
        if len(text) > self.max_chars:
            return
        key = (session_id, call_id)
        with self._lock:
            old = self._items.pop(key, None)
            self._size -= len(old or "")
            self._items[key] = text
            self._size += len(text)
            while self._size > self.max_chars:
                _, dropped = self._items.popitem(last=False)
                self._size -= len(dropped)

    def recall(self, session_id: str, call_id: str) -> str | None:
        with self._lock:
            text = self._items.get((session_id, call_id))
            if text is not None:
                self._items.move_to_end((session_id, call_id))
            return text


KEPT = KeptOutputs()
"""The process's map; the toolbox's recorder fills it."""


def stored_result(store: Store, session_id: str, call_id: str) -> str | None:
    """The result of ``call_id`` as the session stored it in its conversation (what the model
    read whole; the budget may have sent it as a summary since), as text; ``None`` if none."""
    for payload in reversed(store.load_messages(session_id)):
        if call_id not in payload:
            continue
        for part in json.loads(payload).get("parts", []):
            if part.get("part_kind") == "tool-return" and part.get("tool_call_id") == call_id:
                content = part.get("content")
                if isinstance(content, dict) and "data" in content:
                    content = content["data"]
                return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return None
