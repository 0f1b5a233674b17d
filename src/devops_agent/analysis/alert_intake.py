"""Turn an Alertmanager webhook notification into investigation requests.

Alertmanager POSTs a JSON document (format ``version: "4"``, see
https://prometheus.io/docs/alerting/latest/configuration/#webhook_config) to a webhook receiver.
:func:`parse_webhook` validates it and returns one :class:`AlertRequest` per alert, with the
PromQL expression recovered from the ``generatorURL`` (``g0.expr``), that expression split into
the series and the alert's threshold (:func:`split_threshold`: ``rate(x[5m]) > 50`` only has
points where the alert fires, so an anomaly detector needs ``rate(x[5m])``), a ``since`` bound a
margin before the alert started, and a ``history_since`` bound far enough back for the detector
(:func:`history_before`). :func:`to_question` phrases an alert as the question an investigation
starts from; :meth:`AlertRequest.runbook_inputs` gives the standard runbook inputs and
:meth:`AlertRequest.investigation_inputs` those of the ``metric-alert`` runbook.

This module is pure: it must not start runs, call Prometheus or Alertmanager, or read settings;
the caller (the CLI's ``investigate --alert``) decides what to do with the requests.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from devops_agent.errors import UserError

DEFAULT_MARGIN = timedelta(minutes=15)
"""How far before ``startsAt`` the cause is looked for (``since``): it usually precedes the alert."""

# The metric analysis needs history before the onset, sized by the detector and the range query:
# prom_anomalies asks for about 300 points per range (120 at worst once the step is rounded to a
# readable one), and analysis.anomaly's detector scores nothing before min_history (48) points
# and needs a few times that for stable baselines. With the onset at 4/5 of the range the
# detector gets >= 96 points before it and >= 24 after (enough to tell a spike from a shift).
HISTORY_FACTOR = 4
"""History before ``startsAt``, as a multiple of how long the alert has been (or was) firing."""
MIN_HISTORY = timedelta(hours=2)
"""Floor: a baseline long enough to see recurring log lines; more would coarsen the step so far
that the few points after a young alert's onset could not tell a spike from a level shift."""
MAX_HISTORY = timedelta(days=2)
"""Cap: an alert firing for days is analysed at a coarser step rather than over weeks."""

