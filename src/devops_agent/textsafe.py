"""Text from outside (logs, tool output, commands, session titles) made safe to show on a terminal.

A log line can hold terminal control sequences: ``ESC]0;title BEL`` sets the window title,
``ESC[2J`` clears the screen, ``ESC[31m`` colours what follows, a carriage return overwrites the
line. Printed raw, a report could hide its own findings behind "all systems healthy".
:func:`visible` writes every such character out instead: C0 controls and DEL as their Unicode
"control pictures" (``␛``, ``␇``, ``␍``; one character each, so text keeps its length and
layout), C1 controls and the bidirectional overrides (which reorder what is shown, the "Trojan
source" trick) as ``\\x9b`` / ``\\u202e``. Newlines and tabs are kept.

Interfaces apply it at their output boundary (the CLI's consoles do it for everything they
print); ``--json`` output needs nothing, since JSON escapes control characters itself.

This module must not import anything from the rest of the package, nor any third-party library.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Every character :func:`visible` replaces: C0 controls but ``\\t`` and ``\\n``, DEL, C1 controls,
and the bidirectional embedding, override and isolate controls."""


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟: U+2400 + the control's code
    if code == 0x7F:
        return "\u2421"  # ␡
    if code <= 0x9F:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every terminal control character written out (``\\x1b`` as ``␛``); the
    same string when there is none. A carriage return that ends a line (``\\r\\n``, a Windows
    log) is dropped: it moves nothing that the newline does not."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_shown, text.replace("\r\n", "\n"))


def visible_same_length(text: str) -> str | None:
    """:func:`visible` when it keeps every character's position (C0 controls and DEL only, each
    shown as one character), so that styles laid over ``text`` by offset still fit; ``None`` when
    ``text`` holds a control that needs more than one character to show."""
    if _UNSAFE.search(text) is None:
        return text
    if any(ord(m.group()) >= 0x80 for m in _UNSAFE.finditer(text)):
        return None
    return _UNSAFE.sub(_shown, text)


def printable(text: str) -> str:
    """``text`` on one line with every control character, newlines included, written out as its
    escape (``\\n``, ``\\x1b``): for a one-line summary (a tool call's arguments, a denied command)
    where what came from a model must neither move the cursor nor break the line."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def has_controls(text: str) -> bool:
    """Whether :func:`visible` would change ``text``."""
    return _UNSAFE.search(text) is not None
