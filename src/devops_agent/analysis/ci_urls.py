"""Jenkins build links: parse one URL into (server, job, build) and find build links in free text.

Jenkins spells the same build several ways: classic ``/job/NAME/123/``, nested folders
``/job/a/job/b/123/`` (also multibranch branches, whose names arrive percent-encoded),
``/view/X/job/...``, a context path (``https://host/jenkins/job/...``), trailing pages
(``/console``, ``/testReport``, ``/artifact/...``) and Blue Ocean
(``/blue/organizations/jenkins/a%2Fb/detail/b/123/pipeline``). Everything here is pure string
work: this module must not make network requests or import a Jenkins client, so the Jira toolset
can use it to spot build links in a ticket without the ``jenkins`` extra installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

PERMALINKS = frozenset(
    {
        "lastBuild",
        "lastCompletedBuild",
        "lastFailedBuild",
        "lastStableBuild",
        "lastSuccessfulBuild",
        "lastUnstableBuild",
        "lastUnsuccessfulBuild",
    }
)
"""Build selectors Jenkins accepts in place of a number."""

_URL = re.compile(r"https?://[^\s<>\"'|\[\]{}`]+", re.IGNORECASE)
_TRAILING = ".,;:!?)("


@dataclass(frozen=True)
class BuildRef:
    """A Jenkins job, and optionally one of its builds, on one server.

    ``job`` is the full name with ``/`` between folders (``team/api/main``), as Jenkins and
    python-jenkins spell it; a multibranch branch with a slash stays percent-encoded
    (``repo/feature%2Fx``). ``build`` is a build number or a permalink such as ``lastFailedBuild``.
    """

    base_url: str
    job: str
    build: int | str | None = None

    @property
    def job_path(self) -> str:
        """The job's path below the server root, e.g. ``job/team/job/api/``."""
        return job_path(self.job)

    @property
    def url(self) -> str:
        """The canonical classic URL of the build (or of the job when no build is set)."""
        tail = f"{self.build}/" if self.build is not None else ""
        return f"{self.base_url}{self.job_path}{tail}"


def job_path(job: str) -> str:
    """Classic URL path of a job full name: ``a/b`` → ``job/a/job/b/`` (each part URL-quoted)."""
    parts = [p for p in job.strip("/").split("/") if p]
    return "".join(f"job/{quote(p, safe='')}/" for p in parts)


def _build_of(segment: str | None) -> int | str | None:
    if segment is None:
        return None
    if segment.isdigit():
        return int(segment)
    return segment if segment in PERMALINKS else None


def _parse_blue(base: str, rest: list[str]) -> BuildRef | None:
    # rest: organizations/<org>/<pipeline>[/detail/<branch>/<run>/...] or [/activity|/branches]
    if len(rest) < 3 or rest[0] != "organizations":
        return None
    full_name = unquote(rest[2]).strip("/")
    if not full_name:
        return None
    if len(rest) >= 6 and rest[3] == "detail":
        branch = unquote(rest[4])
        build = _build_of(rest[5])
        if branch and branch != full_name.rsplit("/", 1)[-1]:
            # Multibranch: the branch is a child job whose name keeps the encoded slash.
            full_name = f"{full_name}/{quote(branch, safe='')}"
        return BuildRef(base, full_name, build)
    return BuildRef(base, full_name, None)


def parse_build_url(url: str) -> BuildRef | None:
    """Parse a Jenkins job or build URL; ``None`` when it is not one.

    Understands classic, nested-folder, view-prefixed and Blue Ocean URLs, with any context path
    and any trailing page (``/console``, ``/testReport``, ``/pipeline`` ...).
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    segments = parts.path.split("/")
    segs = [s for s in segments if s]
    root = f"{parts.scheme}://{parts.netloc}/"

    i = 0
    while i < len(segs) and segs[i] not in ("job", "view"):
        i += 1
    # Blue Ocean lives at <context>/blue/organizations/...; a job or folder named "blue" (a
    # blue/green deployment, say) comes after /job/ and stays a classic URL.
    for k, seg in enumerate(segs[:i]):
        if seg == "blue" and segs[k + 1 : k + 2] == ["organizations"]:
            base = root + "".join(f"{s}/" for s in segs[:k])
            return _parse_blue(base, segs[k + 1 :])
    if i == len(segs):
        return None
    base = root + "".join(f"{s}/" for s in segs[:i])
    names: list[str] = []
    while i + 1 < len(segs) and segs[i] in ("job", "view"):
        if segs[i] == "job":  # a view (also one inside a folder) is not part of the job's name
            names.append(unquote(segs[i + 1]))
        i += 2
    if not names:
        return None
    return BuildRef(base, "/".join(names), _build_of(segs[i] if i < len(segs) else None))


def parse_job_or_url(value: str) -> BuildRef | None:
    """A URL (see :func:`parse_build_url`) or a bare job name (``a/b``, ``a/job/b``, ``job/a/``).

    A bare name gets an empty ``base_url``: the caller fills in its configured server.
    """
    value = value.strip()
    if value.lower().startswith(("http://", "https://")):
        return parse_build_url(value)
    parts = [p for p in value.strip("/").split("/") if p]
    if parts and parts[0] == "job":
        parts = [p for k, p in enumerate(parts) if k % 2 == 1]
    else:
        parts = [p for p in parts if p != "job"]
    if not parts:
        return None
    return BuildRef("", "/".join(parts), None)


def find_build_links(text: str, base_url: str | None = None) -> list[BuildRef]:
    """Every distinct Jenkins *build* link in free text (a ticket description, comments, chat).

    Handles Jira wiki links (``[label|url]``), Markdown (``[label](url)``) and bare URLs; links
    to a job without a build are skipped. With ``base_url`` only links on that server are kept.
    Order of first appearance is preserved.
    """
    found: list[BuildRef] = []
    seen: set[tuple[str, str, str]] = set()
    want = base_url.rstrip("/") + "/" if base_url else None
    for match in _URL.finditer(text):
        candidate = match.group(0).rstrip(_TRAILING)
        ref = parse_build_url(candidate)
        if ref is None or ref.build is None:
            continue
        if want is not None and ref.base_url != want:
            continue
        key = (ref.base_url, ref.job, str(ref.build))
        if key not in seen:
            seen.add(key)
            found.append(ref)
    return found
