"""The ``jira`` toolset: read issues (with comments, links and the CI builds they mention), search
with JQL, and add a comment, through the official-ish ``jira`` client (pycontribs).

Credentials come from ``settings.jira`` (``url``, ``user``, ``token`` as ``SecretStr``): with a
user, HTTP Basic ``user:token`` (Jira Cloud API tokens); without one, ``Authorization: Bearer``
(Data Center personal access tokens). Without url and token the toolset still loads and every
tool answers with a hint saying what to set. Client errors are mapped here, at the boundary
(:class:`Jira` reads them, :data:`ERRORS` words them): 401/403 → an auth hint, 404 → "no such
issue", 429 → transient with ``retry_after_s``, 5xx and timeouts → transient. The client's own retry loop is
switched off (``max_retries=0``) so the breaker and the model decide about retries. This module
must not change anything in Jira except through ``jira_add_comment`` (read_only=False, so it
goes through approval), and must never put the token in a result or an error message.
"""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import parse_qs, urlsplit

from pydantic import Field
from pydantic_ai import RunContext

from devops_agent.analysis.ci_urls import find_build_links
from devops_agent.config import Settings
from devops_agent.config.settings import JiraSettings
from devops_agent.deps import ToolDeps
from devops_agent.tools.base import ToolResult
from devops_agent.tools.http_status import ErrorTable, Rule, bad_base_url, retry_after_seconds
from devops_agent.tools.integration import Integration

NAME = "jira"
DESCRIPTION = "Read Jira issues (comments, links, CI builds they mention), search with JQL, comment"

DESCRIPTION_MAX_CHARS = 4000
COMMENT_MAX_CHARS = 1500
SEARCH_MAX = 200
CLOUD_SUFFIXES = (".atlassian.net", ".jira.com")
SEARCH_FIELDS = ("summary", "status", "assignee", "priority", "issuetype", "labels", "updated", "created")
ISSUE_FIELDS = ",".join(
    (
        *SEARCH_FIELDS,
        "reporter",
        "resolution",
        "components",
        "fixVersions",
        "description",
        "comment",
        "issuelinks",
    )
)
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*-\d+$")
_NOT_CONFIGURED = (
    "set jira.url/jira.user/jira.token (DEVOPS_AGENT_JIRA__URL, DEVOPS_AGENT_JIRA__USER, "
    "DEVOPS_AGENT_JIRA__TOKEN; leave user unset to send a Data Center personal access token as Bearer) "
    "in devops-agent.toml or the environment"
)
_AUTH_HINT = (
    "check jira.user (the account e-mail on Jira Cloud; unset for a Data Center personal access "
    "token) and jira.token (a Cloud API token, "
    "https://id.atlassian.com/manage-profile/security/api-tokens); the account may also lack "
    "permission for this project"
)
ERRORS = ErrorTable(
    "Jira",
    timeout_hint="retry later or raise jira.timeout_s",
    unreachable_hint="check jira.url and the network path to it",
    rules={
        400: Rule("Jira rejected the request (400){said}", "fix the arguments (JQL syntax?)"),
        401: Rule("Jira refused the request (401){said}", _AUTH_HINT),
        403: Rule("Jira refused the request (403){said}", _AUTH_HINT),
        404: Rule(
            "no such {what} (404){said}",
            "check the key or URL; the issue may also be hidden from this account",
        ),
    },
)


COMMENT_BODY_MAX_CHARS = 32_000
"""Jira rejects comment bodies over 32,767 characters."""
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_MD_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_MD_BOLD = re.compile(r"\*\*(.+?)\*\*")
_MD_CODE = re.compile(r"`([^`]+)`")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")


