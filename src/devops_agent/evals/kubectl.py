"""A kubectl command line as the fields the tool mapping matches on (``derive: kubectl``).

A model with a shell tool types ``kubectl describe pod web-0 -n shop`` where another calls
``k8s_describe``; HolmesGPT recorded both kinds of calls as ``kubectl_describe(kind, name,
namespace)``. :func:`kubectl_fields` reads the command — verb, kind, name, namespace, and the
flags that change what is read (``--previous``, ``-A``, ``-o yaml``, ``--for``, ``-c``) — so the
mapping can answer it from the same recordings. A pipeline, a redirection, or another program is
not a kubectl read and gives nothing (the call stays unmatched). Flag order does not matter.
This module parses a string; it runs nothing.
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath
from typing import Any

_VALUED = {
    "-n": "namespace",
    "--namespace": "namespace",
    "-o": "output",
    "--output": "output",
    "-c": "container",
    "--container": "container",
    "-l": "selector",
    "--selector": "selector",
    "--for": "for",
    "--tail": "tail",
    "--since": "since",
    "--since-time": "since",
    "--context": "context",
    "--field-selector": "field_selector",
    "--sort-by": "sort_by",
}
_SWITCHES = {
    "-A": "all_namespaces",
    "--all-namespaces": "all_namespaces",
    "-p": "previous",
    "--previous": "previous",
    "--all-containers": "all_containers",
}
_SHELL = {"|", "||", "&&", ";", ">", ">>", "<", "&"}


def kubectl_fields(command: Any) -> dict[str, Any]:
    """``verb``, ``kind``, ``name``, ``namespace``, ``output``, ``container``, ``all_namespaces``,
    ``previous`` … of a kubectl command; ``{}`` when ``command`` is not one plain kubectl read."""
    if not isinstance(command, str):
        return {}
    try:
        argv = shlex.split(command)
    except ValueError:
        return {}
    if not argv or PurePosixPath(argv[0]).name != "kubectl" or any(a in _SHELL for a in argv):
        return {}
    out: dict[str, Any] = {"all_namespaces": False, "previous": False, "all_containers": False}
    positional: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        flag, eq, value = arg.partition("=")
        if flag in _VALUED:
            if not eq:
                i += 1
                value = argv[i] if i < len(argv) else ""
            out[_VALUED[flag]] = value
        elif arg in _SWITCHES:
            out[_SWITCHES[arg]] = True
        elif not arg.startswith("-"):
            positional.append(arg)
        i += 1
    if not positional:
        return {}
    verb, rest = positional[0], positional[1:]
    out["verb"] = verb
    if verb == "logs" and rest:
        kind, _, name = rest[0].rpartition("/")
        out["kind"], out["name"] = kind or "pod", name
    elif verb == "events" and out.get("for"):
        kind, _, name = str(out["for"]).rpartition("/")
        out["kind"], out["name"] = kind or None, name
    elif rest:
        kind, slash, name = rest[0].partition("/")
        out["kind"] = kind
        out["name"] = name if slash else (rest[1] if len(rest) > 1 else None)
    return out
