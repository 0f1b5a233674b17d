"""What every client-library integration (docker, github, jenkins, jira, kubernetes) has in common.

An :class:`Integration` states once what each of those modules used to repeat: the optional extra
that provides the client library (imported on first use, its ``ImportError`` naming the extra),
the section of the real :class:`~devops_agent.config.Settings` that configures it, how a client is
opened and closed, how the client's exceptions read as HTTP failures (mapped at this boundary,
through an :class:`~devops_agent.tools.http_status.ErrorTable`), the health check ``doctor`` runs,
and the entry-point registration. A subclass fills in those answers; its tools stay module-level
functions that take the run's ``ctx: RunContext[ToolDeps]`` and hand their body to :meth:`call`.

This module must not import a client library at import time (an integration whose extra is not
installed still registers, and reports itself unavailable), nor policies, the agent or interfaces.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from devops_agent.config.section import Section
from devops_agent.tools.base import Risk, ToolResult, ToolsetBuilder, tool

if TYPE_CHECKING:
    from devops_agent.config import Settings
    from devops_agent.tools.registry import ToolRegistry

S = TypeVar("S", bound=Section)
F = TypeVar("F", bound=Callable[..., Any])


class ToolFailure(Exception):
    """Carries a ready :class:`ToolResult` out of nested helpers; :meth:`Integration.call` returns it."""

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.error)
        self.result = result


class Integration(ABC, Generic[S]):
    """One service reached through its client library; ``S`` is its settings section.

    Subclasses set the class attributes and implement :meth:`section`, :meth:`connect`,
    :meth:`client_errors`, :meth:`map_error` and :meth:`probe`. The module makes one instance,
    declares its tools with :meth:`tool`, and exposes the instance's :meth:`build`, :meth:`check`
    and :meth:`register` as its own::

        JIRA = Jira()

        @JIRA.tool(category="tickets", read_only=True)
        def jira_issue(ctx: RunContext[ToolDeps], key_or_url: str) -> ToolResult:
            ...
            return JIRA.call(ctx.deps.settings, "issue", run)

        build, check, register = JIRA.build, JIRA.check, JIRA.register
    """

    name: ClassVar[str]
    """The toolset's name, also the name of its check and of its ``[section]`` in the config."""
    description: ClassVar[str]
    extra: ClassVar[str]
    """The pip extra that installs the client: ``pip install 'devops-agent[EXTRA]'``."""
    package: ClassVar[str]
    """The client's distribution name, for the install hint (``python-jenkins``, ``PyGithub``)."""
    modules: ClassVar[tuple[str, ...]]
    """Modules to import; the first is the client module :meth:`client_module` returns."""
    probe_what: ClassVar[str] = "server"
    """What a failed health check names as missing (``no such server (404)``)."""

    def __init__(self) -> None:
        self.tools: list[Callable[..., Any]] = []

    def tool(self, *, category: str, read_only: bool, risk: Risk = "safe") -> Callable[[F], F]:
        """Declare a module-level function one of this integration's tools, with its spec
        (:func:`devops_agent.tools.base.tool`); the function itself is returned unchanged."""
        declare = tool(category=category, read_only=read_only, risk=risk)

        def add(fn: F) -> F:
            self.tools.append(declare(fn))
            return fn

        return add

    # -- the client library ------------------------------------------------------------------

    def client_module(self) -> Any:
        """The client module, imported on first use; ``ImportError`` naming the extra without it."""
        try:
            for module in self.modules:
                importlib.import_module(module)
        except ImportError as exc:
            raise ImportError(
                f"the {self.name} toolset needs the `{self.package}` package: "
                f"pip install 'devops-agent[{self.extra}]'"
            ) from exc
        return importlib.import_module(self.modules[0])

    # -- settings ----------------------------------------------------------------------------

    @abstractmethod
    def section(self, settings: Settings) -> S:
        """This integration's section of ``settings``."""

    def unusable(self, section: S) -> ToolResult | None:
        """Why ``section`` cannot be used (not configured, a URL without scheme), else ``None``."""
        return None

    def configured(self, settings: Settings) -> bool:
        """Whether the user set this integration up; ``doctor`` checks only those that are."""
        return True

    # -- a client, and its failures ------------------------------------------------------------

    @abstractmethod
    def connect(self, section: S, **options: Any) -> Any:
        """A client for ``section``; :meth:`close` releases it. May raise :class:`ToolFailure`."""

    def close(self, client: Any) -> None:
        """Release what :meth:`connect` opened (sockets, pools)."""
        client.close()

    @abstractmethod
    def client_errors(self) -> tuple[type[Exception], ...]:
        """The client library's exceptions that :meth:`map_error` turns into results."""

    @abstractmethod
    def map_error(
        self, exc: Exception, what: str, section: S, client: Any = None, **context: Any
    ) -> ToolResult:
        """A failed result for a client exception. ``what`` names the object asked for; ``client``
        is the open client (``None`` when connecting failed); ``context`` is what the tool passed
        to :meth:`call`. Raises ``exc`` again when it is not one this integration knows."""

    def call(
        self,
        settings: Settings,
        what: str,
        body: Callable[[Any, S], ToolResult],
        *,
        options: Mapping[str, Any] | None = None,
        **context: Any,
    ) -> ToolResult:
        """Run a tool's ``body(client, section)`` with a client that is always closed; a section
        that cannot be used, a :class:`ToolFailure` and a client exception come back as results."""
        section = self.section(settings)
        if (problem := self.unusable(section)) is not None:
            return problem
        errors = self.client_errors()
        client: Any = None
        try:
            client = self.connect(section, **(options or {}))
            try:
                return body(client, section)
            finally:
                self.close(client)
        except ToolFailure as failure:
            return failure.result
        except errors as exc:
            return self.map_error(exc, what, section, client, **context)

    # -- health check --------------------------------------------------------------------------

    @abstractmethod
    def probe(self, client: Any, section: S) -> str:
        """One cheap request that proves the server answers with our credentials; what it said."""

    def check(self, settings: Settings) -> tuple[bool, str]:
        """The health check ``doctor`` runs: ``(ok, "name: what the server said, or why not")``."""
        try:
            self.client_module()
        except ImportError as exc:
            return False, str(exc)
        result = self.call(
            settings, self.probe_what, lambda client, section: ToolResult.ok(self.probe(client, section))
        )
        if result.status == "success":
            return True, f"{self.name}: {result.data}"
        return False, f"{self.name}: {result.error}" + (f" ({result.hint})" if result.hint else "")

    # -- registration ------------------------------------------------------------------------

    def build(self, settings: Settings) -> ToolsetBuilder:
        """The toolset; ``ImportError`` naming the extra when the client library is missing (the
        registry then lists the toolset as unavailable)."""
        self.client_module()
        return ToolsetBuilder(self.name, self.description).add(*self.tools)

    def register(self, registry: ToolRegistry) -> None:
        """Entry point of the ``devops_agent.toolsets`` group: the toolset and its health check."""
        registry.add_toolset(self.name, self.build, self.description, extra=self.extra)
        registry.add_check(self.name, self.check, configured=self.configured, extra=self.extra)
