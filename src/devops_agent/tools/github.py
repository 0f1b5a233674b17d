"""The ``github`` toolset: pull requests (one by number or URL, those merged in a time window),
commits, comparisons and single commits from the GitHub REST API, through PyGithub.

Settings come from ``settings.github``: ``api_url`` (``https://api.github.com``; GitHub
Enterprise Server: ``https://HOST/api/v3``), ``token`` (``SecretStr``, sent as
``Authorization: token …``), ``repo`` (the default ``owner/name``) and ``timeout_s``. Without a
token the tools still work, anonymously, on public repositories (github.com allows 60 requests
an hour); every auth, 404 and rate-limit error then says that a token is missing. A pull request
URL on another host than the configured server is refused: the configured server, asked for the
same owner/name/number, would answer about a different pull request (or a mirror of it).

Client errors are mapped here, at the boundary: 401/403 → an auth/permission hint, 404 → "no
such …", 429 and 403 with the rate limit exhausted (``X-RateLimit-Remaining: 0``, or a secondary
limit with ``Retry-After``) → transient with ``retry_after_s``, 5xx and timeouts → transient.
PyGithub's own retry loop (``GithubRetry``, which sleeps through rate limits) and its request
throttle are switched off so the breaker and the model decide about retries. Every tool is
read-only: this module must not change anything on GitHub, and must never put the token in a
result or an error message.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from itertools import islice
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import Field
from pydantic_ai import RunContext

from devops_agent.analysis.timeparse import SINCE_FORMS, parse_since
from devops_agent.config import Settings
from devops_agent.config.settings import GitHubSettings
from devops_agent.deps import ToolDeps
from devops_agent.errors import UserError
from devops_agent.tools.base import ToolResult
from devops_agent.tools.http_status import ErrorTable, Rule, bad_base_url, rate_limited, retry_after_seconds
from devops_agent.tools.integration import Integration, ToolFailure

NAME = "github"
DESCRIPTION = "Read GitHub pull requests (by number or URL, merged in a window), commits and comparisons"

BODY_MAX_CHARS = 4000
MESSAGE_MAX_CHARS = 2000
MAX_FILES = 100
MAX_REVIEWS = 100
MAX_COMPARE_COMMITS = 50
MAX_MERGED = 200
MAX_SCAN = 1000
MAX_COMMITS = 100
PATCH_MAX_CHARS = 3000
PATCHES_MAX_CHARS = 30_000
COMPARE_FILES_CAP = 300  # GitHub lists at most 300 files in a comparison
PAGE = 100  # the REST API's largest page

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SCP_REMOTE = re.compile(r"^[\w.-]+@(?P<host>[^:/\s]+):(?P<path>[^\s]+)$")
_SHORT_REF = re.compile(r"^(?:(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+))?#?(?P<number>\d+)$")
_NO_REPO = (
    "pass repo='owner/name' or set github.repo (DEVOPS_AGENT_GITHUB__REPO) in devops-agent.toml "
    "or the environment"
)
_SET_TOKEN = (
    "no github.token is set, so only public repositories are visible (60 requests an hour): set "
    "DEVOPS_AGENT_GITHUB__TOKEN or github.token in devops-agent.toml"
)
_AUTH_HINT = (
    "check github.token (DEVOPS_AGENT_GITHUB__TOKEN): it may be expired or revoked, or come from "
    "another server than github.api_url"
)
_PERMISSION_HINT = (
    "the token cannot read this: a fine-grained token needs read access to Contents, Pull "
    "requests and Metadata on the repository, a classic token the `repo` scope for private "
    "repositories; an organization with SAML SSO must have authorized the token"
)
ERRORS = ErrorTable(
    "GitHub",
    timeout_hint="retry later or raise github.timeout_s",
    unreachable_hint="check github.api_url and the network path to it",
    rules={
        401: Rule("GitHub refused the credentials (401){said}", _AUTH_HINT),
        403: Rule("GitHub refused the request (403){said}", _PERMISSION_HINT),
        422: Rule("GitHub rejected the request (422){said}", "fix the arguments (a ref or SHA?)"),
    },
)
ANONYMOUS_ERRORS = replace(
    ERRORS,
    rules={
        **ERRORS.rules,
        401: replace(ERRORS.rules[401], hint=_SET_TOKEN),
        403: replace(ERRORS.rules[403], hint=_SET_TOKEN),
    },
)
"""Without a token, an auth failure means exactly that: the hint says how to set one."""


class GitHub(Integration[GitHubSettings]):
    """The GitHub (or GitHub Enterprise Server) API of ``settings.github``, through PyGithub."""

    name = NAME
    description = DESCRIPTION
    extra = "github"
    package = "PyGithub"
    modules = ("github",)
    probe_what = "endpoint"

    def section(self, settings: Settings) -> GitHubSettings:
        return settings.github

    def configured(self, settings: Settings) -> bool:
        """A token, a default repository or an Enterprise URL; anonymous github.com is the default."""
        gh = settings.github
        return bool(gh.token or gh.repo or gh.api_url != GitHubSettings().api_url)

    def unusable(self, section: GitHubSettings) -> ToolResult | None:
        return bad_base_url("github.api_url", api_url(section), "DEVOPS_AGENT_GITHUB__API_URL")

    def connect(self, section: GitHubSettings, **options: Any) -> Any:
        """A lazy ``github.Github``: no request until data is read, no retries, no throttle.

        ``per_page`` (default: the API's largest page) is how many items each list request asks for.
        """
        github = self.client_module()
        token = _token(section)
        return github.Github(
            base_url=api_url(section),
            auth=github.Auth.Token(token) if token else None,
            timeout=max(1, round(section.timeout_s)),
            user_agent="devops-agent",
            per_page=min(int(options.get("per_page", PAGE)), PAGE),
            retry=None,  # GithubRetry would sleep through rate limits inside a tool call
            seconds_between_requests=None,  # one tool call makes few, sequential requests
            lazy=True,  # get_repo/get_pull cost no request of their own
        )

    def client_errors(self) -> tuple[type[Exception], ...]:
        import requests

        return (self.client_module().GithubException, requests.RequestException)

    def map_error(
        self, exc: Exception, what: str, section: GitHubSettings, client: Any = None, **context: Any
    ) -> ToolResult:
        """A PyGithub/``requests`` exception as a failed result with a hint."""
        import requests

        github = self.client_module()
        token = _token(section)
        table = ANONYMOUS_ERRORS if token is None else ERRORS
        if isinstance(exc, github.GithubException):
            status, headers = exc.status, dict(exc.headers or {})
            message = exc.data.get("message") if isinstance(exc.data, dict) else None
            detail = _scrub(str(message).strip().splitlines()[0][:300], token) if message else ""
            suffix = f": {detail}" if detail else ""
            exhausted = str(headers.get("x-ratelimit-remaining", "")) == "0"
            if status == 429 or (
                status == 403
                and (
                    exhausted
                    or "retry-after" in headers
                    or isinstance(exc, github.RateLimitExceededException)
                )
            ):
                wait = _rate_wait(headers)
                if status == 429:
                    result = rate_limited("GitHub", wait, suffix)
                else:  # GitHub says "rate limited" with a 403 as often as with a 429
                    result = ToolResult.fail(
                        f"GitHub rate limit hit (403){suffix}",
                        f"retry after {wait:.0f}s" if wait is not None else "retry later",
                        status=403,
                        transient=True,
                        retry_after_s=wait,
                    )
                if token is None:
                    result.hint = f"{result.hint}; {_SET_TOKEN} (5,000 requests an hour with one)"
                return result
            if status == 404:
                own = "" if detail.lower() in ("", "not found") else f": {detail}"
                hint = (
                    "check owner/name and the number or ref; GitHub also answers 404 for private repositories"
                )
                hint += f" the caller cannot see; {_SET_TOKEN}" if token is None else " the token cannot see"
                return ToolResult.fail(f"no such {what} (404){own}", hint, status=404)
            return table.result(status, what=what, detail=detail)
        if isinstance(exc, requests.Timeout):
            return table.timeout()
        if isinstance(exc, requests.ConnectionError):
            return table.unreachable()
        raise exc

    def probe(self, client: Any, section: GitHubSettings) -> str:
        """``GET /user`` with a token, ``GET /rate_limit`` without."""
        if _token(section):
            login = client.get_user().login
            remaining, limit = client.requester.rate_limiting  # from the headers; -1 if none
            scopes = client.oauth_scopes  # classic tokens only
            extra = f"{remaining}/{limit} requests left" if limit >= 0 else "no rate limit"
            extra += f", scopes {', '.join(scopes)}" if scopes else ""
            return f"{api_url(section)} as {login} ({extra})"
        try:
            core = client.get_rate_limit().resources.core
        except self.client_module().GithubException as exc:
            message = str((exc.data or {}).get("message", "")) if isinstance(exc.data, dict) else ""
            if exc.status == 404 and "rate limit" in message.lower():
                # GitHub Enterprise Server with rate limiting disabled answers /rate_limit with 404.
                return f"{api_url(section)} anonymously (rate limiting disabled on the server)"
            raise
        return (
            f"{api_url(section)} anonymously ({core.remaining}/{core.limit} requests left; "
            "set github.token for private repositories)"
        )


GITHUB = GitHub()
"""The integration: settings, client, errors, health check; its tools are declared below."""


def api_url(section: GitHubSettings) -> str:
    """``github.api_url`` without a trailing slash."""
    return section.api_url.rstrip("/")


def _token(section: GitHubSettings) -> str | None:
    return section.token.get_secret_value() or None if section.token else None


def web_netloc(section: GitHubSettings) -> str:
    """Where pull request pages live: github.com for api.github.com, else the API's host."""
    return urlsplit(api_url(section)).netloc.lower().removeprefix("api.")


def serves(section: GitHubSettings, netloc: str) -> bool:
    """Whether a URL on ``netloc`` (web page or API) belongs to the configured server."""
    netloc = netloc.lower().removeprefix("www.")
    return netloc in (web_netloc(section), urlsplit(api_url(section)).netloc.lower())


def serves_host(section: GitHubSettings, host: str) -> bool:
    """Like :func:`serves` for a bare host name (an ssh remote's port differs from the web's)."""
    host = host.lower().removeprefix("www.")
    api = urlsplit(api_url(section)).hostname or ""
    return host in (urlsplit(f"//{web_netloc(section)}").hostname, api, api.removeprefix("api."))


def parse_pr_ref(ref: str, repo: str | None = None) -> tuple[str | None, str | None, int] | None:
    """``(host, owner/name, number)`` from ``123``, ``#123``, ``owner/name#123`` or a PR URL.

    URLs: web pages (``https://github.com/o/r/pull/123/files``, Enterprise hosts alike) and API
    URLs (``…/repos/o/r/pulls/123``). ``host`` is the URL's lower-case ``host[:port]`` (``None``
    without a URL); the owner/name comes from the reference, else from ``repo``.
    """
    value = ref.strip()
    short = _SHORT_REF.match(value)
    if short:
        return None, short.group("repo") or repo, int(short.group("number"))
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    segs = [s for s in parts.path.split("/") if s]
    for i in range(2, len(segs) - 1):
        if segs[i] in ("pull", "pulls") and segs[i + 1].isdigit():
            name = f"{segs[i - 2]}/{segs[i - 1]}"
            if _REPO.match(name):
                return parts.netloc.lower(), name, int(segs[i + 1])
    return None


def _repo_name(value: str | None, section: GitHubSettings) -> str:
    """``owner/name`` from ``owner/name``, a repository URL (web page, API, clone) or an ssh remote.

    A web URL may go on below the repository (``/tree/main``, ``/pull/5``): owner and name are
    its first two path segments, or the two after ``repos`` in an API URL. A URL on another
    server than the configured one is refused, as for pull requests.
    """
    given = name = (value or section.repo or "").strip()
    if not name:
        raise ToolFailure(ToolResult.fail("no GitHub repository named", _NO_REPO))
    host, path = None, None
    if "://" in name:
        parts = urlsplit(name)
        host, path = parts.hostname, parts.path
    elif scp := _SCP_REMOTE.match(name):  # git@github.com:owner/name.git
        host, path = scp.group("host"), scp.group("path")
    if path is not None:
        segs = [s for s in path.split("/") if s]
        api = 3 if segs[:3] == ["api", "v3", "repos"] else 1 if segs[:1] == ["repos"] else 0
        name = "/".join(segs[api : api + 2])
    if host is not None and not serves_host(section, host):
        raise ToolFailure(
            ToolResult.fail(
                f"{given} is not on the configured GitHub ({web_netloc(section)})",
                "only the server in github.api_url is queried; set it to that host's API "
                "(https://HOST/api/v3 for GitHub Enterprise Server) or pass owner/name",
            )
        )
    name = name.removesuffix(".git")
    if not _REPO.match(name):
        raise ToolFailure(ToolResult.fail(f"{given!r} is not an owner/name repository", _NO_REPO))
    return name


def _when(value: str, field: str) -> datetime:
    try:
        return parse_since(value)
    except UserError:
        raise ToolFailure(
            ToolResult.fail(f"cannot understand {field}={value!r}", f"use {SINCE_FORMS}")
        ) from None


def _scrub(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def _rate_wait(headers: dict[str, Any]) -> float | None:
    """Seconds until the limit resets: ``Retry-After`` (secondary limits), else ``X-RateLimit-Reset``."""
    wait = retry_after_seconds(headers.get("retry-after"))
    reset = str(headers.get("x-ratelimit-reset") or "")
    if wait is None and reset.isdigit():
        wait = max(0.0, float(reset) - time.time())
    return wait


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _login(user: Any) -> str | None:
    return user.login if user is not None else None


def _cut(text: str | None, limit: int) -> tuple[str, bool]:
    text = text or ""
    return (text, False) if len(text) <= limit else (text[:limit] + " …", True)


def _files(files: Iterable[Any], limit: int) -> list[dict[str, Any]]:
    out = []
    for f in islice(files, limit):
        item = {"path": f.filename, "status": f.status, "additions": f.additions, "deletions": f.deletions}
        if f.previous_filename:
            item["previous_path"] = f.previous_filename
        out.append(item)
    return out


def _reviews(reviews: list[Any]) -> dict[str, Any]:
    """Each reviewer's latest verdict; a later comment does not undo an approval."""
    verdict: dict[str, str] = {}
    for review in reviews:
        login = _login(review.user) or "?"
        if review.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED") or login not in verdict:
            verdict[login] = review.state
    by_state = {
        key: sorted(u for u, s in verdict.items() if s == state)
        for key, state in (
            ("approved", "APPROVED"),
            ("changes_requested", "CHANGES_REQUESTED"),
            ("commented", "COMMENTED"),
        )
    }
    return {**by_state, "reviews": len(reviews)}


def _commit_summary(c: Any) -> dict[str, Any]:
    git = c.commit
    message = git.message or ""
    return {
        "sha": c.sha,
        "short_sha": c.sha[:7],
        "author": git.author.name if git.author else None,
        "author_login": _login(c.author),
        "date": _iso(git.author.date if git.author else None),
        "subject": message.splitlines()[0] if message else "",
        "merge": len(c.parents) > 1,
        "html_url": c.html_url,
    }


@GITHUB.tool(category="git", read_only=True)
def github_pr(ctx: RunContext[ToolDeps], ref: str, repo: str | None = None) -> ToolResult:
    """Read one GitHub pull request: state, merge, people, branches, reviews, changed files, body.

    Args:
        ref: a PR number (123, #123), owner/name#123, or the PR's URL
            (https://github.com/o/r/pull/123, or on a GitHub Enterprise host).
        repo: owner/name when ref is a bare number; default: github.repo.
    """

    def run(gh: Any, section: GitHubSettings) -> ToolResult:
        parsed = parse_pr_ref(ref, repo)
        if parsed is None:
            return ToolResult.fail(
                f"{ref!r} is not a pull request number or URL",
                "pass 123, owner/name#123 or https://github.com/owner/name/pull/123",
            )
        host, name, number = parsed
        if host is not None and not serves(section, host):
            return ToolResult.fail(
                f"{ref} is not on the configured GitHub ({web_netloc(section)})",
                "only the server in github.api_url is queried; set it to that host's API "
                "(https://HOST/api/v3 for GitHub Enterprise Server)",
            )
        full = _repo_name(name, section)
        pr = gh.get_repo(full).get_pull(number)
        title = pr.title  # the first read fetches the pull request
        reviews = list(islice(pr.get_reviews(), MAX_REVIEWS))
        files = _files(pr.get_files(), MAX_FILES)
        body, body_cut = _cut(pr.body, BODY_MAX_CHARS)
        data = {
            "repo": full,
            "number": pr.number,
            "title": title,
            "state": pr.state,
            "draft": pr.draft,
            "merged": pr.merged,
            "merged_at": _iso(pr.merged_at),
            "merged_by": _login(pr.merged_by),
            "merge_commit_sha": pr.merge_commit_sha,
            "author": _login(pr.user),
            "base": {"ref": pr.base.ref, "sha": pr.base.sha},
            "head": {"ref": pr.head.ref, "sha": pr.head.sha},
            "created_at": _iso(pr.created_at),
            "updated_at": _iso(pr.updated_at),
            "closed_at": _iso(pr.closed_at),
            "labels": [label.name for label in pr.labels],
            "requested_reviewers": [u.login for u in pr.requested_reviewers],
            "requested_teams": [t.slug for t in pr.requested_teams],
            "review_summary": _reviews(reviews),
            "commits": pr.commits,
            "additions": pr.additions,
            "deletions": pr.deletions,
            "changed_files": pr.changed_files,
            "files": files,
            "files_truncated": pr.changed_files > len(files),
            "body": body,
            "body_truncated": body_cut,
            "html_url": pr.html_url,
        }
        return ToolResult.ok(data, source=f"github pr {full}#{number}")

    return GITHUB.call(ctx.deps.settings, "pull request", run)


@GITHUB.tool(category="git", read_only=True)
def github_prs_merged(
    ctx: RunContext[ToolDeps],
    since: str,
    until: str | None = None,
    repo: str | None = None,
    base: str | None = None,
    limit: Annotated[int, Field(ge=1, le=MAX_MERGED)] = 50,
) -> ToolResult:
    """List the pull requests merged in a time window (what shipped before an incident?).

    Args:
        since: start of the window: 24h, 7d, '2 hours ago', an ISO date or date-time (no offset = local).
        until: end of the window, same forms; default: now.
        repo: owner/name; default: github.repo.
        base: only PRs merged into this branch, e.g. main.
        limit: most PRs to return (1-200).
    """

    def run(gh: Any, section: GitHubSettings) -> ToolResult:
        start = _when(since, "since")
        end = _when(until, "until") if until else None
        if end is not None and end < start:
            return ToolResult.fail("until is before since", "swap them or widen the window")
        full = _repo_name(repo, section)
        filters = {"base": base} if base else {}
        pulls = gh.get_repo(full).get_pulls(state="closed", sort="updated", direction="desc", **filters)
        found: list[dict[str, Any]] = []
        scanned, stopped = 0, "end_of_list"
        for pr in pulls:
            scanned += 1
            # Merging updates a PR, so once PRs were last updated before `since`, none after
            # them (sorted by update time) can have been merged in the window.
            if pr.updated_at < start:
                stopped = "older_than_since"
                break
            merged = pr.merged_at
            if merged is not None and merged >= start and (end is None or merged <= end):
                found.append(
                    {
                        "number": pr.number,
                        "title": pr.title,
                        "author": _login(pr.user),
                        "merged_at": _iso(merged),
                        "merge_commit_sha": pr.merge_commit_sha,
                        "base": pr.base.ref,
                        "html_url": pr.html_url,
                    }
                )
                if len(found) >= limit:
                    stopped = "limit"
                    break
            if scanned >= MAX_SCAN:
                stopped = "scan_cap"
                break
        window = {"repo": full, "since": start.isoformat(), "until": _iso(end), "base": base}
        meta = {"source": f"github pulls {full}", "scanned": scanned}
        if not found:
            into = f" into {base}" if base else ""
            return ToolResult.empty(
                f"no pull requests merged{into} in {full} since {window['since']}"
                + (f" until {window['until']}" if end else ""),
                **meta,
            )
        found.sort(key=lambda p: p["merged_at"], reverse=True)
        data = {
            **window,
            "pull_requests": found,
            "count": len(found),
            "scanned": scanned,
            "stopped": stopped,
            # limit/scan_cap: older merges in the window may be missing
            "truncated": stopped in ("limit", "scan_cap"),
        }
        return ToolResult.ok(data, **meta)

    return GITHUB.call(ctx.deps.settings, "repository", run)


@GITHUB.tool(category="git", read_only=True)
def github_commits(
    ctx: RunContext[ToolDeps],
    repo: str | None = None,
    path: str | None = None,
    since: str | None = None,
    until: str | None = None,
    sha: str | None = None,
    limit: Annotated[int, Field(ge=1, le=MAX_COMMITS)] = 30,
) -> ToolResult:
    """List recent commits of a GitHub repository (no clone needed), newest first.

    Args:
        repo: owner/name; default: github.repo.
        path: only commits touching this file or directory.
        since: only commits after this: 24h, 7d, an ISO date or date-time.
        until: only commits before this, same forms.
        sha: branch, tag or commit SHA to start from; default: the default branch.
        limit: most commits to return (1-100).
    """

    def run(gh: Any, section: GitHubSettings) -> ToolResult:
        params: dict[str, Any] = {}
        if since:
            params["since"] = _when(since, "since")
        if until:
            params["until"] = _when(until, "until")
        if sha:
            params["sha"] = sha
        if path:
            params["path"] = path
        full = _repo_name(repo, section)
        listed = list(islice(gh.get_repo(full).get_commits(**params), limit + 1))
        if not listed:
            return ToolResult.empty(f"no commits in {full} match" + (f" (path {path})" if path else ""))
        commits = [_commit_summary(c) for c in listed[:limit]]
        data = {
            "repo": full,
            "commits": commits,
            "count": len(commits),
            "more_available": len(listed) > limit,
        }
        return ToolResult.ok(data, source=f"github commits {full}")

    # One more than asked for, on the first page, to know whether there are more.
    return GITHUB.call(ctx.deps.settings, "repository, branch or path", run, options={"per_page": limit + 1})


@GITHUB.tool(category="git", read_only=True)
def github_compare(ctx: RunContext[ToolDeps], base: str, head: str, repo: str | None = None) -> ToolResult:
    """Compare two refs (tags, branches, SHAs): commits between them and the files they change.

    Use it for "what changed between the last good release and the bad one".

    Args:
        base: the older ref, e.g. v2.13.0.
        head: the newer ref, e.g. v2.14.0.
        repo: owner/name; default: github.repo.
    """

    def run(gh: Any, section: GitHubSettings) -> ToolResult:
        full = _repo_name(repo, section)
        cmp = gh.get_repo(full).compare(base, head, comparison_commits_per_page=MAX_COMPARE_COMMITS)
        status = cmp.status  # the first read fetches the comparison
        all_files = cmp.files
        # Completed with per_page=MAX_COMPARE_COMMITS: the first page is in hand, no request.
        commits = [_commit_summary(c) for c in islice(cmp.commits, MAX_COMPARE_COMMITS)]
        files = _files(all_files, MAX_FILES)
        data = {
            "repo": full,
            "base": base,
            "head": head,
            "status": status,
            "ahead_by": cmp.ahead_by,
            "behind_by": cmp.behind_by,
            "merge_base_sha": cmp.merge_base_commit.sha if cmp.merge_base_commit else None,
            "total_commits": cmp.total_commits,
            "commits": commits,  # oldest first, as GitHub lists them
            "commits_truncated": cmp.total_commits > len(commits),
            "files": files,
            "files_listed": len(all_files),
            "files_truncated": len(all_files) > len(files) or len(all_files) >= COMPARE_FILES_CAP,
            "html_url": cmp.html_url,
        }
        return ToolResult.ok(data, source=f"github compare {full} {base}...{head}")

    return GITHUB.call(ctx.deps.settings, "repository or ref", run)


@GITHUB.tool(category="git", read_only=True)
def github_commit(ctx: RunContext[ToolDeps], sha: str, repo: str | None = None) -> ToolResult:
    """Read one commit: message, author, parents, stats and each file's patch (capped).

    Args:
        sha: a commit SHA (short is fine), branch or tag.
        repo: owner/name; default: github.repo.
    """

    def run(gh: Any, section: GitHubSettings) -> ToolResult:
        full = _repo_name(repo, section)
        c = gh.get_repo(full).get_commit(sha)
        summary = _commit_summary(c)  # the first read fetches the commit
        message, message_cut = _cut(c.commit.message, MESSAGE_MAX_CHARS)
        files: list[dict[str, Any]] = []
        budget, patches_cut = PATCHES_MAX_CHARS, False
        for f in islice(c.files, MAX_FILES + 1):
            if len(files) == MAX_FILES:
                patches_cut = True
                break
            item = _files([f], 1)[0]
            patch = f.patch or ""
            if patch and budget > 0:
                item["patch"], cut = _cut(patch[:budget], PATCH_MAX_CHARS)
                item["patch_truncated"] = cut or len(patch) > budget
                budget -= len(item["patch"])
            elif patch:
                item["patch_omitted"] = True  # the budget for all patches is spent
            files.append(item)
        data = {
            **summary,
            "repo": full,
            "message": message,
            "message_truncated": message_cut,
            "committer": c.commit.committer.name if c.commit.committer else None,
            "committed": _iso(c.commit.committer.date if c.commit.committer else None),
            "parents": [p.sha for p in c.parents],
            "stats": {
                "additions": c.stats.additions,
                "deletions": c.stats.deletions,
                "total": c.stats.total,
            },
            "files": files,
            "files_truncated": patches_cut,
        }
        return ToolResult.ok(data, source=f"github commit {full}@{sha}")

    return GITHUB.call(ctx.deps.settings, "commit", run)


build = GITHUB.build
check = GITHUB.check
register = GITHUB.register
