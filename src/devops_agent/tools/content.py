"""Binary parts of a tool's result: text decoded, the rest described, never passed on as bytes.

Foreign toolsets return what their servers sent: pydantic-ai maps an MCP result to strings, parsed
JSON, and ``BinaryContent`` for images, audio and resource blobs. The pipeline's innermost wrapper
(normalize) passes such a result through :func:`readable`: a blob that is text (a ``text/*`` or JSON
resource sent base64) is decoded, so the privacy guard masks it and the output cap measures it like
any text; anything else (an image, a PDF, audio) becomes a line saying what it was and how big,
whoever reads it and whether or not the privacy guard is on. This module must not import policies.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import BinaryContent

_TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/x-yaml")


def _as_text(content: BinaryContent) -> str | None:
    media = content.media_type.split(";", 1)[0].strip().lower()
    if not (media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+json", "+xml"))):
        return None
    try:
        text = content.data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def describe_binary(content: BinaryContent) -> str:
    """One line in place of binary content: its type and size."""
    return (
        f"[{content.media_type} content of {len(content.data)} bytes withheld: "
        "binary content is described, not passed on]"
    )


def readable(value: Any) -> Any:
    """``value`` (a mapped MCP result) with every ``BinaryContent`` turned into text: decoded when
    it is text, described otherwise."""
    if isinstance(value, BinaryContent):
        text = _as_text(value)
        return text if text is not None else describe_binary(value)
    if isinstance(value, dict):
        return {k: readable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [readable(v) for v in value]
    return value
