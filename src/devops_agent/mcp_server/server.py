"""DevOps Agent as an MCP server: our tools, investigations, runbooks and reports for MCP clients.

What a client gets:

* **tools** — our read-only tools, annotated ``readOnlyHint: true``; with ``--allow-mutating`` the
  rest too (annotated as changing, destructive where they are), each call still needing its
  client's user's approval (:mod:`.approval`); and four high-level tools: ``investigate`` (a whole
  read-only investigation, runbooks or the configured model), ``triage`` (a ticket, when Jira is
  configured: ``jira.url``), ``search_knowledge`` and ``search_memory``;
* **prompts** — one per runbook, which asks the client's model to investigate with it;
* **resources** — sessions (``devops-agent://sessions/ID``, JSON) and their reports
  (``devops-agent://reports/ID``, Markdown).

Every call runs through :meth:`SessionService.call_tool`, the pipeline the CLI's calls take: the
gate (ask mode unless ``--allow-mutating``), the privacy guard (a model reads what we send: with the
guard on, identifiers are masked and the client's placeholders restored), the breaker, the output
cap, the session's record and the audit log. The privacy guard counts as on unless
``privacy.enabled = "off"``: we cannot know where the client's model runs.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as t
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from pydantic_ai import RunContext
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from devops_agent import __version__
from devops_agent.agent.plugins import available_runbooks
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.errors import DevOpsAgentError, NotFoundError, UserError
from devops_agent.events import RunFinished
from devops_agent.mcp_server.approval import ElicitingAsker, NeedsInput
from devops_agent.mcp_server.http import Principal, principal_of
from devops_agent.policies.modes import Mode
from devops_agent.policies.pipeline import privacy_guard
from devops_agent.runbooks.model import Runbook
from devops_agent.secrets.scrubber import scrub
from devops_agent.store import SessionRecord, Store
from devops_agent.tools.base import ToolResult, spec_from_metadata

SCHEME = "devops-agent"
INSTRUCTIONS = """\
DevOps Agent investigates operational problems with tools under safety and privacy policies.
Start with `investigate` for a whole investigation (it returns a report with findings, evidence
and what could not be checked), or call the individual read-only tools. Values like
<<HOST_1a2b3c4d>> are placeholders for masked identifiers: pass them back as they are."""

Handler = Callable[[dict[str, Any], ServerRequestContext[Any, Any]], Awaitable[t.CallToolResult]]


def annotations_for(metadata: dict[str, Any] | None) -> t.ToolAnnotations:
    """A tool's MCP annotations from its :class:`ToolSpec`: read-only ones say so; the others say
    they change things, and whether destructively; the shell can reach anything (open world)."""
    spec = spec_from_metadata(metadata)
    if spec is None or not spec.read_only:
        destructive = spec is None or spec.risk == "destructive" or bool(spec.command_arg)
        open_world = True if spec is None or spec.command_arg else None
        return t.ToolAnnotations(
            read_only_hint=False, destructive_hint=destructive, open_world_hint=open_world
        )
    return t.ToolAnnotations(read_only_hint=True, destructive_hint=False)


def call_result(result: ToolResult) -> t.CallToolResult:
    """A :class:`ToolResult` as an MCP result: its JSON, structured too; an error flagged as one."""
    data = result.model_dump(mode="json", exclude_none=True)
    return t.CallToolResult(
        content=[t.TextContent(type="text", text=json.dumps(data, ensure_ascii=False, default=str))],
        structured_content=data,
        is_error=result.status == "error",
    )


def text_result(text: str, *, error: bool = False) -> t.CallToolResult:
    return t.CallToolResult(content=[t.TextContent(type="text", text=text)], is_error=error)


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


HIGH_LEVEL: dict[str, tuple[str, dict[str, Any]]] = {
    "investigate": (
        "Investigate an operational question end to end (read-only): the runbooks, or the configured "
        "model with our tools; returns the report with findings, evidence and what could not be checked.",
        _object(
            {
                "question": {"type": "string", "description": "what to investigate, in words"},
                "runbooks": {"type": "array", "items": {"type": "string"}, "description": "runbooks to run"},
                "since": {"type": "string", "description": "start of the window: 2h, 1d, an ISO time"},
            },
            ["question"],
        ),
    ),
    "triage": (
        "Triage an incident ticket (Jira key or URL) and the CI builds it links (read-only).",
        _object({"ticket": {"type": "string", "description": "e.g. OPS-123"}}, ["ticket"]),
    ),
    "search_knowledge": (
        "Search the indexed runbooks, postmortems or code for passages relevant to the query, "
        "with citations.",
        _object(
            {
                "query": {"type": "string"},
                "collection": {
                    "type": "string",
                    "enum": ["runbooks", "postmortems", "code"],
                    "default": "runbooks",
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
            },
            ["query"],
        ),
    ),
    "search_memory": (
        "Recall findings of earlier investigations of this project related to a symptom, service or error.",
        _object(
            {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
            },
            ["query"],
        ),
    ),
}


@dataclass
class AgentMcpServer:
    """The MCP server's handlers over one session service (see the module docstring)."""

    settings: Settings
    store: Store
    allow_mutating: bool = False
    service: SessionService | None = None
    principal: Principal = Principal("mcp-client", frozenset({"operator"}))
    """Whose calls these are where the transport names nobody (stdio: the user who started us);
    over HTTP the bearer token's principal, whose roles decide whether it may change things."""
    _sessions: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.service is None:
            # No model is started for plain tool calls; `investigate` uses the configured one.
            self.service = SessionService(
                self.settings, self.store, privacy=self.settings.privacy.enabled != "off"
            )
        self.server: Server[Any] = Server(
            "devops-agent",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
        )

    @property
    def sessions(self) -> SessionService:
        assert self.service is not None
        return self.service

    # -- tools ----------------------------------------------------------------------------------

    async def _our_tools(self) -> dict[str, Any]:
        """Our tools' definitions by name (pydantic-ai's, with each spec in the metadata)."""
        ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
        defs: dict[str, Any] = {}
        for builder in self.sessions.catalog.toolsets.values():
            for name, tool in (await builder.to_pydantic_ai().get_tools(ctx)).items():
                defs[name] = tool.tool_def
        return defs

    def _who(self, ctx: ServerRequestContext[Any, Any]) -> Principal:
        return principal_of(ctx.request) or self.principal

    def _mode(self, who: Principal) -> Mode:
        """Agent mode (changes with approval) only when the server allows it and the caller may."""
        return "agent" if self.allow_mutating and who.can_change else "ask"

    def _offered(self, metadata: dict[str, Any] | None, who: Principal) -> bool:
        spec = spec_from_metadata(metadata)
        return self._mode(who) == "agent" or (spec is not None and spec.read_only)

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: t.PaginatedRequestParams | None
    ) -> t.ListToolsResult:
        tools = [
            t.Tool(
                name=name,
                description=desc,
                input_schema=schema,
                annotations=t.ToolAnnotations(read_only_hint=True),
            )
            for name, (desc, schema) in HIGH_LEVEL.items()
            if name != "triage" or (self.settings.jira.url and "jira_issue" in self.sessions.catalog.entries)
        ]
        who = self._who(ctx)
        for name, tool_def in (await self._our_tools()).items():
            if name in HIGH_LEVEL or not self._offered(tool_def.metadata, who):
                continue
            tools.append(
                t.Tool(
                    name=name,
                    description=tool_def.description,
                    input_schema=tool_def.parameters_json_schema,
                    annotations=annotations_for(tool_def.metadata),
                )
            )
        return t.ListToolsResult(tools=tools)

    def _session_id(self, who: Principal) -> str:
        """The store session the calls of a principal are recorded in (one each, made on first use)."""
        sid = self._sessions.get(who.name)
        if sid is None:
            record = self.store.create_session(
                title=f"MCP client {who.name}", mode=self._mode(who), model=None, user_id=who.user_id
            )
            sid = self._sessions[who.name] = record.id
        return sid

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: t.CallToolRequestParams
    ) -> t.CallToolResult | t.InputRequiredResult:
        name, args = params.name, dict(params.arguments or {})
        who = self._who(ctx)
        try:
            high = self._high_level().get(name)
            if high is not None:
                return await high(args, ctx)
            ours = await self._our_tools()
            if name in ours and not self._offered(ours[name].metadata, who):
                why = (
                    "the server runs without --allow-mutating"
                    if not self.allow_mutating
                    else (f"{who.name} may not change things (needs the operator role)")
                )
                return text_result(f"{name} changes things and is not offered: {why}", error=True)
            asker = ElicitingAsker(ctx, params, approver=f"mcp:{who.name}")
            result = await self.sessions.call_tool(
                self._session_id(who),
                name,
                args,
                mode=self._mode(who),
                ask=asker,
                model_reads=True,
                mcp=False,
            )
            return call_result(result)
        except NeedsInput as needs:
            return needs.result
        except DevOpsAgentError as exc:
            return text_result(exc.one_line(), error=True)

    def _high_level(self) -> dict[str, Handler]:
        return {
            "investigate": self._investigate,
            "triage": self._triage,
            "search_knowledge": self._search_knowledge,
            "search_memory": self._search_memory,
        }

    def _masked(self, session_id: str, text: str) -> str:
        """What the client's model may read of a session's text: identifiers masked with that
        session's placeholders when the privacy guard is on; secrets cut out always."""
        guard = privacy_guard(
            self.settings, self.store, session_id, model_reads=True, privacy=self.sessions.privacy
        )
        if guard is None:
            return scrub(text).text
        masked = guard.mask_value(text, "tool_out")
        return masked if isinstance(masked, str) else json.dumps(masked)

    async def investigation(self, prompt: str, inputs: dict[str, Any], who: Principal) -> RunFinished:
        """Run one read-only investigation for ``who`` to its end. The service overrides it, so its
        MCP clients' runs count against their user's limit of concurrent runs and in /metrics."""
        _events, final = await self.sessions.run(prompt, mode="ask", inputs=inputs, user_id=who.user_id)
        return final

    async def _run(self, prompt: str, inputs: dict[str, Any], who: Principal) -> t.CallToolResult:
        final = await self.investigation(prompt, inputs, who)
        body = self._masked(final.session_id, final.output or "(no answer)")
        sid = final.session_id
        footer = f"\n\n---\nsession {sid} ({SCHEME}://reports/{sid}); status {final.status}"
        return text_result(body + footer, error=final.status != "completed")

    async def _investigate(
        self, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> t.CallToolResult:
        question = str(args.get("question") or "").strip()
        if not question:
            return text_result("investigate needs a question", error=True)
        inputs: dict[str, Any] = {}
        if args.get("runbooks"):
            inputs["runbooks"] = [str(r) for r in args["runbooks"]]
        if args.get("since"):
            inputs["since"] = str(args["since"])
        return await self._run(question, inputs, self._who(ctx))

    async def _triage(self, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]) -> t.CallToolResult:
        ticket = str(args.get("ticket") or "").strip()
        if not ticket:
            return text_result("triage needs a ticket key or URL", error=True)
        return await self._run(f"triage {ticket}", {"ticket": ticket}, self._who(ctx))

    async def _through(self, tool: str, args: dict[str, Any], who: Principal) -> t.CallToolResult:
        result = await self.sessions.call_tool(
            self._session_id(who), tool, args, mode="ask", model_reads=True, mcp=False
        )
        return call_result(result)

    async def _search_knowledge(
        self, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> t.CallToolResult:
        collection = args.get("collection") or "runbooks"
        query, limit = str(args.get("query") or ""), int(args.get("limit") or 5)
        who = self._who(ctx)
        if collection == "code":
            return await self._through("retrieve_code_context", {"query": query, "limit": limit}, who)
        args = {"query": query, "collection": collection, "limit": limit}
        return await self._through("search_kb", args, who)

    async def _search_memory(
        self, args: dict[str, Any], ctx: ServerRequestContext[Any, Any]
    ) -> t.CallToolResult:
        query, limit = str(args.get("query") or ""), int(args.get("limit") or 5)
        return await self._through("search_memory", {"query": query, "limit": limit}, self._who(ctx))

    # -- prompts: runbooks ----------------------------------------------------------------------

    def _runbooks(self) -> dict[str, Runbook]:
        return {rb.name: rb for rb in available_runbooks(self.settings, self.sessions.catalog.registry)}

    async def list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: t.PaginatedRequestParams | None
    ) -> t.ListPromptsResult:
        prompts = [
            t.Prompt(
                name=rb.name,
                title=rb.title,
                description=rb.description or rb.title,
                arguments=[
                    t.PromptArgument(name="question", description="what to investigate", required=False)
                ]
                + [
                    t.PromptArgument(name=k, description=v.description or None, required=v.required)
                    for k, v in rb.inputs.items()
                    if k != "question"
                ],
            )
            for rb in self._runbooks().values()
        ]
        return t.ListPromptsResult(prompts=prompts)

    async def get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: t.GetPromptRequestParams
    ) -> t.GetPromptResult:
        rb = self._runbooks().get(params.name)
        if rb is None:
            raise ValueError(f"no runbook named {params.name!r}")
        given = dict(params.arguments or {})
        question = given.pop("question", None) or rb.title
        lines = [
            f"Investigate with the DevOps Agent runbook {rb.name!r} ({rb.title}).",
            rb.description,
            f"Question: {question}",
        ]
        if given:
            lines.append("Inputs: " + ", ".join(f"{k}={v}" for k, v in given.items()))
        lines.append("What it checks:")
        lines += [f"- {s.description or s.id} (tool {s.tool})" for s in rb.steps]
        lines.append(
            f'Call the `investigate` tool with question={question!r} and runbooks=["{rb.name}"], '
            "then report its findings with their evidence and say what could not be checked."
        )
        text = "\n".join(line for line in lines if line)
        return t.GetPromptResult(
            description=rb.title,
            messages=[t.PromptMessage(role="user", content=t.TextContent(type="text", text=text))],
        )

    # -- resources: sessions and reports --------------------------------------------------------

    async def list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: t.PaginatedRequestParams | None
    ) -> t.ListResourcesResult:
        resources: list[t.Resource] = []
        who = self._who(ctx)
        if who.user_id is None or "admin" in who.roles:
            listed = self.store.list_sessions(limit=50)
        else:  # a service user: their own sessions only
            listed = self.store.find_sessions(user_id=who.user_id, limit=50)[0]
        for s in listed:
            title = self._masked(s.id, s.title)
            resources.append(
                t.Resource(
                    uri=f"{SCHEME}://sessions/{s.id}",
                    name=f"session {s.id[:12]}",
                    description=title,
                    mime_type="application/json",
                )
            )
            if s.status == "completed":
                resources.append(
                    t.Resource(
                        uri=f"{SCHEME}://reports/{s.id}",
                        name=f"report {s.id[:12]}",
                        description=title,
                        mime_type="text/markdown",
                    )
                )
        return t.ListResourcesResult(resources=resources)

    async def list_resource_templates(
        self, ctx: ServerRequestContext[Any, Any], params: t.PaginatedRequestParams | None
    ) -> t.ListResourceTemplatesResult:
        return t.ListResourceTemplatesResult(
            resource_templates=[
                t.ResourceTemplate(
                    uri_template=f"{SCHEME}://sessions/{{session_id}}",
                    name="session",
                    mime_type="application/json",
                ),
                t.ResourceTemplate(
                    uri_template=f"{SCHEME}://reports/{{session_id}}",
                    name="report",
                    mime_type="text/markdown",
                ),
            ]
        )

    async def read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: t.ReadResourceRequestParams
    ) -> t.ReadResourceResult:
        uri = str(params.uri)
        prefix, _, rest = uri.partition("://")
        kind, _, sid = rest.partition("/")
        if prefix != SCHEME or kind not in ("sessions", "reports") or not sid:
            raise ValueError(f"unknown resource {uri!r}: use {SCHEME}://sessions/ID or {SCHEME}://reports/ID")
        who = self._who(ctx)
        if who.user_id is None:
            session = self.store.get_session(sid)
        else:
            session = self._own_session(who, sid)
        if kind == "reports":
            text, mime = self._report_text(session.id), "text/markdown"
        else:
            text, mime = json.dumps(self._session_data(session.id), default=str, indent=1), "application/json"
        return t.ReadResourceResult(
            contents=[t.TextResourceContents(uri=uri, mime_type=mime, text=self._masked(session.id, text))]
        )

    def _own_session(self, who: Principal, sid: str) -> SessionRecord:
        """A service user's session by its whole id. Another user's reads as one that does not
        exist (ids must not leak); no prefixes, as one matching several would tell of others'."""
        try:
            session = self.store.get_session(sid)
        except UserError:
            session = None
        if session is None or session.id != sid or not who.sees(session.user_id):
            raise NotFoundError(f"no session {sid!r}", hint="list the resources to see your sessions")
        return session

    def _report_text(self, session_id: str) -> str:
        finished = [e for e in self.store.list_events(session_id) if e.type == "run_finished"]
        for event in reversed(finished):
            output = json.loads(event.payload).get("output")
            if output:
                return str(output)
        return "(this session has no report yet)"

    def _session_data(self, session_id: str) -> dict[str, Any]:
        s = self.store.get_session(session_id)
        calls = self.store.list_tool_calls(session_id)
        return {
            "id": s.id,
            "title": s.title,
            "mode": s.mode,
            "status": s.status,
            "model": s.model,
            "created_at": s.created_at,
            "updated_at": s.updated_at,
            "runs": [
                {"id": r.id, "status": r.status, "path": r.path} for r in self.store.list_runs(session_id)
            ],
            "tool_calls": [{"tool": c.tool, "status": c.status, "error": c.error} for c in calls],
            "report": f"{SCHEME}://reports/{s.id}",
        }
