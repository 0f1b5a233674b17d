"""Turn an Alertmanager webhook notification into investigation requests.

Alertmanager POSTs a JSON document (format ``version: "4"``, see
https://prometheus.io/docs/alerting/latest/configuration/#webhook_config) to a webhook receiver.
:func:`parse_webhook` validates it and returns one :class:`AlertRequest` per alert, with the
PromQL expression recovered from the ``generatorURL`` (``g0.expr``) and a ``since`` bound a
margin before the alert started; :func:`to_question` phrases it as the question an investigation
starts from, and :meth:`AlertRequest.runbook_inputs` gives the standard runbook inputs.

This module is pure: it must not start runs, call Prometheus or Alertmanager, or read settings;
the service layer decides what to do with the requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from devops_agent.errors import UserError

DEFAULT_MARGIN = timedelta(minutes=15)
"""How far before ``startsAt`` an investigation looks: the cause usually precedes the alert."""

# Labels that identify where an alert fires, most specific context first; the rest are noise
# in a one-line question.
_WHERE_LABELS = ("cluster", "namespace", "service", "job", "deployment", "pod", "instance", "container")
_ZERO_TIME_YEAR = 1  # Alertmanager sends 0001-01-01T00:00:00Z for "not ended"


class WebhookAlert(BaseModel):
    """One entry of ``alerts`` in the webhook payload."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    starts_at: datetime = Field(alias="startsAt")
    ends_at: datetime | None = Field(None, alias="endsAt")
    generator_url: str = Field("", alias="generatorURL")
    fingerprint: str = ""

    @field_validator("labels")
    @classmethod
    def _has_alertname(cls, labels: dict[str, str]) -> dict[str, str]:
        if not labels.get("alertname"):
            raise ValueError("labels must include a non-empty 'alertname'")
        return labels


class WebhookPayload(BaseModel):
    """The whole notification; unknown keys are ignored so newer Alertmanagers still parse."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    version: Literal["4"]
    status: Literal["firing", "resolved"]
    receiver: str = ""
    group_key: str = Field("", alias="groupKey")
    truncated_alerts: int = Field(0, alias="truncatedAlerts", ge=0)
    group_labels: dict[str, str] = Field(default_factory=dict, alias="groupLabels")
    common_labels: dict[str, str] = Field(default_factory=dict, alias="commonLabels")
    common_annotations: dict[str, str] = Field(default_factory=dict, alias="commonAnnotations")
    external_url: str = Field("", alias="externalURL")
    alerts: list[WebhookAlert]


class AlertRequest(BaseModel):
    """One alert, ready to start an investigation from."""

    model_config = ConfigDict(frozen=True)

    alertname: str
    status: Literal["firing", "resolved"]
    severity: str | None
    labels: dict[str, str]
    annotations: dict[str, str]
    summary: str | None
    description: str | None
    starts_at: datetime
    ends_at: datetime | None
    since: datetime
    """Where the investigation's time window starts: ``starts_at`` minus a margin."""
    generator_url: str | None
    expr: str | None
    """The alert's PromQL expression, from ``g0.expr`` in the generator URL, when present."""
    fingerprint: str | None
    receiver: str | None
    external_url: str | None

    def runbook_inputs(self) -> dict[str, str]:
        """The standard runbook inputs (``question``, ``since``, ``until``) for this alert."""
        inputs = {"question": to_question(self), "since": _iso(self.since)}
        if self.ends_at is not None:
            inputs["until"] = _iso(self.ends_at)
        return inputs


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


def expr_from_generator_url(url: str) -> str | None:
    """The PromQL expression in a Prometheus graph link (``...graph?g0.expr=...``), or ``None``."""
    if not url:
        return None
    values = parse_qs(urlsplit(url).query).get("g0.expr")
    return values[0].strip() if values and values[0].strip() else None


