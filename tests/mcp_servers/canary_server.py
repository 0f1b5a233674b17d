"""A real MCP server (stdio) for tests: its tool result carries secrets and identifiers."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("canary")


@server.tool()
def customer_lookup(customer_id: str) -> str:
    """Look up a customer account by id."""
    return (
        f"customer {customer_id}: owner mcp.owner@canary-corp.example, billing host "
        "billing-db-7.canary-corp.example, deploy token ghp_Mc7Tq9Lx2Vb8Nw4Zr6Kp1Hs3Jd5Gf0Ya2eQi"
    )


@server.tool()
def customer_invoices(customer_id: str) -> str:
    """List a customer's invoices."""
    # An error the server reports with its text (isError): pydantic-ai hands it to the model as a
    # retry prompt, which passes neither the privacy wrapper nor the middleware.
    raise ToolError(f"billing API refused customer {customer_id}: api_key=sk_live_51Hc9QmZ2vT8xW4pN6sB3yL7k")


if __name__ == "__main__":
    server.run()
