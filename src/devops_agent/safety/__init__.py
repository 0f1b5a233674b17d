"""Safety policies for shell commands proposed by the model: classify, then decide.

:func:`classify` parses a command with a real shell parser, builds its words and options the
way bash and each program do, resolves the program by path (``resolver=``), and rates it
``read_only``, ``mutating``, ``unknown`` or ``destructive``; :func:`decide` turns that into
allow / approve / approve_detailed / reject for a session mode; :func:`impact` fills the
detailed approval form.
This package belongs to the policies layer: it may import ``tools.base``, ``config`` and
``errors``, never ``cli/`` or ``agent/``, and it never executes a command.
"""

from __future__ import annotations

from devops_agent.safety.classifier import Classification, CommandResult, classify
from devops_agent.safety.commands.base import LEVEL_RANK, Level
from devops_agent.safety.policy import Decision, Impact, PolicyDecision, decide, impact

__all__ = [
    "LEVEL_RANK",
    "Classification",
    "CommandResult",
    "Decision",
    "Impact",
    "Level",
    "PolicyDecision",
    "classify",
    "decide",
    "impact",
]
