"""Runners: the ways a run can go — the model loop, the runbooks, the triage workflow.

Each is a :class:`~devops_agent.agent.runners.base.Runner`; :mod:`~devops_agent.agent.runners.router`
picks one per run. A planner joins as one more runner behind the same protocol.
"""
