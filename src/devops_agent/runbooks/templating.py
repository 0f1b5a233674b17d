"""The tiny template language of runbook YAML: ``{{ name }}`` and ``{{ name | default(x) }}``.

A string that is exactly one placeholder is replaced by the *typed* value (a list of log paths
stays a list, a number stays a number); any other string gets each placeholder replaced by
``str(value)``. ``default(x)`` applies when the value is missing, ``None`` or empty; ``x`` is a
YAML literal (``default("1h")``, ``default(50)``, ``default([])``).

This is deliberately not Jinja: no expressions, filters, loops or attribute access, so a runbook
cannot execute anything. This module must not import the engine, tools or analyzers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from devops_agent.errors import ConfigError

_PLACEHOLDER = re.compile(
    r"\{\{\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\|\s*default\(\s*(?P<default>.*?)\s*\)\s*)?\}\}"
)


class TemplateError(ConfigError):
    """A template is malformed or names a value that does not exist."""


def is_empty(value: Any) -> bool:
    """``None``, an empty string, or an empty collection: what ``when:`` and ``default()`` treat as unset."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple | dict | set):
        return len(value) == 0
    return False


def _check_malformed(text: str) -> None:
    rest = _PLACEHOLDER.sub("", text)
    if "{{" in rest or "}}" in rest:
        raise TemplateError(
            f"malformed template {text!r}",
            hint="placeholders look like {{ name }} or {{ name | default(value) }}",
        )


def _parse_default(raw: str, text: str) -> Any:
    try:
        return yaml.safe_load(raw) if raw else None
    except yaml.YAMLError as exc:
        raise TemplateError(f"bad default(...) literal in {text!r}: {exc}") from exc


def template_names(value: Any) -> set[str]:
    """Every placeholder name used anywhere in ``value`` (strings, lists and dicts, recursively).

    Raises :class:`TemplateError` for a malformed placeholder or default literal.
    """
    if isinstance(value, str):
        _check_malformed(value)
        names = set()
        for match in _PLACEHOLDER.finditer(value):
            if match.group("default") is not None:
                _parse_default(match.group("default"), value)
            names.add(match.group("name"))
        return names
    if isinstance(value, list | tuple):
        return set().union(*(template_names(v) for v in value)) if value else set()
    if isinstance(value, Mapping):
        return set().union(*(template_names(v) for v in value.values())) if value else set()
    return set()


def _lookup(match: re.Match[str], context: Mapping[str, Any], text: str) -> Any:
    name = match.group("name")
    if name not in context and match.group("default") is None:
        raise TemplateError(
            f"unknown template value {name!r} in {text!r}",
            hint="declare it under `inputs:` in the runbook, or pass it as an input",
        )
    value = context.get(name)
    if match.group("default") is not None and is_empty(value):
        return _parse_default(match.group("default"), text)
    return value


def placeholder_values(text: str, context: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(name, value)`` of each placeholder in ``text``, in order, with ``default()`` applied.

    Raises :class:`TemplateError` like :func:`render`.
    """
    _check_malformed(text)
    return [(match.group("name"), _lookup(match, context, text)) for match in _PLACEHOLDER.finditer(text)]


def render(value: Any, context: Mapping[str, Any]) -> Any:
    """``value`` with every placeholder replaced from ``context``; containers are copied.

    Raises :class:`TemplateError` for an unknown name or a malformed placeholder.
    """
    if isinstance(value, str):
        _check_malformed(value)
        whole = _PLACEHOLDER.fullmatch(value.strip())
        if whole is not None:
            return _lookup(whole, context, value)

        def substitute(match: re.Match[str]) -> str:
            found = _lookup(match, context, value)
            return "" if found is None else str(found)

        return _PLACEHOLDER.sub(substitute, value)
    if isinstance(value, list | tuple):
        return [render(v, context) for v in value]
    if isinstance(value, Mapping):
        return {k: render(v, context) for k, v in value.items()}
    return value
