"""The privacy canary's values and tools: secrets and identifiers that must never reach a model,
a tool registry whose tools return and fail with them (:func:`canary_registry`), and a scripted
model that records every request it receives (:class:`RecordingModel`). The canary test, the MCP
privacy test, triage and the secret-file tests search what the model saw for these values.
:func:`random_text` makes the random-looking, reproducible token bodies of the secrets tests."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic_ai import ModelMessagesTypeAdapter
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.config import Settings
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry

KEY = "canary-hmac-key"


def random_text(alphabet: str, n: int, seed: str) -> str:
    """``n`` characters of ``alphabet`` drawn from SHA-256 of ``seed``: random-looking, reproducible."""
    out: list[str] = []
    i = 0
    while len(out) < n:
        out.extend(alphabet[b % len(alphabet)] for b in hashlib.sha256(f"{seed}:{i}".encode()).digest())
        i += 1
    return "".join(out[:n])


DB_HOST = "billing-db-7.prod.canary-corp.example"
JENKINS = "jenkins.canary-corp.example"
EMAIL = "ops.lead@canary-corp.example"
USER_TOKEN = "ghp_R8kq2LmZ7vT1xW9pN4sB6yH3cJ5dF0gA2eUo"
TOOL_PASSWORD = "Hunter2-canary-Secret"
AWS_KEY = "AKIAQ4BXR7TZLM2KWN5P"
ERROR_TOKEN = "glpat-Xk29Qm7vLp3Rt8Wz1Ns4"
MCP_VALUES = (
    "mcp.owner@canary-corp.example",
    "billing-db-7.canary-corp.example",
    "ghp_Mc7Tq9Lx2Vb8Nw4Zr6Kp1Hs3Jd5Gf0Ya2eQi",
)


MCP_ERROR_KEY = "sk_live_51Hc9QmZ2vT8xW4pN6sB3yL7k"  # in an MCP tool's error (a retry prompt)
SECRETS = (USER_TOKEN, TOOL_PASSWORD, AWS_KEY, ERROR_TOKEN, MCP_VALUES[2], MCP_ERROR_KEY)
IDENTIFIERS = (DB_HOST, JENKINS, EMAIL, MCP_VALUES[0], MCP_VALUES[1])
MCP_SERVER = Path(__file__).parent / "mcp_servers" / "canary_server.py"


def canary_registry() -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("canary")

        @ts.tool(read_only=True)
        def deploy_status(host: str, owner_email: str) -> ToolResult:
            """Deployment status of a host."""
            RECEIVED.append({"host": host, "owner_email": owner_email})
            return ToolResult.ok(
                f"{host} degraded since 14:05; db password={TOOL_PASSWORD}; "
                f"aws_access_key_id={AWS_KEY}; paged {owner_email} and oncall@canary-corp.example"
            )

        @ts.tool(read_only=True)
        def fetch_build(url: str) -> str:
            """Fetch a CI build."""
            RECEIVED.append({"url": url})
            raise RuntimeError(f"cannot reach {url} with private_token={ERROR_TOKEN}")

        return ts

    registry = ToolRegistry()
    registry.add_toolset("canary", build)
    return registry


class RecordingModel(ScriptedModel):
    """The scripted model, keeping a copy of every request it receives."""

    def __init__(self, script: Script) -> None:
        self.requests: list[str] = []
        super().__init__(script)

    def _record(self, messages: list[ModelMessage], info: AgentInfo) -> None:
        self.requests.append(ModelMessagesTypeAdapter.dump_json(messages).decode() + repr(info))

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> Any:
        self._record(messages, info)
        return super()._respond(messages, info)

    def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> Any:
        self._record(messages, info)
        return super()._stream(messages, info)


RECEIVED: list[dict[str, Any]] = []