def _describe_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "payload"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def parse_webhook(payload: Mapping[str, Any], margin: timedelta = DEFAULT_MARGIN) -> list[AlertRequest]:
    """Validate an Alertmanager webhook payload (version 4) and return one request per alert.

    Args:
        payload: the decoded JSON body Alertmanager POSTed.
        margin: how long before each alert's ``startsAt`` its ``since`` bound lies.

    Raises:
        UserError: the payload is not a valid version 4 notification; the message names the
            offending fields.
    """
    if not isinstance(payload, Mapping):
        raise UserError(
            f"invalid Alertmanager webhook payload: expected a JSON object, got {type(payload).__name__}",
            hint="configure the receiver as an Alertmanager webhook_config",
        )
    try:
        parsed = WebhookPayload.model_validate(dict(payload))
    except ValidationError as exc:
        raise UserError(
            f"invalid Alertmanager webhook payload: {_describe_errors(exc)}",
            hint="expected the Alertmanager webhook format version 4 "
            "(https://prometheus.io/docs/alerting/latest/configuration/#webhook_config)",
        ) from None
    requests = []
    for alert in parsed.alerts:
        labels = {**parsed.common_labels, **alert.labels}
        annotations = {**parsed.common_annotations, **alert.annotations}
        starts_at = alert.starts_at if alert.starts_at.tzinfo else alert.starts_at.replace(tzinfo=UTC)
        ends_at = alert.ends_at
        if ends_at is not None and (ends_at.year <= _ZERO_TIME_YEAR or alert.status == "firing"):
            # Firing alerts carry the zero time or a provisional expiry, not an end.
            ends_at = None
        requests.append(
            AlertRequest(
                alertname=labels["alertname"],
                status=alert.status,
                severity=labels.get("severity"),
                labels=labels,
                annotations=annotations,
                summary=annotations.get("summary") or None,
                description=annotations.get("description") or None,
                starts_at=starts_at,
                ends_at=ends_at,
                since=starts_at - margin,
                generator_url=alert.generator_url or None,
                expr=expr_from_generator_url(alert.generator_url),
                fingerprint=alert.fingerprint or None,
                receiver=parsed.receiver or None,
                external_url=parsed.external_url or None,
            )
        )
    return requests


def _where(labels: Mapping[str, str]) -> str:
    parts = [f"{key}={labels[key]}" for key in _WHERE_LABELS if labels.get(key)]
    return ", ".join(parts[:4])


def _when(dt: datetime, now: datetime) -> str:
    utc = dt.astimezone(UTC)
    if utc.date() == now.astimezone(UTC).date():
        return f"{utc:%H:%M} UTC"
    return f"{utc:%Y-%m-%d %H:%M} UTC"


def _clip(text: str, limit: int = 500) -> str:
    # Annotations are free text from rule authors; a runaway one must not flood the question.
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def to_question(alert: AlertRequest, now: datetime | None = None) -> str:
    """A natural-language investigation question for one alert.

    For example: "Alert HighErrorRate (critical) firing since 14:05 UTC on job=api: Error rate
    above 5%. Expression: `rate(...) > 0.05`. Investigate the cause."

    Args:
        alert: a request from :func:`parse_webhook`.
        now: the reference time deciding whether the date is shown (default: now).
    """
    ref = now or datetime.now(UTC)
    head = f"Alert {alert.alertname}" + (f" ({alert.severity})" if alert.severity else "")
    if alert.status == "firing":
        head += f" firing since {_when(alert.starts_at, ref)}"
    else:
        head += f" resolved; it fired from {_when(alert.starts_at, ref)}"
        if alert.ends_at is not None:
            head += f" to {_when(alert.ends_at, ref)}"
    where = _where(alert.labels)
    if where:
        head += f" on {where}"
    text = _clip(alert.summary or alert.description or "")
    sentence = f"{head}: {text.rstrip('.')}." if text else f"{head}."
    if alert.summary and alert.description and alert.description != alert.summary:
        sentence += f" {_clip(alert.description).rstrip('.')}."
    if alert.expr:
        sentence += f" Expression: `{alert.expr}`."
    if alert.status == "firing":
        return sentence + " Investigate the cause."
    return sentence + " Investigate what caused it and whether it may come back."
