"""Model selection from ``provider:model`` strings, with profiles for OpenAI-compatible servers.

``None`` means offline: the runtime uses the runbook engine. ``scripted`` / ``scripted:FILE``
is the deterministic model shipped in the package. ``llamacpp:`` and ``openai-compatible:``
talk to any OpenAI-compatible base URL with a profile for that server's quirks; every other
prefix (``openai:``, ``anthropic:``, ``google-gla:``, ``ollama:``, ``vllm:`` …) is resolved by
pydantic-ai with the API key and base URL from our settings. ``openai:`` with a ``model.base_url``
speaks Chat Completions (``openai-chat:``), which every OpenAI-compatible server serves; the
Responses API stays available as ``openai-responses:``. pydantic-ai errors met while resolving
become :class:`ConfigError` here; errors of a run are mapped in :mod:`.model_errors`.

:func:`model_profile` says what a model reads, writes, supports and costs
(:mod:`devops_agent.policies.context.profiles`), asking a local server about its window.
:func:`request_settings` turns ``model.request_timeout_s``, ``connect_timeout_s`` and
``max_retries`` into the per-request settings every run passes to pydantic-ai, so an endpoint
that never answers costs ``request_timeout_s``, not the SDK's 10 minutes per attempt.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

from pydantic_ai.exceptions import UserError as PydanticAIUserError
from pydantic_ai.models import Model, infer_model
from pydantic_ai.providers import Provider, infer_provider_class
from pydantic_ai.settings import ModelSettings as RequestSettings

from devops_agent.agent.scripted import ScriptedModel, load_script
from devops_agent.config.settings import ModelSettings
from devops_agent.errors import ConfigError
from devops_agent.policies.context.discovery import discover
from devops_agent.policies.context.profiles import ModelProfile, profile_for, shipped_profile

DEFAULT_BASE_URLS = {
    "ollama": "http://127.0.0.1:11434/v1",
    "vllm": "http://127.0.0.1:8000/v1",
    "llamacpp": "http://127.0.0.1:8080/v1",
}

_KEYLESS_HINT = (
    "set model.api_key (DEVOPS_AGENT_MODEL__API_KEY) or the provider's key variable; "
    "or leave model.name unset to run the offline runbooks"
)

_EXAMPLES = (
    "openai:gpt-4o, anthropic:claude-sonnet-4-5, google-gla:gemini-2.5-pro, ollama:llama3.1, "
    "vllm:NAME, llamacpp:NAME, openai-compatible:NAME or scripted"
)

# Providers whose SDK takes a timeout in seconds only, not an httpx.Timeout with a connect phase.
_NUMERIC_TIMEOUT = ("google", "google-gla", "google-vertex", "mistral")


def provider_of(name: str) -> str:
    return name.split(":", 1)[0] if ":" in name else name


def _provider_factory(settings: ModelSettings) -> Any:
    def factory(provider_name: str) -> Provider[Any]:
        cls = infer_provider_class(provider_name)
        kwargs: dict[str, Any] = {}
        if settings.api_key is not None:
            kwargs["api_key"] = settings.api_key.get_secret_value()
        base_url = settings.base_url or DEFAULT_BASE_URLS.get(provider_name)
        if base_url:
            kwargs["base_url"] = base_url
        accepted = set()
        for fn in [cls.__init__, *getattr(cls.__init__, "__overloads__", [])]:
            accepted |= set(inspect.signature(fn).parameters)
        return cls(**{k: v for k, v in kwargs.items() if k in accepted or not accepted})

    return factory


def base_url_of(settings: ModelSettings) -> str | None:
    """The endpoint the model is asked at, when it is not the provider's own default."""
    name = settings.name or ""
    return settings.base_url or DEFAULT_BASE_URLS.get(provider_of(name))


def request_settings(settings: ModelSettings) -> RequestSettings:
    """The per-request settings of every model request of a run.

    ``timeout`` bounds each attempt (and each wait for the next streamed chunk) with a separate,
    shorter connect phase; ``max_retries`` bounds the SDK's own retries; ``first_event_timeout``
    bounds the wait for the first output over all attempts together, so an endpoint that accepts
    the connection and never answers fails after ``request_timeout_s`` while a long answer that
    keeps streaming is never cut off.
    """
    import httpx

    seconds = settings.request_timeout_s
    connect = min(settings.connect_timeout_s, seconds)
    timeout: float | httpx.Timeout = (
        seconds
        if provider_of(settings.name or "") in _NUMERIC_TIMEOUT
        else httpx.Timeout(seconds, connect=connect)
    )
    return RequestSettings(timeout=timeout, max_retries=settings.max_retries, first_event_timeout=seconds)


