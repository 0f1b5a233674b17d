"""A real MCP server (stdio) for tests: its tool result carries secrets and identifiers."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("canary")


@server.tool()
def customer_lookup(customer_id: str) -> str:
    """Look up a customer account by id."""
    return (
        f"customer {customer_id}: owner mcp.owner@canary-corp.example, billing host "
        "billing-db-7.canary-corp.example, deploy token ghp_Mc7Tq9Lx2Vb8Nw4Zr6Kp1Hs3Jd5Gf0Ya2eQi"
    )


if __name__ == "__main__":
    server.run()
