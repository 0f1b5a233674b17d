"""What a local model server says about the model it serves: its context window, where it says so.

* **Ollama** — ``POST /api/show {"model": NAME}``: ``num_ctx`` in ``parameters`` (the window the
  server was told to allocate) wins; else ``GET /api/ps`` — the ``context_length`` a loaded
  model was given; else the model's trained maximum (``model_info["<arch>.context_length"]``)
  is only an upper bound, since Ollama serves with a smaller default unless configured: it is
  used capped at the shipped provider default. ``capabilities`` without ``tools`` means no tools.
* **vLLM** — ``GET /v1/models``: ``max_model_len`` of the served model.
* **llama.cpp** — ``GET /props``: ``default_generation_settings.n_ctx`` (the per-slot window).

Each probe is one short HTTP request at run start; a server that does not answer, or answers
something else, leaves the profile as it was (shipped or configured) and says why in the log.
This module reads endpoints only; it must not import the agent.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import structlog

log = structlog.get_logger(__name__)

PROBE_TIMEOUT_S = 3.0


def _root(base_url: str) -> str:
    """The server root of an OpenAI-compatible base URL (``http://h:11434/v1`` → ``http://h:11434``)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def _ollama(client: httpx.Client, root: str, model: str, fallback_window: int) -> dict[str, Any]:
    found: dict[str, Any] = {}
    show = client.post(f"{root}/api/show", json={"model": model})
    show.raise_for_status()
    data = show.json()
    caps = data.get("capabilities")
    if isinstance(caps, list):
        found["tools"] = "tools" in caps
    params = data.get("parameters") or ""
    m = re.search(r"(?m)^\s*num_ctx\s+(\d+)", params) if isinstance(params, str) else None
    if m:
        found["context_window"] = int(m.group(1))
        return found
    try:
        ps = client.get(f"{root}/api/ps")
        ps.raise_for_status()
        for entry in ps.json().get("models") or []:
            names = {entry.get("name"), entry.get("model")}
            if (model in names or f"{model}:latest" in names) and entry.get("context_length"):
                found["context_window"] = int(entry["context_length"])
                return found
    except (httpx.HTTPError, ValueError):
        pass  # an older server without /api/ps: the trained maximum below
    info = data.get("model_info") or {}
    trained = [int(v) for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)]
    if trained:
        found["context_window"] = min(trained[0], fallback_window)
    return found


def _vllm(client: httpx.Client, base_url: str, model: str) -> dict[str, Any]:
    resp = client.get(f"{base_url.rstrip('/')}/models")
    resp.raise_for_status()
    served = resp.json().get("data") or []
    for entry in served:
        if entry.get("id") == model and entry.get("max_model_len"):
            return {"context_window": int(entry["max_model_len"])}
    if len(served) == 1 and served[0].get("max_model_len"):  # one model served under another name
        return {"context_window": int(served[0]["max_model_len"])}
    return {}


def _llamacpp(client: httpx.Client, root: str) -> dict[str, Any]:
    resp = client.get(f"{root}/props")
    resp.raise_for_status()
    settings = resp.json().get("default_generation_settings") or {}
    n_ctx = settings.get("n_ctx")
    return {"context_window": int(n_ctx)} if isinstance(n_ctx, int) and n_ctx > 0 else {}


def discover(
    kind: str, base_url: str, model: str, *, fallback_window: int, timeout_s: float = PROBE_TIMEOUT_S
) -> dict[str, Any]:
    """Profile keys the endpoint reports for ``model`` (``context_window``, ``tools``); empty when
    it reports nothing or cannot be reached. ``kind``: ``ollama``, ``vllm`` or ``llamacpp``."""
    try:
        with httpx.Client(timeout=timeout_s) as client:
            if kind == "ollama":
                return _ollama(client, _root(base_url), model, fallback_window)
            if kind == "vllm":
                return _vllm(client, base_url, model)
            if kind == "llamacpp":
                return _llamacpp(client, _root(base_url))
    except (httpx.HTTPError, ValueError, TypeError, AttributeError) as exc:
        log.info("model_endpoint_not_described", kind=kind, base_url=base_url, error=str(exc)[:200])
    return {}