def resolve_model(settings: ModelSettings) -> Model | None:
    """The model for ``settings``, or ``None`` when no model is configured (offline)."""
    name = settings.name
    if not name:
        return None
    if os.environ.get("DEVOPS_AGENT_ALLOW_MODEL_REQUESTS") == "0":
        # Test guard that also reaches subprocesses: real providers refuse to send requests.
        import pydantic_ai.models

        pydantic_ai.models.ALLOW_MODEL_REQUESTS = False
    if name == "scripted" or name.startswith("scripted:"):
        path = name.split(":", 1)[1] if ":" in name else None
        return ScriptedModel(load_script(Path(path)) if path else None)
    provider = provider_of(name)
    if ":" not in name:
        raise ConfigError(
            f"model {name!r} is not of the form provider:model",
            hint=f"e.g. {_EXAMPLES}",
        )
    model_name = name.split(":", 1)[1]
    try:
        if provider in ("llamacpp", "openai-compatible"):
            base_url = settings.base_url or DEFAULT_BASE_URLS.get(provider)
            if not base_url:
                raise ConfigError(
                    f"model {name!r} needs model.base_url", hint="e.g. http://127.0.0.1:8000/v1"
                )
            key = settings.api_key.get_secret_value() if settings.api_key else "not-needed"
            # Imported here: the openai SDK takes over a second to import, which every CLI
            # command that only looks at the model settings (doctor, the offline path) paid.
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.profiles.openai import OpenAIModelProfile
            from pydantic_ai.providers.openai import OpenAIProvider

            # llama.cpp and some vLLM builds reject strict tool schemas, tool_choice=required and
            # max_completion_tokens (measured; see docs/models.md). ``supports_forced_tool_choice``
            # is the current name of ``openai_supports_tool_choice_required`` (the old one warned).
            profile = (
                OpenAIModelProfile(
                    openai_supports_strict_tool_definition=False,
                    supports_forced_tool_choice=False,
                    openai_chat_supports_max_completion_tokens=False,
                )
                if settings.profile in ("auto", "llamacpp", "vllm")
                else None
            )
            return OpenAIChatModel(
                model_name, provider=OpenAIProvider(base_url=base_url, api_key=key), profile=profile
            )
        if provider == "openai" and settings.base_url:
            # pydantic-ai sends ``openai:`` to the Responses API, which OpenAI-compatible servers
            # (vLLM, llama.cpp, proxies) lack: they answer 404. A custom URL gets Chat Completions.
            name = f"openai-chat:{model_name}"
        return infer_model(name, provider_factory=_provider_factory(settings))
    except PydanticAIUserError as exc:
        raise ConfigError(f"cannot use model {name!r}: {exc}", hint=_KEYLESS_HINT) from exc
    except ValueError as exc:  # pydantic-ai: "Unknown provider: NAME"
        raise ConfigError(
            f"cannot use model {name!r}: unknown provider {provider!r}",
            hint=f"write provider:model with a known provider, e.g. {_EXAMPLES}",
        ) from exc
    except ImportError as exc:
        raise ConfigError(f"model provider {provider!r} is not installed: {exc}", hint=_KEYLESS_HINT) from exc


_DISCOVERED: dict[tuple[str, str, str], dict[str, Any]] = {}
# OpenAI-compatible endpoints whose own description of the model is read, by provider or profile.
_ENDPOINT_KINDS = {"ollama": "ollama", "vllm": "vllm", "llamacpp": "llamacpp"}


def model_profile(settings: ModelSettings, name: str | None = None) -> ModelProfile:
    """The profile of ``name`` (default ``model.name``): shipped, then what a local endpoint says
    about itself (Ollama, vLLM, llama.cpp; asked once per process), then ``model.profiles``."""
    name = name or settings.name or "scripted"
    provider = provider_of(name)
    kind = _ENDPOINT_KINDS.get(provider) or (
        _ENDPOINT_KINDS.get(settings.profile) if provider == "openai-compatible" else None
    )
    discovered: dict[str, Any] = {}
    same_endpoint = provider == provider_of(settings.name or "")
    base_url = (settings.base_url if same_endpoint else None) or DEFAULT_BASE_URLS.get(provider)
    if kind is not None and base_url:
        key = (kind, base_url, name)
        if key not in _DISCOVERED:
            fallback = shipped_profile(name).context_window
            _DISCOVERED[key] = discover(kind, base_url, name.split(":", 1)[1], fallback_window=fallback)
        discovered = _DISCOVERED[key]
    return profile_for(name, settings.profiles, discovered)
