"""Confluence as a knowledge source: the current pages of a space, as Markdown-like documents.

The ``confluence`` extra's client (atlassian-python-api) does authentication and HTTP; the pages
come from the REST v1 content API, the one Cloud (``https://SITE.atlassian.net/wiki``) and Data
Center share: ``GET {url}/rest/api/content?spaceKey=KEY&type=page&expand=body.storage,version``
paged with ``start``/``limit`` until the response has no ``_links.next``
(https://developer.atlassian.com/cloud/confluence/rest/v1/api-group-content/#api-wiki-rest-api-content-get,
https://developer.atlassian.com/server/confluence/pagination-in-the-rest-api/). Paging is done
here rather than by the client's generator, which resolves a relative ``next`` link against the
host and so loses Cloud's ``/wiki`` context path.

A page's stamp is its version number, so re-indexing converts and re-chunks only pages edited
since; its citation URL is ``_links.base`` + the page's ``_links.webui``. HTTP failures become
:class:`~devops_agent.errors.DevOpsAgentError` subclasses with a hint. Importing this module
does not need the extra; building a client without it raises ``ImportError`` naming it. This
module only reads from Confluence; it must not import the index, policies or interfaces.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from devops_agent.config import Settings
from devops_agent.errors import ConfigError, DevOpsAgentError, NotFoundError, RuntimeFailure, UserError
from devops_agent.knowledge.sources import Document
from devops_agent.knowledge.storage_format import storage_to_markdown

EXTRA = "confluence"
PAGE_SIZE = 50
EXPAND = "body.storage,version"
# Part of every page stamp: a better converter re-converts pages indexed by an older one.
CONVERTER = "sf1"
_AUTH_HINT = (
    "check confluence.user and confluence.token (Cloud: the account e-mail and an API token from "
    "https://id.atlassian.com/manage-profile/security/api-tokens; Data Center: a personal access "
    "token and no user)"
)


def _import_client() -> Any:
    try:
        import atlassian
    except ImportError as exc:
        raise ImportError(
            f"the Confluence source needs atlassian-python-api: pip install 'devops-agent[{EXTRA}]'"
        ) from exc
    return atlassian


@dataclass(frozen=True)
class ConfluenceConf:
    url: str
    user: str | None
    token: str
    timeout_s: float


def confluence_conf(settings: Settings) -> ConfluenceConf:
    """The connection settings of ``settings.confluence``; :class:`ConfigError` when incomplete."""
    conf = settings.confluence
    token = conf.token.get_secret_value() if conf.token is not None else ""
    if not conf.url or not token:
        raise ConfigError(
            "Confluence is not configured",
            hint="set confluence.url and confluence.token (and confluence.user for Cloud) in the "
            "config file or DEVOPS_AGENT_CONFLUENCE__URL / __TOKEN / __USER",
        )
    return ConfluenceConf(conf.url.rstrip("/"), conf.user or None, token, conf.timeout_s)


def connect(conf: ConfluenceConf) -> Any:
    """An ``atlassian.Confluence`` client: HTTP Basic with a user, else a bearer token."""
    atlassian = _import_client()
    # No automatic waiting on Retry-After: an index run reports the rate limit instead of
    # sleeping for as long as the server asks.
    options: dict[str, Any] = {"timeout": max(1, round(conf.timeout_s)), "retry_with_header": False}
    if conf.user:
        return atlassian.Confluence(url=conf.url, username=conf.user, password=conf.token, **options)
    return atlassian.Confluence(url=conf.url, token=conf.token, **options)


class ConfluenceSource:
    """The current pages of one space; a :class:`~devops_agent.knowledge.sources.Source`."""

    def __init__(self, client: Any, url: str, space: str, *, page_size: int = PAGE_SIZE) -> None:
        if not space.strip():
            raise UserError("a Confluence space key is needed", hint="e.g. --confluence OPS")
        self.client = client
        self.url = url.rstrip("/")
        self.space = space.strip()
        self.page_size = page_size

    @classmethod
    def from_settings(cls, settings: Settings, space: str, *, page_size: int = PAGE_SIZE) -> ConfluenceSource:
        conf = confluence_conf(settings)
        return cls(connect(conf), conf.url, space, page_size=page_size)

    @property
    def key(self) -> str:
        return f"{self.url}/spaces/{self.space}"

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> ConfluenceSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def documents(self) -> Iterator[Document]:
        """Every current page of the space, body converted to Markdown only when it is read."""
        # The space first: a misspelt key is a clear 404 here, where the content query would
        # answer an empty list and the index would drop every page it holds for that key.
        self._get(f"rest/api/space/{quote(self.space, safe='')}")
        start = 0
        paths: dict[str, str] = {}  # document path -> page id
        while True:
            params = {
                "spaceKey": self.space,
                "type": "page",
                "expand": EXPAND,
                "start": start,
                "limit": self.page_size,
            }
            answer = self._get("rest/api/content", params)
            results = [r for r in answer.get("results") or [] if isinstance(r, dict)]
            links = answer.get("_links") or {}
            base = str(links.get("base") or self.url).rstrip("/")
            for page in results:
                doc = self._document(page, base)
                page_id = str(page.get("id", ""))
                if paths.get(doc.path, page_id) != page_id:  # `A/B` and `A-B`: two pages, one path
                    doc = dataclasses.replace(doc, path=f"{doc.path} ({page_id})")
                paths.setdefault(doc.path, page_id)
                yield doc
            if not results or not links.get("next"):
                return
            start += len(results)

    def _document(self, page: dict[str, Any], base: str) -> Document:
        page_id = str(page.get("id", ""))
        title = str(page.get("title") or page_id)
        storage = str(((page.get("body") or {}).get("storage") or {}).get("value") or "")
        version = page.get("version") or {}
        number = version.get("number")
        changed = f"v{number}" if number is not None else hashlib.sha256(storage.encode()).hexdigest()[:16]
        webui = (page.get("_links") or {}).get("webui")
        url = f"{base}{webui}" if webui else f"{base}/pages/viewpage.action?pageId={page_id}"
        return Document(
            path=f"{self.space}/{title.replace('/', '-')}",
            stamp=f"{CONVERTER}:{changed}",
            read=functools.partial(_page_bytes, storage, title),
            title=title,
            url=url,
            language="markdown",
            modified_ns=_when_ns(version.get("when")),
        )

    def _get(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        import requests

        try:
            answer = self.client.get(path, params=params)
        except requests.HTTPError as exc:
            raise map_http_error(exc, self.space) from None
        except requests.Timeout:
            raise RuntimeFailure(
                "Confluence did not answer in time",
                hint="retry later or raise confluence.timeout_s",
                transient=True,
            ) from None
        except requests.ConnectionError:
            raise RuntimeFailure(
                f"cannot connect to Confluence at {self.url}",
                hint="check confluence.url and the network path to it",
                transient=True,
            ) from None
        if not isinstance(answer, dict):
            raise RuntimeFailure(
                "Confluence answered with something other than JSON",
                hint="confluence.url must be the site root, e.g. https://acme.atlassian.net/wiki",
            )
        return answer


def map_http_error(exc: Any, space: str) -> DevOpsAgentError:
    """The error for a failed Confluence request (``requests.HTTPError``), with what to do next."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    detail = (str(exc).strip().splitlines() or [""])[0][:300]
    suffix = f": {detail}" if detail else ""
    if status == 401:
        return UserError(f"Confluence refused the credentials (401){suffix}", hint=_AUTH_HINT, status=401)
    if status == 403:
        return UserError(
            f"Confluence denied access to space {space!r} (403){suffix}",
            hint="the account needs view permission on the space",
            status=403,
        )
    if status == 404:
        return NotFoundError(
            f"no Confluence space {space!r} visible to this account (404)",
            hint="check the space key (case-sensitive) and the account's permissions",
            status=404,
        )
    if status == 429:
        retry = response.headers.get("Retry-After") if response is not None else None
        wait = f"retry after {retry}s" if retry else "retry later"
        return RuntimeFailure(
            f"Confluence rate limit hit (429){suffix}", hint=wait, status=429, transient=True
        )
    if status is not None and status >= 500:
        return RuntimeFailure(
            f"Confluence server error ({status}){suffix}",
            hint="Confluence is failing; retry later (the index was left as it was)",
            status=status,
            transient=True,
        )
    return RuntimeFailure(f"Confluence request failed ({status}){suffix}", status=status)


def _page_bytes(storage: str, title: str) -> bytes:
    return storage_to_markdown(storage, title).encode("utf-8")


def _when_ns(when: Any) -> int:
    """``version.when`` (ISO 8601) as nanoseconds since the epoch; 0 when absent or unreadable."""
    if not isinstance(when, str):
        return 0
    try:
        return int(datetime.fromisoformat(when).timestamp() * 1_000_000_000)
    except ValueError:
        return 0
