"""DevOps Agent as an MCP server (an interface, beside the CLI and the API).

``server`` holds the handlers (tools, prompts, resources), ``approval`` the approvals asked of the
client's user by elicitation, ``http`` the Streamable HTTP app with bearer auth (mountable in the
service), ``run`` the ``devops-agent mcp serve`` entry points. See docs/mcp.md.
"""
