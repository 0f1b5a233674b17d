"""Health checks behind ``devops-agent doctor``: config, store, model endpoint, sandbox, toolsets,
MCP servers.

Each check returns a :class:`Check` (ok / warn / fail, a detail, a hint); nothing raises, so the
report is always complete. Interfaces render the list; the API will serve it as JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import httpx

from devops_agent.agent.models import DEFAULT_BASE_URLS, provider_of, resolve_model
from devops_agent.config import LoadedSettings
from devops_agent.errors import DevOpsAgentError
from devops_agent.privacy import ner
from devops_agent.privacy.guard import enabled_for
from devops_agent.store import Store
from devops_agent.tools.registry import ToolRegistry, default_registry
from devops_agent.tools.sandbox import Sandbox

Level = Literal["ok", "warn", "fail"]

_PROVIDER_URLS = {
    "openai": "https://api.openai.com/v1/models",
    "anthropic": "https://api.anthropic.com/v1/models",
    "google-gla": "https://generativelanguage.googleapis.com/v1beta/models",
}


@dataclass
class Check:
    name: str
    level: Level
    detail: str
    hint: str | None = None
    facts: dict[str, Any] | None = None
    """Machine-readable findings of the check, for ``--json`` (only where a check has some)."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.facts is None:
            del data["facts"]
        return data


def check_config(loaded: LoadedSettings) -> Check:
    files = ", ".join(str(f) for f in loaded.files) or "no config file (defaults and environment)"
    return Check("config", "ok", files)


def check_store(loaded: LoadedSettings) -> Check:
    try:
        with Store.from_settings(loaded.settings) as store:
            n = len(store.list_sessions(limit=1000))
            return Check("store", "ok", f"{store.url_for_display} ({n} sessions)")
    except DevOpsAgentError as exc:
        return Check("store", "fail", exc.message, exc.hint)


def check_model(loaded: LoadedSettings, timeout_s: float = 3.0) -> Check:
    ms = loaded.settings.model
    if not ms.name:
        return Check(
            "model", "ok", "none configured: offline runbooks are used", "set model.name to use an LLM"
        )
    try:
        resolve_model(ms)
    except DevOpsAgentError as exc:
        return Check("model", "fail", exc.message, exc.hint)
    provider = provider_of(ms.name)
    if provider == "scripted":
        return Check("model", "ok", f"{ms.name} (deterministic, offline)")
    base = ms.base_url or DEFAULT_BASE_URLS.get(provider)
    url = base.rstrip("/") + "/models" if base else _PROVIDER_URLS.get(provider)
    if url is None:
        return Check("model", "warn", f"{ms.name}: reachability not checked for provider {provider!r}")
    try:
        resp = httpx.get(url, timeout=timeout_s)
    except httpx.HTTPError as exc:
        return Check(
            "model",
            "fail",
            f"{ms.name}: cannot reach {url}: {type(exc).__name__}",
            "check model.base_url and the network; or unset model.name to run offline",
        )
    return Check("model", "ok", f"{ms.name}: {url} answered HTTP {resp.status_code}")


def check_toolsets(loaded: LoadedSettings, registry: ToolRegistry | None = None) -> list[Check]:
    reg = registry or default_registry()
    try:
        built = reg.build(loaded.settings)
    except DevOpsAgentError as exc:  # tools.disabled names no toolset
        return [Check("toolsets", "fail", exc.message, exc.hint)]
    checks = [Check(f"toolset {name}", "ok", f"{len(ts.entries)} tools") for name, ts in built.items()]
    checks += [Check(f"toolset {u.name}", "warn", u.reason) for u in reg.unavailable]
    return checks


def check_integrations(loaded: LoadedSettings, registry: ToolRegistry | None = None) -> list[Check]:
    """Run the health check of each configured integration: every check in the registry, so a
    plugin's (added with ``registry.add_check`` from its entry point) runs beside the built-in
    ones (Jira, Jenkins, Kubernetes, GitHub, Docker, Prometheus).

    Unconfigured ones are not checked (each check's ``configured`` says: GitHub counts as
    configured with a token, a default repo or an Enterprise URL; Docker with ``docker.base_url``,
    ``$DOCKER_HOST`` or a local socket; Prometheus with a ``prometheus.url`` other than the
    default). A failing optional check (Prometheus: on by default, the rest of the agent works
    without it) only warns. A check that raises is reported, never propagated: the report is
    always complete.
    """
    settings = loaded.settings
    checks: list[Check] = []
    for hc in (registry or default_registry()).checks.values():
        try:
            if not hc.configured(settings):
                continue
            ok, message = hc.run(settings)
        except ImportError as exc:
            hint = f"pip install 'devops-agent[{hc.extra}]'" if hc.extra else None
            checks.append(Check(hc.name, "warn", f"client not installed: {exc}", hint))
            continue
        except Exception as exc:  # a broken plugin check must not take the report down
            checks.append(
                Check(
                    hc.name,
                    "fail",
                    f"the check itself failed: {type(exc).__name__}: {exc}",
                    "a bug in the check",
                )
            )
            continue
        checks.append(Check(hc.name, "ok" if ok else "fail" if hc.required else "warn", message))
    return checks