# Labels that identify where an alert fires, most specific context first; the rest are noise
# in a one-line question.
_WHERE_LABELS = ("cluster", "namespace", "service", "job", "deployment", "pod", "instance", "container")
_ZERO_TIME_YEAR = 1  # Alertmanager sends 0001-01-01T00:00:00Z for "not ended"
MAX_LISTED = 10
"""How many alerts of a payload :func:`describe_payload` names one by one."""
CLOCK_SKEW = timedelta(minutes=5)
"""How far in the future a ``startsAt`` may lie and still be taken as ordinary clock skew between
Alertmanager and this machine. Later is a wrong clock or a hand-made payload: the alert is still
investigated (it fires), from now, and the report says so (:attr:`AlertRequest.future_start`)."""


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

    @field_validator("starts_at")
    @classmethod
    def _has_started(cls, starts_at: datetime) -> datetime:
        # The zero time is Alertmanager's "unset"; it leaves no onset to look around (and the
        # history bound before it would not be a date).
        if starts_at.year <= _ZERO_TIME_YEAR:
            raise ValueError("startsAt is the zero time (unset); the alert's start is needed")
        return starts_at


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
    """``startsAt`` as the payload says it."""
    ends_at: datetime | None
    since: datetime
    """Where the cause is looked for from: the onset minus a margin."""
    history_since: datetime
    """Where a metric analysis starts: the onset minus :func:`history_before` its duration."""
    onset: datetime
    """When the alert is taken to have started: ``starts_at``, or now when that lies more than
    :data:`CLOCK_SKEW` in the future (nothing can be lined up with a start that has not come)."""
    generator_url: str | None
    expr: str | None
    """The alert's PromQL expression, from ``g0.expr`` in the generator URL, when present."""
    series_expr: str | None
    """``expr`` without its top-level threshold (:func:`split_threshold`): what to analyse."""
    threshold: str | None
    """The threshold taken off ``expr``, series on the left: ``"> 50"``, ``"== 0"``."""
    fingerprint: str | None
    receiver: str | None
    external_url: str | None
    truncated_alerts: int = 0
    """Alerts of the same group that Alertmanager left out of the payload (``max_alerts``)."""

    @property
    def future_start(self) -> str | None:
        """A sentence when ``startsAt`` lies in the future of this machine's clock, else None."""
        if self.onset >= self.starts_at:
            return None
        return (
            f"the alert's startsAt ({_iso(self.starts_at)}) is {_span(self.starts_at - self.onset)} in the "
            f"future of this machine's clock ({_iso(self.onset)}): its start was taken as now, and "
            "nothing can be lined up with the time the payload gives"
        )

    @property
    def headline(self) -> str:
        """Name, severity and where: ``HighLatency (critical) on job=api, instance=api-1:8080``."""
        where = _where(self.labels)
        return (
            self.alertname
            + (f" ({self.severity})" if self.severity else "")
            + (f" on {where}" if where else "")
        )

    def runbook_inputs(self) -> dict[str, str]:
        """The standard runbook inputs (``question``, ``since``, ``until``) for this alert."""
        inputs = {"question": to_question(self), "since": _iso(self.since)}
        if self.ends_at is not None:
            inputs["until"] = _iso(self.ends_at)
        return inputs

    def investigation_inputs(self, query: str | None = None) -> dict[str, str]:
        """Inputs of the ``metric-alert`` runbook: :meth:`runbook_inputs` with ``since`` moved back
        to ``history_since``, plus ``onset`` (``starts_at``), ``query`` (the series to analyse),
        ``threshold`` and ``alert_title`` (what the report title names), when known.

        Args:
            query: PromQL to analyse instead of the alert's own (its threshold is then dropped).
        """
        inputs = {**self.runbook_inputs(), "since": _iso(self.history_since), "onset": _iso(self.onset)}
        if (future := self.future_start) is not None:
            inputs["future_start"] = future
        if query:
            inputs["query"] = query
        elif self.series_expr:
            inputs["query"] = self.series_expr
            if self.threshold:
                inputs["threshold"] = self.threshold
        # The report title is "Metric alert: {{ alert_title }}{{ query }}"; the separator lives here
        # because a runbook template cannot test whether a value is present.
        # A resolved alert says so in the title: the report is read as "this is on fire" otherwise.
        state = " (resolved)" if self.status == "resolved" else ""
        inputs["alert_title"] = self.headline + state + (": " if inputs.get("query") else "")
        return inputs


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


def expr_from_generator_url(url: str) -> str | None:
    """The PromQL expression in a Prometheus graph link (``...graph?g0.expr=...``), or ``None``."""
    if not url:
        return None
    values = parse_qs(urlsplit(url).query).get("g0.expr")
    return values[0].strip() if values and values[0].strip() else None


# PromQL, just enough to find a comparison at the top level of an expression.
_COMPARISONS = ("==", "!=", ">=", "<=", ">", "<")
_FLIPPED = {">": "<", "<": ">", ">=": "<=", "<=": ">=", "==": "==", "!=": "!="}
_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_SET_OPERATORS = frozenset({"and", "or", "unless"})
_NUMBER = r"(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[iI][nN][fF]|[nN][aA][nN])"
_ARITH = r"[\s()+\-*/%^]*"
_CONSTANT_RE = re.compile(rf"{_ARITH}(?:{_NUMBER}(?![\w.]){_ARITH})+")
_IDENT_RE = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_NUMBER_TAIL_RE = re.compile(r"(?:[eE][+-]\d|[\w.])*")
_BOOL_RE = re.compile(r"bool(?![A-Za-z0-9_:])", re.IGNORECASE)


def _skip_string(expr: str, i: int) -> int:
    """The index just past the string literal that opens at ``expr[i]`` (raw strings: backticks)."""
    quote, i = expr[i], i + 1
    while i < len(expr) and expr[i] != quote:
        i += 2 if expr[i] == "\\" and quote != "`" else 1
    return min(i + 1, len(expr))