def markdown_to_wiki(markdown: str) -> str:
    """Our Markdown reports as Jira wiki markup (what ``/rest/api/2`` comment bodies render).

    Headings, bullets (nested by indent), bold, inline code, links and fenced blocks; anything
    else passes through. The result is cut to fit Jira's comment size limit, saying so.
    """
    out: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("{noformat}")
            continue
        if fenced:
            out.append(line)
            continue
        if m := _MD_HEADING.match(line):
            line = f"h{len(m.group(1))}. {m.group(2)}"
        elif m := _MD_BULLET.match(line):
            line = "*" * (1 + len(m.group(1).expandtabs(4)) // 2) + " " + m.group(2)
        line = _MD_LINK.sub(r"[\1|\2]", line)
        line = _MD_CODE.sub(r"{{\1}}", line)
        line = _MD_BOLD.sub(r"*\1*", line)
        out.append(line)
    text = "\n".join(out)
    if len(text) > COMMENT_BODY_MAX_CHARS:
        note = "\n\n_(cut to fit a Jira comment; the full report is in the agent's session)_"
        text = text[: COMMENT_BODY_MAX_CHARS - len(note)] + note
    return text


class Jira(Integration[JiraSettings]):
    """The Jira server of ``settings.jira``, through the ``jira`` client."""

    name = NAME
    description = DESCRIPTION
    extra = "jira"
    package = "jira"
    modules = ("jira",)
    probe_what = "user"

    def section(self, settings: Settings) -> JiraSettings:
        return settings.jira

    def configured(self, settings: Settings) -> bool:
        return bool(settings.jira.url)

    def unusable(self, section: JiraSettings) -> ToolResult | None:
        if not (section.url and section.token and section.token.get_secret_value()):
            return ToolResult.fail("Jira is not configured", _NOT_CONFIGURED)
        return bad_base_url("jira.url", section.url, "DEVOPS_AGENT_JIRA__URL")

    def connect(self, section: JiraSettings, **options: Any) -> Any:
        """A ``jira.JIRA`` client without its start-up requests, update check or retry loop."""
        token = section.token.get_secret_value() if section.token else ""  # unusable() said it is set
        client = self.client_module().JIRA(
            server=(section.url or "").rstrip("/"),
            basic_auth=(section.user, token) if section.user else None,
            token_auth=None if section.user else token,
            get_server_info=False,  # saves a request per call; `deployment` says what serverInfo would
            max_retries=0,
            timeout=section.timeout_s,
            options={"check_update": False},
        )
        if is_cloud(section):
            client.deploymentType = "Cloud"  # what serverInfo reports; selects the Cloud search API
        return client

    def client_errors(self) -> tuple[type[Exception], ...]:
        import requests

        return (self.client_module().JIRAError, requests.RequestException)

    def map_error(
        self, exc: Exception, what: str, section: JiraSettings, client: Any = None, **context: Any
    ) -> ToolResult:
        """A ``jira``/``requests`` exception as a failed result with a hint."""
        import requests

        if isinstance(exc, self.client_module().JIRAError):
            response = exc.response
            retry_after = (
                retry_after_seconds(response.headers.get("Retry-After")) if response is not None else None
            )
            detail = (exc.text or "").strip().splitlines()[0][:300] if exc.text else ""
            return ERRORS.result(exc.status_code, what=what, detail=detail, retry_after=retry_after)
        if isinstance(exc, requests.Timeout):
            return ERRORS.timeout()
        if isinstance(exc, requests.ConnectionError):
            return ERRORS.unreachable()
        raise exc

    def probe(self, client: Any, section: JiraSettings) -> str:
        """``GET /rest/api/2/myself``: who we are logged in as."""
        me = client.myself()
        return f"{section.url} as {me.get('displayName') or me.get('emailAddress') or section.user}"


JIRA = Jira()
"""The integration: settings, client, errors, health check; its tools are declared below."""


def is_cloud(section: JiraSettings) -> bool:
    """Jira Cloud (``deployment``, or under ``auto`` an ``*.atlassian.net`` host), else Server/DC."""
    if section.deployment != "auto":
        return section.deployment == "cloud"
    return (urlsplit(section.url or "").hostname or "").endswith(CLOUD_SUFFIXES)


def parse_issue_key(key_or_url: str) -> str | None:
    """``OPS-123`` from a key or a Jira URL (``/browse/OPS-123``, ``/projects/OPS/issues/OPS-123``,
    a Service Management portal or queue URL, ``?selectedIssue=OPS-123``)."""
    value = key_or_url.strip()
    if _KEY.match(value):
        return value.upper()
    parts = urlsplit(value)
    if not parts.scheme:
        return None
    selected = parse_qs(parts.query).get("selectedIssue")
    if selected and _KEY.match(selected[0]):
        return selected[0].upper()
    segs = [s for s in parts.path.split("/") if s]
    for i, seg in enumerate(segs):
        # /browse/KEY, /rest/api/2/issue/KEY, /projects/OPS/issues/KEY (Cloud's issue navigator)
        if seg in ("browse", "issue", "issues") and i + 1 < len(segs) and _KEY.match(segs[i + 1]):
            return segs[i + 1].upper()
    if "servicedesk" in segs and segs and _KEY.match(segs[-1]):
        return segs[-1].upper()  # JSM: /servicedesk/customer/portal/2/KEY, .../queues/custom/1/KEY
    return None


def _other_site(key_or_url: str, server_url: str) -> ToolResult | None:
    """A failed result when ``key_or_url`` is an issue URL on another host than ``jira.url``.

    Only the key is sent, so the configured Jira would answer about (or comment on) its own
    issue with that key: a different ticket.
    """
    host = urlsplit(key_or_url.strip()).hostname if "://" in key_or_url else None
    ours = urlsplit(server_url).hostname
    if host is None or ours is None or host == ours:
        return None
    return ToolResult.fail(
        f"{key_or_url.strip()} is not on the configured Jira ({ours})",
        "only the site in jira.url is queried; pass the bare key (e.g. OPS-123) if this site is "
        "the same Jira under another name, else point jira.url at that site",
    )


def _name(user: Any) -> str | None:
    if not isinstance(user, dict):
        return None
    return user.get("displayName") or user.get("name") or user.get("emailAddress")


def _text(value: Any) -> str:
    """Plain text of a field: wiki markup strings as they are, Atlassian Document Format flattened."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if value.get("type") == "text":
            return str(value.get("text", ""))
        inner = "".join(_text(c) for c in value.get("content", []) or [])
        block = value.get("type") in ("paragraph", "heading", "codeBlock", "listItem", "blockquote")
        return inner + ("\n" if block else "")
    if isinstance(value, list):
        return "".join(_text(v) for v in value)
    return str(value)


def _cut(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit] + " …", True)


def _summary(raw: dict[str, Any]) -> dict[str, Any]:
    f = raw.get("fields") or {}
    return {
        "key": raw.get("key"),
        "summary": f.get("summary"),
        "status": (f.get("status") or {}).get("name"),
        "issue_type": (f.get("issuetype") or {}).get("name"),
        "priority": (f.get("priority") or {}).get("name"),
        "assignee": _name(f.get("assignee")),
        "labels": f.get("labels") or [],
        "created": f.get("created"),
        "updated": f.get("updated"),
    }


def _issue_links(fields: dict[str, Any]) -> list[dict[str, Any]]:
    links = []
    for link in fields.get("issuelinks") or []:
        kind = link.get("type") or {}
        for direction, label in (("outwardIssue", "outward"), ("inwardIssue", "inward")):
            other = link.get(direction)
            if other:
                links.append(
                    {
                        "relation": kind.get(label) or kind.get("name"),
                        "key": other.get("key"),
                        "summary": (other.get("fields") or {}).get("summary"),
                        "status": ((other.get("fields") or {}).get("status") or {}).get("name"),
                    }
                )
    return links


@JIRA.tool(category="tickets", read_only=True)
def jira_issue(
    ctx: RunContext[ToolDeps], key_or_url: str, max_comments: Annotated[int, Field(ge=0, le=50)] = 5
) -> ToolResult:
    """Read one Jira issue: status, people, priority, labels, description, latest comments, links.

    Also lists the Jenkins build links found in the description, comments and remote links,
    so they can be opened with jenkins_build / jenkins_console.

    Args:
        key_or_url: an issue key such as OPS-123, or its browse URL (https://x.atlassian.net/browse/OPS-123).
        max_comments: how many of the most recent comments to include (0-50).
    """
    key = parse_issue_key(key_or_url)
    if key is None:
        return ToolResult.fail(
            f"{key_or_url!r} is not a Jira issue key or URL", "pass a key like OPS-123 or a /browse/ URL"
        )

    def run(c: Any, _section: JiraSettings) -> ToolResult:
        if (elsewhere := _other_site(key_or_url, c.server_url)) is not None:
            return elsewhere
        raw: dict[str, Any] = c.issue(key, fields=ISSUE_FIELDS).raw
        remote: list[dict[str, Any]] = []
        remote_error = None
        try:
            remote = [r.raw for r in c.remote_links(key)]
        except JIRA.client_module().JIRAError as exc:  # the issue itself is readable: report, go on
            remote_error = f"remote links unavailable ({exc.status_code})"
        f = raw.get("fields") or {}
        description, desc_cut = _cut(_text(f.get("description")), DESCRIPTION_MAX_CHARS)
        block = f.get("comment") or {}
        all_comments = block.get("comments") or []
        comments = []
        for cm in all_comments[-max_comments:] if max_comments else []:
            body, cut = _cut(_text(cm.get("body")), COMMENT_MAX_CHARS)
            comments.append(
                {
                    "author": _name(cm.get("author")),
                    "created": cm.get("created"),
                    "body": body,
                    "truncated": cut,
                }
            )
        remote_links = [
            {
                "title": (r.get("object") or {}).get("title"),
                "url": (r.get("object") or {}).get("url"),
                "relationship": r.get("relationship"),
            }
            for r in remote
        ]
        corpus = "\n".join(
            [_text(f.get("description"))]
            + [_text(cm.get("body")) for cm in all_comments]
            + [str(r["url"]) for r in remote_links if r["url"]]
        )
        data = {
            **_summary(raw),
            "url": f"{c.server_url.rstrip('/')}/browse/{raw.get('key', key)}",
            "reporter": _name(f.get("reporter")),
            "resolution": (f.get("resolution") or {}).get("name"),
            "components": [x.get("name") for x in f.get("components") or []],
            "fix_versions": [x.get("name") for x in f.get("fixVersions") or []],
            "description": description,
            "description_truncated": desc_cut,
            "comments": comments,
            "comment_total": block.get("total", len(all_comments)),
            "issue_links": _issue_links(f),
            "remote_links": remote_links,
            "jenkins_builds": [ref.url for ref in find_build_links(corpus)],
        }
        if remote_error:
            data["remote_links_error"] = remote_error
        return ToolResult.ok(data, source=f"jira issue {key}")

    return JIRA.call(ctx.deps.settings, "issue", run)


@JIRA.tool(category="tickets", read_only=True)
def jira_search(
    ctx: RunContext[ToolDeps], jql: str, limit: Annotated[int, Field(ge=1, le=SEARCH_MAX)] = 20
) -> ToolResult:
    """Search Jira issues with JQL; returns key, summary, status, type, priority, assignee, dates.

    Use it to find related or duplicate incidents, e.g.
    jql='project = OPS AND text ~ "payment timeout" AND created >= -7d ORDER BY created DESC'.

    Args:
        jql: a JQL query.
        limit: most issues to return (1-200); results are fetched page by page.
    """

    def run(c: Any, _section: JiraSettings) -> ToolResult:
        issues: list[dict[str, Any]] = []
        total: int | None = None
        more, pages, start, token = True, 0, 0, None
        while more and len(issues) < limit:
            want = limit - len(issues)
            if c.deploymentType == "Cloud":
                # Jira Cloud retired /search; /search/jql pages with a token and gives no total.
                page = c.enhanced_search_issues(
                    jql,
                    nextPageToken=token,
                    maxResults=want,
                    fields=list(SEARCH_FIELDS),
                    json_result=True,
                )
                batch = page.get("issues") or []
                token = page.get("nextPageToken")
                more = bool(batch) and bool(token) and not page.get("isLast", False)
            else:
                page = c.search_issues(
                    jql, startAt=start, maxResults=want, fields=list(SEARCH_FIELDS), json_result=True
                )
                batch = page.get("issues") or []
                total = int(page.get("total", len(batch)))
                start += len(batch)
                more = bool(batch) and start < total
            pages += 1
            issues.extend(_summary(raw) for raw in batch)
        if not issues:
            return ToolResult.empty(f"no issues match: {jql}")
        kept = issues[:limit]
        data = {
            "issues": kept,
            "count": len(kept),
            "total": total,
            "more_available": more or len(issues) > limit,
        }
        return ToolResult.ok(data, source="jira search", pages=pages)

    return JIRA.call(ctx.deps.settings, "search result", run)


@JIRA.tool(category="tickets", read_only=False, risk="sensitive")
def jira_add_comment(ctx: RunContext[ToolDeps], key: str, body: str) -> ToolResult:
    """Add a comment to a Jira issue (visible to everyone who can see the issue).

    Args:
        key: the issue key such as OPS-123, or its browse URL.
        body: the comment text (Jira wiki markup).
    """
    issue_key = parse_issue_key(key)
    if issue_key is None:
        return ToolResult.fail(f"{key!r} is not a Jira issue key or URL", "pass a key like OPS-123")
    if not body.strip():
        return ToolResult.fail("the comment body is empty", "write the comment text in `body`")

    def run(c: Any, _section: JiraSettings) -> ToolResult:
        if (elsewhere := _other_site(key, c.server_url)) is not None:
            return elsewhere
        comment = c.add_comment(issue_key, body).raw
        browse = f"{c.server_url.rstrip('/')}/browse/{issue_key}"
        return ToolResult.ok(
            {
                "key": issue_key,
                "comment_id": comment.get("id"),
                "author": _name(comment.get("author")),
                "created": comment.get("created"),
                "url": f"{browse}?focusedCommentId={comment.get('id')}",
            },
            source=f"jira comment {issue_key}",
        )

    return JIRA.call(ctx.deps.settings, "issue", run)


def configured(settings: Settings) -> str | None:
    """``None`` when Jira is configured (url and token), else what to set; nothing is contacted."""
    problem = JIRA.unusable(JIRA.section(settings))
    return None if problem is None else (problem.hint or problem.error)


build = JIRA.build
check = JIRA.check
register = JIRA.register