def check_privacy(loaded: LoadedSettings) -> Check:
    """Whether the privacy guard masks what the model sees, and whether names are masked too.

    Names need the optional NER model (extra ``privacy-ner``): ``ner = "on"`` without it fails
    (a session would refuse to start); ``auto`` without it warns only when the guard is on.
    """
    p = loaded.settings.privacy
    on = enabled_for(loaded.settings)
    state = "on" if on else "off (secrets still cut out)" if p.scrub_secrets else "off (secrets readable)"
    why = f"privacy.enabled = {p.enabled}" + (
        f", model {loaded.settings.model.name}" if p.enabled == "auto" else ""
    )
    if p.ner == "off":
        return Check("privacy", "ok", f"{state} ({why}); names not masked (privacy.ner = off)")
    model = ner.installed_model(p.ner_model)
    if model is not None:
        names = f"names masked with {model}" if on else f"names would be masked with {model} when on"
        return Check("privacy", "ok", f"{state} ({why}); {names}")
    hint = f"pip install 'devops-agent[{ner.EXTRA}]', or set privacy.ner = 'off'"
    if p.ner == "on":
        return Check(
            "privacy", "fail", f"{state} ({why}); privacy.ner = on but no NER model is installed", hint
        )
    if on:
        return Check("privacy", "warn", f"{state} ({why}); person and place names are not masked", hint)
    return Check("privacy", "ok", f"{state} ({why}); NER model not installed")


def check_sandbox(loaded: LoadedSettings) -> Check:
    """Whether commands auto-allowed as read-only run in the read-only sandbox, and why not.

    Inactive under ``auto`` (bwrap missing, not Linux, user namespaces refused) or ``off`` warns;
    inactive when required (``bwrap``) fails: those commands would refuse to run.
    """
    settings = loaded.settings
    mode = settings.safety.sandbox
    facts: dict[str, Any] = {"mode": mode, "active": False, "reason": None, "hidden": []}
    if "shell" in settings.tools.disabled:
        facts["reason"] = "the shell toolset is disabled"
        return Check("sandbox", "ok", "not needed: the shell toolset is disabled", facts=facts)
    sandbox = Sandbox.from_settings(settings)
    if sandbox.active:
        hidden = [str(p) for p in sandbox.hidden_now()]
        facts.update(active=True, bwrap=sandbox.available.bwrap, hidden=hidden)
        return Check(
            "sandbox",
            "ok",
            f"active: read-only commands run in a read-only filesystem ({sandbox.available.detail}); "
            f"hides the data dir {settings.data_dir}, config files and SSH private keys "
            f"({len(hidden)} paths now)",
            facts=facts,
        )
    facts["reason"] = sandbox.available.detail
    level: Level = "fail" if mode == "bwrap" else "warn"
    return Check("sandbox", level, f"inactive: {sandbox.available.detail}", sandbox.available.hint, facts)


def check_mcp(loaded: LoadedSettings, registry: ToolRegistry | None = None) -> list[Check]:
    """Start each configured MCP server (in parallel, each within its timeout) and say how it went.

    A server that cannot be configured (a variable it names is not set, a fallback that is no
    toolset) fails; one that does not start or answer only warns: runs go on without it, and their
    reports name the gap. Nothing is listed when no server is configured."""
    from devops_agent.tools.mcp import pool_for

    try:
        pool = pool_for(loaded.settings)
    except DevOpsAgentError as exc:
        return [Check("mcp", "fail", exc.message, exc.hint)]
    if pool is None:
        return []
    known = set((registry or default_registry()).toolsets)
    try:
        statuses = pool.preload_sync()
    finally:
        pool.close()
    checks: list[Check] = []
    for s in statuses.values():
        name = f"mcp {s.name}"
        facts = s.to_dict()
        if s.fallback is not None and s.fallback not in known:
            hint = f"toolsets: {', '.join(sorted(known))}"
            checks.append(Check(name, "fail", f"fallback {s.fallback!r} is not a toolset", hint, facts))
        elif not s.enabled:
            checks.append(Check(name, "ok", f"disabled ({s.source})", facts=facts))
        elif s.state == "ready":
            detail = f"{s.tools} tools, started in {s.start_ms:.0f} ms ({s.transport}, {s.source})"
            checks.append(Check(name, "ok", detail, facts=facts))
        elif s.state == "failed":
            checks.append(
                Check(name, "fail", s.error or "cannot start", "fix its entry in " + s.source, facts)
            )
        else:
            log = f"; its stderr is in {s.log_file}" if s.log_file and s.transport == "stdio" else ""
            hint = f"runs go on without it and name the gap{log}"
            checks.append(Check(name, "warn", s.error or s.state, hint, facts))
    return checks


def run_checks(loaded: LoadedSettings, registry: ToolRegistry | None = None) -> list[Check]:
    """Every check, in the order the report shows them; plugins' come from ``registry``."""
    registry = registry or default_registry()
    return [
        check_config(loaded),
        check_store(loaded),
        check_model(loaded),
        check_privacy(loaded),
        check_sandbox(loaded),
        *check_toolsets(loaded, registry),
        *check_integrations(loaded, registry),
        *check_mcp(loaded, registry),
    ]