def _scan(expr: str) -> tuple[list[tuple[int, str]], set[str], int | None]:
    """Walk ``expr`` (without comments) once, skipping strings, and return what lies at the top level:
    the comparison operators (position, operator), the lower-cased identifiers, and where the
    bracket opened at position 0 closes (``None`` if ``expr`` does not start with one)."""
    ops: list[tuple[int, str]] = []
    words: set[str] = set()
    expected: list[str] = []  # closers of the brackets open at this point
    first_closes: int | None = None
    i = 0
    while i < len(expr):
        ch = expr[i]
        if ch in "\"'`":
            i = _skip_string(expr, i)
            continue
        if ch in _CLOSERS:
            expected.append(_CLOSERS[ch])
        elif expected:
            if ch == expected[-1]:
                expected.pop()
                if not expected and first_closes is None and expr[0] in _CLOSERS:
                    first_closes = i
        elif (word := _IDENT_RE.match(expr, i)) is not None:
            words.add(word.group().lower())
            i = word.end()
            continue
        elif ch.isdigit() or ch == ".":  # a number: 1e-3 has no operator in it
            tail = _NUMBER_TAIL_RE.match(expr, i + 1)
            i = tail.end() if tail else i + 1
            continue
        elif (op := next((o for o in _COMPARISONS if expr.startswith(o, i)), None)) is not None:
            ops.append((i, op))
            i += len(op)
            continue
        i += 1
    return ops, words, first_closes


def _without_comments(expr: str) -> str:
    """``expr`` without ``# ...`` comments (a multi-line rule may carry them)."""
    out, i = [], 0
    while i < len(expr):
        if expr[i] in "\"'`":
            end = _skip_string(expr, i)
            out.append(expr[i:end])
            i = end
        elif expr[i] == "#":
            end = expr.find("\n", i)
            i = len(expr) if end < 0 else end
        else:
            out.append(expr[i])
            i += 1
    return "".join(out)


def _unwrap(expr: str) -> str:
    """``expr`` without parentheses around all of it: ``((x > 1))`` -> ``x > 1``."""
    expr = expr.strip()
    while expr.startswith("(") and _scan(expr)[2] == len(expr) - 1:
        expr = expr[1:-1].strip()
    return expr


def is_constant(operand: str) -> bool:
    """Whether a PromQL operand is a number or arithmetic on numbers (``0.05``, ``10 * 1024^3``)."""
    return _CONSTANT_RE.fullmatch(operand.strip()) is not None


def split_threshold(expr: str) -> tuple[str, str | None]:
    """Split an alert expression into the series it filters and its threshold.

    An alerting rule fires for each series its expression returns, so ``rate(x[5m]) > 50`` has
    points only while the alert fires; the series worth analysing is ``rate(x[5m])``. Only one
    comparison against a constant at the top level is taken off (``up{job="x"} == 0``,
    ``sum(a) / sum(b) > 0.05``, ``0.9 < x``); the threshold comes back with the series on the
    left (``"> 0.9"`` for ``0.9 < x``). Anything else comes back unchanged with ``None``: no
    comparison (``absent(up)``), a ``bool`` comparison (a 0/1 value, not a filter), a comparison
    of two vectors (``x > on(instance) group_left y``), several comparisons, or a set operator
    (``and``, ``or``, ``unless``) at the top level.
    """
    whole = expr.strip()
    text = _unwrap(_without_comments(whole))
    ops, words, _ = _scan(text)
    if len(ops) != 1 or words & _SET_OPERATORS:
        return whole, None
    pos, op = ops[0]
    left, right = text[:pos].strip(), text[pos + len(op) :].strip()
    if _BOOL_RE.match(right):
        return whole, None
    if is_constant(right) and left and not is_constant(left):
        return left, f"{op} {right}"
    if is_constant(left) and right and not is_constant(right):
        return right, f"{_FLIPPED[op]} {left}"
    return whole, None


def history_before(duration: timedelta) -> timedelta:
    """How much history before ``startsAt`` a metric analysis needs for an alert that has been
    firing (or fired) for ``duration``: :data:`HISTORY_FACTOR` times it, within
    [:data:`MIN_HISTORY`, :data:`MAX_HISTORY`]."""
    wanted = HISTORY_FACTOR * max(duration, timedelta(0))
    whole_minutes = timedelta(minutes=math.ceil(wanted.total_seconds() / 60))  # readable bounds
    return min(MAX_HISTORY, max(MIN_HISTORY, whole_minutes))


