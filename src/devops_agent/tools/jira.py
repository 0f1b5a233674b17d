"""The ``jira`` toolset: read issues (with comments, links and the CI builds they mention), search
with JQL, and add a comment, through the official-ish ``jira`` client (pycontribs).

Credentials come from ``settings.jira`` (``url``, ``user``, ``token`` as ``SecretStr``): with a
user, HTTP Basic ``user:token`` (Jira Cloud API tokens); without one, ``Authorization: Bearer``
(Data Center personal access tokens). Without url and token
them the toolset still loads and every tool answers with a hint saying what to set. Client
errors are mapped here, at the boundary: 401/403 → an auth hint, 404 → "no such issue", 429 →
transient with ``retry_after_s``, 5xx and timeouts → transient. The client's own retry loop is
switched off (``max_retries=0``) so the breaker and the model decide about retries. This module
must not change anything in Jira except through ``jira_add_comment`` (read_only=False, so it
goes through approval), and must never put the token in a result or an error message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from devops_agent.config import Settings
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.ci_urls import find_build_links
from devops_agent.tools.http_status import bad_base_url, rate_limited, retry_after_seconds, server_error
from devops_agent.tools.registry import ToolRegistry

NAME = "jira"
EXTRA = "jira"
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


def _import_client() -> Any:
    try:
        import jira
    except ImportError as exc:
        raise ImportError(
            f"the jira toolset needs the `jira` package: pip install 'devops-agent[{EXTRA}]'"
        ) from exc
    return jira


def _secret(value: Any) -> str | None:
    if value is None:
        return None
    getter = getattr(value, "get_secret_value", None)
    return str(getter() if callable(getter) else value) or None


@dataclass(frozen=True)
class _Conf:
    url: str
    user: str | None
    token: str
    timeout_s: float
    cloud: bool


def _config(settings: Any) -> _Conf | None:
    """The connection settings from ``settings.jira``; ``None`` when url or token is missing."""
    conf = getattr(settings, "jira", None)
    if conf is None:
        return None
    url, user, token = (
        getattr(conf, "url", None),
        getattr(conf, "user", None),
        _secret(getattr(conf, "token", None)),
    )
    if not (url and token):
        return None
    url = str(url).rstrip("/")
    deployment = getattr(conf, "deployment", "auto")
    cloud = deployment == "cloud" or (
        deployment == "auto" and (urlsplit(url).hostname or "").endswith(CLOUD_SUFFIXES)
    )
    return _Conf(url, str(user) if user else None, token, float(getattr(conf, "timeout_s", 20.0)), cloud)


def _connect(conf: _Conf) -> Any:
    """A ``jira.JIRA`` client without its start-up requests, update check or retry loop."""
    jira = _import_client()
    client = jira.JIRA(
        server=conf.url,
        basic_auth=(conf.user, conf.token) if conf.user else None,
        token_auth=None if conf.user else conf.token,
        get_server_info=False,  # saves a request per call; `deployment` says what serverInfo would
        max_retries=0,
        timeout=conf.timeout_s,
        options={"check_update": False},
    )
    if conf.cloud:
        client.deploymentType = "Cloud"  # what serverInfo reports; selects the Cloud search API
    return client


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


def map_error(exc: Exception, what: str) -> ToolResult:
    """Turn a ``jira``/``requests`` exception into a failed :class:`ToolResult` with a hint."""
    import requests

    jira = _import_client()
    if isinstance(exc, jira.JIRAError):
        status = exc.status_code
        response = exc.response
        detail = (exc.text or "").strip().splitlines()[0][:300] if exc.text else ""
        suffix = f": {detail}" if detail else ""
        if status in (401, 403):
            return ToolResult.fail(f"Jira refused the request ({status}){suffix}", _AUTH_HINT, status=status)
        if status == 404:
            return ToolResult.fail(
                f"no such {what} (404){suffix}",
                "check the key or URL; the issue may also be hidden from this account",
                status=404,
            )
        if status == 429:
            headers = response.headers if response is not None else {}
            return rate_limited("Jira", retry_after_seconds(headers.get("Retry-After")))
        if status is not None and status >= 500:
            return server_error("Jira", status, suffix)
        if status == 400:
            return ToolResult.fail(
                f"Jira rejected the request (400){suffix}", "fix the arguments (JQL syntax?)"
            )
        return ToolResult.fail(f"Jira request failed ({status}){suffix}")
    if isinstance(exc, requests.Timeout):
        return ToolResult.fail(
            "Jira did not answer in time", "retry later or raise jira.timeout_s", transient=True
        )
    if isinstance(exc, requests.ConnectionError):
        return ToolResult.fail(
            "cannot connect to Jira", "check jira.url and the network path to it", transient=True
        )
    raise exc


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


def build(settings: Settings) -> ToolsetBuilder:
    """The Jira toolset; raises ImportError naming the extra when the ``jira`` package is missing."""
    _import_client()
    ts = ToolsetBuilder(NAME, DESCRIPTION)

    def call(what: str, fn: Callable[[Any], ToolResult]) -> ToolResult:
        conf = _config(settings)
        if conf is None:
            return ToolResult.fail("Jira is not configured", _NOT_CONFIGURED)
        if (bad := bad_base_url("jira.url", conf.url, "DEVOPS_AGENT_JIRA__URL")) is not None:
            return bad
        import requests

        jira = _import_client()
        try:
            with closing(_connect(conf)) as c:
                return fn(c)
        except (jira.JIRAError, requests.RequestException) as exc:
            return map_error(exc, what)

    @ts.tool(category="tickets", read_only=True)
    def jira_issue(key_or_url: str, max_comments: int = 5) -> ToolResult:
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
        max_comments = max(0, min(max_comments, 50))

        def run(c: Any) -> ToolResult:
            if (elsewhere := _other_site(key_or_url, c.server_url)) is not None:
                return elsewhere
            raw: dict[str, Any] = c.issue(key, fields=ISSUE_FIELDS).raw
            remote: list[dict[str, Any]] = []
            remote_error = None
            try:
                remote = [r.raw for r in c.remote_links(key)]
            except _import_client().JIRAError as exc:  # the issue itself is readable: report, go on
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

        return call("issue", run)

    @ts.tool(category="tickets", read_only=True)
    def jira_search(jql: str, limit: int = 20) -> ToolResult:
        """Search Jira issues with JQL; returns key, summary, status, type, priority, assignee, dates.

        Use it to find related or duplicate incidents, e.g.
        jql='project = OPS AND text ~ "payment timeout" AND created >= -7d ORDER BY created DESC'.

        Args:
            jql: a JQL query.
            limit: most issues to return (1-200); results are fetched page by page.
        """
        limit = max(1, min(limit, SEARCH_MAX))

        def run(c: Any) -> ToolResult:
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

        return call("search result", run)

    @ts.tool(category="tickets", read_only=False, risk="sensitive")
    def jira_add_comment(key: str, body: str) -> ToolResult:
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

        def run(c: Any) -> ToolResult:
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

        return call("issue", run)

    return ts


def configured(settings: Any) -> str | None:
    """``None`` when Jira is configured (url and token), else what to set; nothing is contacted."""
    return None if _config(settings) is not None else _NOT_CONFIGURED


def check(settings: Any) -> tuple[bool, str]:
    """Health check for ``devops-agent doctor``: can we log in to Jira (GET /rest/api/2/myself)?"""
    try:
        jira = _import_client()
    except ImportError as exc:
        return False, str(exc)
    conf = _config(settings)
    if conf is None:
        return False, f"jira: not configured ({_NOT_CONFIGURED})"
    if (bad := bad_base_url("jira.url", conf.url, "DEVOPS_AGENT_JIRA__URL")) is not None:
        return False, f"jira: {bad.error} ({bad.hint})"
    import requests

    try:
        with closing(_connect(conf)) as c:
            me = c.myself()
    except (jira.JIRAError, requests.RequestException) as exc:
        failed = map_error(exc, "user")
        return False, f"jira: {failed.error}" + (f" ({failed.hint})" if failed.hint else "")
    return True, f"jira: {conf.url} as {me.get('displayName') or me.get('emailAddress') or conf.user}"


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group."""
    registry.add_toolset(NAME, build, DESCRIPTION, extra=EXTRA)
