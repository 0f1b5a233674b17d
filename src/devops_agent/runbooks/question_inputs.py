"""Runbook inputs named in the question itself: "why does pod api-7d9f8b6c5d-x2x9z keep restarting?"

Only what a chosen runbook declares and nobody gave is taken (a command-line option always
wins), and only a word that cannot be mistaken for prose:

* ``KIND/NAME`` as kubectl writes it (``pod/web-0``, ``deploy/api``, ``deployment.apps/api``);
* a name next to its kind (``pod web-0``, ``the api-v2 deployment``) when the name is a valid
  Kubernetes name *and* has a digit or a hyphen, or is quoted (``deployment "api"``): a bare
  ``pod is`` or ``the deployment`` must not become a name;
* a pod name as a Deployment generates it, anywhere: ``NAME-HASH-SUFFIX`` where the hash and the
  suffix use Kubernetes' own alphabet for generated names (no vowels, no 0, 1 or 3);
* a namespace only in kubectl's own form: ``-n NAME`` or ``--namespace NAME``.

A kind named with two different names is ambiguous and yields nothing. Words of the runbook's
own keywords (``crash-looping``) are never names. The caller says in the report which inputs
came from here, so a wrong guess is visible and can be overridden with an option.

This module must not run anything: it reads a string.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from devops_agent.runbooks.model import Runbook
from devops_agent.runbooks.templating import is_empty

_NAME = r"[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?"
"""A DNS-1123 subdomain, the form of pod, deployment and namespace names."""
_NAME_RE = re.compile(rf"^{_NAME}$")
_START = r"(?<![-\w./])"
_END = r"(?![-\w]|\.\w)"
"""Around a name: not inside a longer word or path; a full stop may end the sentence."""

_KINDS = {
    "pod": ("pod", "pods", "po"),
    "deployment": ("deployment", "deployments", "deploy", "deployment.apps", "deployments.apps"),
}
"""Input name → how the question may name its kind."""

_SAFE = "bcdfghjklmnpqrstvwxz2456789"
"""The alphabet Kubernetes generates name suffixes from (k8s.io/apimachinery rand.SafeEncodeString)."""
_GENERATED_POD = re.compile(rf"{_START}({_NAME}-[{_SAFE}]{{6,10}}-[{_SAFE}]{{5}}){_END}")
_NAMESPACE_FLAG = re.compile(rf"(?:^|\s)(?:-n|--namespace)(?:=|\s+)({_NAME}){_END}")
_QUOTES = "\"'`"


def looks_like_k8s_name(value: str) -> bool:
    """Whether ``value`` is a valid Kubernetes object name (DNS-1123 subdomain, at most 253)."""
    return len(value) <= 253 and _NAME_RE.match(value) is not None


def _kind_alternatives(kind: str) -> str:
    """The kind's words as a case-insensitive group (names themselves are lower case only)."""
    return "(?i:" + "|".join(re.escape(k) for k in sorted(_KINDS[kind], key=len, reverse=True)) + ")"


def _candidates(question: str, kind: str, keywords: set[str]) -> set[str]:
    kinds = _kind_alternatives(kind)
    found: set[str] = set()
    # kubectl's KIND/NAME: explicit, so a plain word counts.
    for m in re.finditer(rf"{_START}{kinds}/({_NAME}){_END}", question):
        found.add(m.group(1))
    # "pod NAME", "NAME pod", quoted or not.
    word = rf"([{_QUOTES}]?)({_NAME})\1"
    for m in re.finditer(rf"{_START}{kinds}\s+{word}{_END}", question):
        found.add(_named(m.group(1), m.group(2)))
    for m in re.finditer(rf"{_START}{word}\s+{kinds}{_END}", question):
        found.add(_named(m.group(1), m.group(2)))
    if kind == "pod":
        found.update(m.group(1) for m in _GENERATED_POD.finditer(question))
    return {n for n in found if n and n not in keywords and n.replace("-", "") not in keywords}


def _named(quote: str, name: str) -> str:
    """``name`` if it is quoted or shaped like a name (a digit or a hyphen), else ``""``."""
    if quote or any(c.isdigit() or c == "-" for c in name):
        return name if any(c.isalpha() for c in name) else ""
    return ""


def inputs_from_question(
    question: str, runbooks: Sequence[Runbook], inputs: Mapping[str, Any]
) -> dict[str, str]:
    """The inputs to take from ``question`` for ``runbooks``: only those a runbook declares and
    ``inputs`` leave empty (a pod only when no selector was given either), each only when the
    question names exactly one."""
    declared = {name for rb in runbooks for name in rb.inputs}
    keywords = {k.lower() for rb in runbooks for k in rb.keywords}
    taken: dict[str, str] = {}
    for kind in _KINDS:
        if kind not in declared or not is_empty(inputs.get(kind)):
            continue
        if kind == "pod" and not is_empty(inputs.get("selector")):
            continue
        names = _candidates(question, kind, keywords)
        if len(names) == 1:
            taken[kind] = names.pop()
    if "namespace" in declared and is_empty(inputs.get("namespace")):
        namespaces = {m.group(1) for m in _NAMESPACE_FLAG.finditer(question)}
        if len(namespaces) == 1:
            taken["namespace"] = namespaces.pop()
    return taken