def _describe_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "payload"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def parse_webhook(
    payload: Mapping[str, Any], margin: timedelta = DEFAULT_MARGIN, now: datetime | None = None
) -> list[AlertRequest]:
    """Validate an Alertmanager webhook payload (version 4) and return one request per alert,
    in the payload's order (:func:`investigation_order` puts the firing ones first).

    Args:
        payload: the decoded JSON body Alertmanager POSTed.
        margin: how long before each alert's ``startsAt`` its ``since`` bound lies.
        now: the end of a firing alert's duration, which sizes ``history_since`` (default: now).

    An alert whose ``startsAt`` lies more than :data:`CLOCK_SKEW` after ``now`` is kept, with its
    onset (and so its windows) at ``now`` and :attr:`AlertRequest.future_start` saying so.

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
    ref = now or datetime.now(UTC)
    requests = []
    for alert in parsed.alerts:
        labels = {**parsed.common_labels, **alert.labels}
        annotations = {**parsed.common_annotations, **alert.annotations}
        starts_at = alert.starts_at if alert.starts_at.tzinfo else alert.starts_at.replace(tzinfo=UTC)
        # A start in the future has no data around it yet: windows placed before it would hold
        # nothing (an empty window must not read as "nothing wrong"). The alert fires, so it is
        # investigated from now, and future_start says why.
        onset = ref.replace(microsecond=0) if starts_at > ref + CLOCK_SKEW else starts_at
        ends_at = alert.ends_at
        if ends_at is not None and (ends_at.year <= _ZERO_TIME_YEAR or alert.status == "firing"):
            # Firing alerts carry the zero time or a provisional expiry, not an end.
            ends_at = None
        elif ends_at is not None and ends_at.tzinfo is None:
            ends_at = ends_at.replace(tzinfo=UTC)
        expr = expr_from_generator_url(alert.generator_url)
        series_expr, threshold = split_threshold(expr) if expr else (None, None)
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
                since=onset - margin,
                history_since=onset - history_before((ends_at or ref) - onset),
                onset=onset,
                generator_url=alert.generator_url or None,
                expr=expr,
                series_expr=series_expr,
                threshold=threshold,
                fingerprint=alert.fingerprint or None,
                receiver=parsed.receiver or None,
                external_url=parsed.external_url or None,
                truncated_alerts=parsed.truncated_alerts,
            )
        )
    return requests


def investigation_order(alerts: Sequence[AlertRequest]) -> list[AlertRequest]:
    """``alerts`` with the firing ones first, each group in payload order: what to look at first."""
    return sorted(alerts, key=lambda a: a.status != "firing")


def describe_payload(alerts: Sequence[AlertRequest], chosen: int) -> str:
    """One sentence naming every alert of a payload, numbered from 1 in payload order, and
    marking ``alerts[chosen]`` as the one investigated; empty when the payload held one alert."""
    if len(alerts) < 2:
        return ""
    # A big group (thousands of alerts) would make the question, and so the report and any model
    # prompt, as big as the payload: name the first few and the chosen one, count the rest.
    shown = [n for n in range(len(alerts)) if n < MAX_LISTED or n == chosen]
    items = []
    for number in shown:
        alert = alerts[number]
        state = "firing" if alert.status == "firing" else "resolved"
        mark = ", investigated here" if number == chosen else ""
        items.append(f"#{number + 1} {alert.headline} ({state}{mark})")
    rest = [a for n, a in enumerate(alerts) if n not in shown]
    if rest:
        firing = sum(a.status == "firing" for a in rest)
        items.append(f"and {len(rest)} more ({firing} firing, {len(rest) - firing} resolved)")
    return f"The payload held {len(alerts)} alerts: " + "; ".join(items) + "."


def _span(delta: timedelta) -> str:
    """``2 h 5 min``, ``3 days``: how far ahead a start lies, roughly."""
    minutes = int(delta.total_seconds() // 60)
    if minutes >= 2 * 1440:
        return f"{minutes // 1440} days"
    hours, rest = divmod(minutes, 60)
    return " ".join(p for p in (f"{hours} h" if hours else "", f"{rest} min" if rest else "") if p) or "0 min"


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
    if alert.status == "firing" and alert.future_start is not None:
        head += f" firing, its startsAt {_when(alert.starts_at, ref)} in the future of this machine's clock"
    elif alert.status == "firing":
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
    else:
        sentence += " It carries no PromQL expression (no generatorURL), so its metric cannot be queried."
    if alert.truncated_alerts:
        sentence += (
            f" Alertmanager left {alert.truncated_alerts} more alert(s) of this group out of the payload "
            "(truncatedAlerts, the receiver's max_alerts); list them in Alertmanager."
        )
    if alert.status == "firing":
        return sentence + " Investigate the cause."
    return sentence + " Investigate what caused it and whether it may come back."
