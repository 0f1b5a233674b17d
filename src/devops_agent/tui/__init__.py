"""The terminal UI (``devops-agent tui``, Textual): a client of the session service in this
process, or of a server (``--server URL --token …``) over its WebSocket and REST API.

It draws the same ``RunEvent`` stream the CLI and the API serve and acts only through
:class:`~devops_agent.tui.client.AgentClient`; it must not hold logic of its own that the CLI or
the API lack, and it must not import the API package (a sibling interface).
"""
