"""The single-concern wrapper toolsets the tool pipeline is composed of.

Each module holds one wrapper in the style of pydantic-ai's ``WrapperToolset`` subclasses: it
sees a call's arguments on the way in and its :class:`~devops_agent.tools.base.ToolResult` on the
way out, and does one thing. Their order is decided in exactly one place,
:func:`devops_agent.policies.pipeline.build_pipeline`; nothing else stacks them.
"""
