"""Analyzers: pure functions that turn gathered tool results into report findings.

Importing this package registers the built-in analyzers in :data:`ANALYZERS`; a plugin adds
its own with :func:`register_analyzer` before runbooks that use it are loaded. See
:mod:`devops_agent.runbooks.analyzers.base` for the contract. Analyzers must not call tools.
"""

from devops_agent.runbooks.analyzers import changes, host, kubernetes, logs, metrics, resources
from devops_agent.runbooks.analyzers.base import (
    ANALYZERS,
    Analyzer,
    CannotAnalyze,
    Evidence,
    register_analyzer,
)

__all__ = [
    "ANALYZERS",
    "Analyzer",
    "CannotAnalyze",
    "Evidence",
    "changes",
    "host",
    "kubernetes",
    "logs",
    "metrics",
    "register_analyzer",
    "resources",
]
