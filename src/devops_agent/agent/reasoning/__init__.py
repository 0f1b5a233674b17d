"""Reasoning with a model: plans made with the user, specialists, councils, and the critic.

The planner runner (:mod:`devops_agent.agent.runners.planner`) puts these together: plans and
their tracking (``plan``, ``desk``), the structured answers and the report they become
(``answer``), specialists as data and at work (``specialists``, ``delegation``, ``council``), the
runbooks and analyzers as tools (``worktools``), the evidence ledger and the critics (``ledger``,
``critic``, ``review``), and the one place structured output is asked for (``structured``).
Nothing here is imported by this package's ``__init__``: each module is loaded where it is used.
"""
