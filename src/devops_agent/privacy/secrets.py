"""Secret scrubber: finds credentials in text and replaces them, irreversibly, with ``[REDACTED_SECRET]``.

Secrets are never stored, never mapped to placeholders and never restored; this module only finds
and cuts them. It covers provider token formats (GitHub, GitLab, Slack, Stripe, OpenAI, ...), PEM
and PuTTY private keys, JWTs, ``Authorization`` headers, cookies, passwords inside URLs, password
hashes, credentials on command lines (``curl -u``, ``--password``), a few log and file formats
(Jenkins' first admin password, ``~/.pgpass``) and ``key = value`` lines whose key names a secret.
Documentation dummies (``xxxx``, ``EXAMPLE``, ``abcdef…``, ``changeme``) are never secrets.

Speed matters (every tool output passes through here), so each rule carries literal *keywords*;
a rule's regex runs only when one of its keywords occurs in the text (one C-level substring scan
per keyword), and every regex is written without nested unbounded quantifiers.

Entropy is used only inside a narrow context (the value of a secret-named key); on ordinary text it
flags nearly everything. This module must not import anything outside ``devops_agent.errors`` /
``devops_agent.config``; it must never log or return the secret values themselves.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

try:  # optional accelerator: one pass for all rule keywords instead of one scan per keyword
    import ahocorasick as _ahocorasick  # type: ignore[import-untyped,import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - exercised where the extra is not installed
    _ahocorasick = None

REDACTED = "[REDACTED_SECRET]"

# A span finder looks in text[lo:hi] (whole lines) and returns (start, end) of each secret part.
Finder = Callable[[str, int, int], Iterable[tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One secret: its rule ``kind`` and the span it had in the *input* text."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ScrubResult:
    """The scrubbed text and what was removed (kinds and input offsets only, never values)."""

    text: str
    findings: list[SecretFinding] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    # Literals every match contains. Lower-case ones are looked up case-insensitively, others exactly.
    # The rule runs only on the lines holding one (or on the whole text when ``multiline``).
    keywords: tuple[str, ...]
    find: Finder
    multiline: bool = False


# Documentation and hand-typed values, never generated: marker words, one character repeated, six
# ascending letters or digits (``abcdef``, ``123456``: under 1 in 10^8 per position by chance in a
# random token), and a short unit repeated (``1234-1234-1234-``).
_DUMMY_RX = re.compile(
    r"xxxx|\*\*\*\*|####|example|your|here|placeholder|dummy|fake|sample|qwerty|change[_-]?me|a1b2c3"
)
_SEQUENCES = tuple(
    run[i : i + 6] for run in ("abcdefghijklmnopqrstuvwxyz", "0123456789") for i in range(len(run) - 5)
)
_REPEAT_HINT_RX = re.compile(r"(...).{0,3}\1")  # needed for a repeat, and cheap: most values stop here
_REPEAT_RX = re.compile(r"(.)\1{7}|(..)\2{4,}|(...)\3\3|(....)\4\4|(.....)\5\5|(......)\6\6")
_MASK_TAIL = ("####", "****", "xxxx", "XXXX", "...", "…")


def _is_dummy(value: str) -> bool:
    """Documentation values: ``ghp_xxxx…``, ``AKIA…EXAMPLE``, ``sk-…abcdef…``, ``1234-1234-1234``.

    Applied to tokens of every format (a real token never holds these patterns, so the choice only
    decides whether a fake one is redacted), but not to passwords: people choose those, and words
    in them (``ExamplePas123``) are no evidence of a placeholder. Placeholders are short, so only
    the head of a long value is looked at.
    """
    head = value[:64].lower()
    if _DUMMY_RX.search(head) or (len(value) >= 12 and len(set(head)) < 6):
        return True
    if any(q in head for q in _SEQUENCES):
        return True
    return _REPEAT_HINT_RX.search(head) is not None and _REPEAT_RX.search(head) is not None


def _group_finder(pattern: str, flags: int = 0, group: int | str = 0) -> Finder:
    rx = re.compile(pattern, flags)

    def find(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
        for m in rx.finditer(text, lo, hi):
            value = m.group(group)
            if (
                value
                and not _is_dummy(value)
                and not _is_placeholder(value)
                and not _masked_after(text, m.end())
            ):
                yield m.span(group)

    return find


def _masked_after(text: str, end: int) -> bool:
    """A token cut short by a mask (``xoxp-123-456-####``) is a placeholder, not a shorter token."""
    return text.startswith(_MASK_TAIL, end)


def _token(
    kind: str,
    keywords: Iterable[str],
    pattern: str,
    flags: int = 0,
    group: int | str = 0,
    *,
    multiline: bool = False,
) -> _Rule:
    return _Rule(kind, tuple(keywords), _group_finder(pattern, flags, group), multiline)


# Provider token formats. Each pattern anchors on a distinctive literal prefix.
_B = r"(?<![A-Za-z0-9_])"  # token start boundary ("\b" is wrong before a prefix like "_" or "-")
_E = r"(?![A-Za-z0-9_])"
_PROVIDER_RULES: list[_Rule] = [
    _token(
        "aws_access_key_id",
        ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        _B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _E,
    ),
    _token(
        "github_token", ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], _B + r"gh[pousr]_[A-Za-z0-9]{36,255}" + _E
    ),
    _token("github_pat", ["github_pat_"], _B + r"github_pat_[A-Za-z0-9_]{22,255}"),
    _token(
        "gitlab_token", ["gl"], _B + r"gl(?:pat|dt|ptt|rt|cbt|oas|soat|ffct|imt|agent|ft)-[A-Za-z0-9_-]{20,}"
    ),
    _token("gitlab_runner_token", ["GR1348941"], _B + r"GR1348941[A-Za-z0-9_-]{20,}"),
    _token(
        "slack_token",
        ["xox"],
        _B + r"xox[abpsr]-\d{6,}-[A-Za-z0-9-]{10,}|" + _B + r"xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{60,}",
    ),
    _token("slack_app_token", ["xapp-"], _B + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    _token(
        "slack_webhook",
        ["hooks.slack.com"],
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
    ),
    _token(
        "stripe_key", ["_live_", "_test_", "_prod_"], _B + r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}"
    ),
    _token("stripe_webhook_secret", ["whsec_"], _B + r"whsec_[A-Za-z0-9]{24,}"),
    _token("twilio_api_key", ["SK"], _B + r"SK[0-9a-fA-F]{32}" + _E),
    _token("sendgrid_key", ["SG."], _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E),
    _token("npm_token", ["npm_"], _B + r"npm_[A-Za-z0-9]{36}" + _E),
    _token("pypi_token", ["pypi-"], _B + r"pypi-Ag[A-Za-z0-9_-]{50,}"),
    _token("anthropic_key", ["sk-ant-"], _B + r"sk-ant-(?:api|admin|sid)\d\d-[A-Za-z0-9_-]{93}AA" + _E),
    _token("openai_key", ["T3BlbkFJ"], _B + r"sk-(?:[a-z]+-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}"),
    _token(
        "openai_key",
        ["sk-"],
        _B + r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|" + _B + r"sk-[A-Za-z0-9]{48}" + _E,
    ),
    _token("google_api_key", ["AIza"], _B + r"AIza[0-9A-Za-z_-]{35}" + _E),
    _token("google_oauth_secret", ["gocspx-"], _B + r"GOCSPX-[A-Za-z0-9_-]{28}"),
    _token("google_oauth_token", ["ya29."], _B + r"ya29\.[0-9A-Za-z_-]{20,}"),
    _token("heroku_key", ["hrku-"], _B + r"HRKU-[A-Za-z0-9_-]{20,}"),
    _token("mailgun_key", ["key-"], _B + r"key-[0-9a-f]{32}" + _E),
    _token(
        "shopify_token",
        ["shpat_", "shpca_", "shppa_", "shpss_"],
        _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E,
    ),
    _token("digitalocean_token", ["_v1_"], _B + r"do[opr]_v1_[a-f0-9]{64}" + _E),
    _token("vault_token", ["hvs.", "hvb.", "hvr."], _B + r"hv[sbr]\.[A-Za-z0-9_-]{24,}"),
    # Legacy (< 1.10) batch tokens: "b." and a base64url protobuf that starts with version 1.
    _token("vault_token", ["b.AAAAAQ"], _B + r"b\.AAAAAQ[A-Za-z0-9_-]{100,}"),
    _token("atlassian_token", ["ATATT", "ATCTT"], _B + r"AT[AC]TT3[A-Za-z0-9_=-]{60,}"),
    _token(
        "discord_webhook", ["/api/webhooks/"], r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}"
    ),
    _token(
        "discord_bot_token",
        ["discord", "bot"],
        _B + r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _E,
    ),
    _token("telegram_bot_token", [":AA"], _B + r"\d{8,10}:AA[0-9A-Za-z_-]{30,35}" + _E),
    _token("tavily_key", ["tvly-"], _B + r"tvly-[A-Za-z0-9]{32}" + _E),
    _token("sourcegraph_token", ["sgp_"], _B + r"sgp_(?:[A-Fa-f0-9]{16}_|local_)?[A-Fa-f0-9]{40}" + _E),
    _token("facebook_token", ["EAA"], _B + r"EAA[A-Za-z0-9]{90,}"),
    _token("facebook_app_token", ["|"], _B + r"\d{15,16}\|[A-Za-z0-9_-]{27}" + _E),
    _token("notion_token", ["ntn_"], _B + r"ntn_[A-Za-z0-9]{40,}"),
    _token("intra42_secret", ["s-s4t2"], _B + r"s-s4t2(?:ud|af)-[a-f0-9]{64}" + _E),
    _token("onepassword_token", ["ops_eyj"], _B + r"ops_eyJ[A-Za-z0-9+/=_-]{100,}"),
    _token("grafana_api_key", ["eyJrIjoi"], r"eyJrIjoi[A-Za-z0-9+/]{40,}={0,2}"),
    _Rule(
        "cli_password_flag", ("pass", "token", "secret", "key"), lambda t, lo, hi: _find_cli_flags(t, lo, hi)
    ),
    _token(
        "square_token",
        ["sq0atp-", "sq0csp-", "eaaa"],
        _B + r"sq0(?:atp-[A-Za-z0-9_-]{22}|csp-[A-Za-z0-9_-]{43})" + _E,
    ),
    _token("twitch_stream_key", ["live_"], _B + r"live_\d{6,10}_[A-Za-z0-9]{30}" + _E),
    _token("salesforce_token", ["00D"], _B + r"00D[A-Za-z0-9]{12,15}![A-Za-z0-9_.]{80,}"),
    _token("sonarqube_token", ["sqa_", "squ_", "sqp_"], _B + r"sq[upa]_[a-f0-9]{40}" + _E),
    _token(
        "sonarqube_token",
        ["sonar"],
        r"(?i)sonar[._]?(?:login|token)[\"']?[ \t]*(?:[:=]|,)[ \t]*[\"']?([a-f0-9]{40})" + _E,
        group=1,
    ),
    _token(
        "vault_unseal_key", ["unseal"], r"(?i)unseal(?: key \d+:)?[ \t]+([A-Za-z0-9+/]{43,}={0,2})", group=1
    ),
    _token("jwt", ["eyJ"], _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    _token(
        "azure_storage_key",
        ["accountkey=", "sharedaccesskey="],
        r"(?i:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})",
        group=1,
    ),
    _token("azure_sas_signature", ["sig="], r"[?&;]sig=([A-Za-z0-9%+/]{20,}(?:%3[dD]|=){0,2})", group=1),
    _token(
        "azure_client_secret",
        ["q~"],
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
    ),
    _token(
        "newrelic_key",
        ["NRAK-", "NRII-", "NRJS-", "NRAA-", "NRIQ-", "NRRA-"],
        _B + r"NR(?:AK|II|JS|AA|IQ|RA)-[A-Za-z0-9_-]{19,42}",
    ),
    _token("sentry_token", ["sntrys_", "sntryu_"], _B + r"sntry[su]_[A-Za-z0-9_=+/-]{40,}"),
    _token("linear_key", ["lin_api_"], _B + r"lin_api_[A-Za-z0-9]{40}"),
    _token("postman_key", ["pmak-"], _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _token("age_secret_key", ["age-secret-key-"], r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _token("dockerhub_pat", ["dckr_pat_"], _B + r"dckr_pat_[A-Za-z0-9_-]{27,}"),
    _token("huggingface_token", ["hf_"], _B + r"hf_[A-Za-z]{34}" + _E),
    _token("databricks_token", ["dapi"], _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
    _token("grafana_token", ["glc_", "glsa_"], _B + r"gl(?:c|sa)_[A-Za-z0-9_+/=-]{32,}"),
    _token("doppler_token", ["dp."], _B + r"dp\.(?:st|pt|ct|sa|scim|audit)\.[A-Za-z0-9_.-]{40,}"),
    _token("pulumi_token", ["pul-"], _B + r"pul-[a-f0-9]{40}" + _E),
    _token("adafruit_key", ["aio_"], _B + r"aio_[A-Za-z0-9]{28}" + _E),
    _token(
        "teams_webhook",
        ["webhook"],
        r"(?:outlook\.office(?:365)?\.com/webhook|\.webhook\.office\.com/webhookb2)/[A-Za-z0-9@/_-]{40,}",
    ),
    _token("nuget_key", ["oy2"], _B + r"oy2[a-z0-9]{43}" + _E),
    _token("newrelic_license_key", ["NRAL"], _B + r"[A-Za-z0-9]{36}NRAL" + _E),
    _token("mapbox_token", ["k.eyJ"], _B + r"[spt]k\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    _token("mailchimp_key", ["-us"], _B + r"[0-9a-f]{32}-us\d{1,2}" + _E),
    _token("azure_devops_pat", ["AZDO"], _B + r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}" + _E),
    _token(
        "google_client_id",
        ["apps.googleusercontent.com"],
        r"\d{12}-[a-z0-9]{32}\.apps\.googleusercontent\.com",
    ),
    _token("base64_private_key", ["LS0tLS1CRUdJTi"], r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]{20,}"),
    _token("dynatrace_token", ["dt0c01."], r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    _token("dependency_track_key", ["odt_"], _B + r"odt_[A-Za-z0-9]{32,}"),
    _token("cratesio_token", ["cio"], _B + r"cio[A-Za-z0-9]{32}" + _E),
    _token(
        "k8s_bootstrap_token",
        ["bootstrap-token"],
        r"(?i)bootstrap-token[\s=:\"']+([a-z0-9]{6}\.[a-z0-9]{16})",
        group=1,
    ),
    _token(
        "jenkins_crumb", ["jenkins-crumb"], r"(?i)Jenkins-Crumb[\"']?\s*[:=]\s*[\"']?([a-f0-9]{32,})", group=1
    ),
    _token(
        "dotnet_credential",
        ["networkcredential", "directoryentry"],
        r"(?:NetworkCredential|DirectoryEntry)\(\s*(?:\"[^\"\n]*\"\s*,\s*){1,2}\"([^\"\n]{3,})\"",
        group=1,
        multiline=True,
    ),
    # Printed once by a new Jenkins controller (also in /var/jenkins_home/secrets/initialAdminPassword).
    _token(
        "jenkins_setup_password",
        ["password to proceed to installation"],  # Jenkins' exact wording, so the scan is case-sensitive
        r"password to proceed to installation:\s{1,10}([a-f0-9]{32})(?![a-f0-9])",
        group=1,
        multiline=True,
    ),
    _token(
        "codeclimate_reporter_id",
        ["cc_test_reporter_id"],
        r"(?i)CC_TEST_REPORTER_ID[\"']?[ \t]*[:=][ \t]*[\"']?([a-f0-9]{64})(?![a-f0-9])",
        group=1,
    ),
    # Postmark server/account tokens are UUIDs: only a Postmark key or header makes one a secret.
    _token(
        "postmark_token",
        ["postmark"],
        r"(?i)postmark(?:[_.-]?(?:server|account|api))?(?:[_.-]?(?:token|key))?[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9a-f-])",
        group=1,
    ),
    # TrueNAS API keys ("<id>-<64 alphanumerics>") passed to the WebSocket login method.
    _token(
        "truenas_api_key",
        ["login_with_api_key"],
        r"login_with_api_key[\"'][^\[\]]{0,60}\[\s{0,20}[\"'](\d{1,6}-[A-Za-z0-9]{64})[\"']",
        group=1,
        multiline=True,
    ),
    _token(
        "aws_bedrock_key", ["ABSKQmVkcm9ja0FQSUtleS"], _B + r"ABSKQmVkcm9ja0FQSUtleS[A-Za-z0-9+/]{100,}={0,2}"
    ),
    # ~/.pgpass lines, hostname:port:database:username:password (PostgreSQL's documented format);
    # keyed on the default port or a wildcard, which nearly every such line has.
    _token(
        "pgpass_password",
        [":5432:", ":*:"],
        r"(?m)^[^:\s#]{1,253}:(?:5432|\*):[^:\s]{1,63}:[^:\s]{1,63}:((?:[^:\s\\]|\\.){1,200})$",
        group=1,
    ),
    _token("psexec_password", ["psexec"], r"(?i)psexec[^\n]{0,200}?\s-p\s+([^\s$%][^\s]*)", group=1),
    _token(
        "password_hash",
        ["$"],
        r"\$(?:1|2[abxy]?|5|6|8|9|7|apr1|y|gy|sha1|md5|pbkdf2(?:-sha\d+)?|krb5[a-z]+|argon2(?:id|i|d))\$"
        r"[./A-Za-z0-9=,+@:$-]{0,60}\$[./A-Za-z0-9=+:$-]{20,}",
    ),
]

# --- private key blocks -------------------------------------------------------------------------

_PEM_RX = re.compile(
    r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[A-Za-z0-9+/=\s:,\"'-]|\\n|\\r){0,20000}?"
    r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|(?=[^A-Za-z0-9+/=\s:,\"'\\-])|\Z)"
)
_PUTTY_RX = re.compile(
    r"Private-Lines: *\d+\r?\n(?:[A-Za-z0-9+/=]{1,80}\r?\n?){1,200}|Private-MAC: *[0-9a-fA-F]{20,}"
)


_PEM_BODY_RX = re.compile(r"[A-Za-z0-9+/]{16,}")


def _find_private_keys(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    for m in _PEM_RX.finditer(text, lo, hi):
        body = m.group()[30:]
        if sum(len(b) for b in _PEM_BODY_RX.findall(body)) >= 64:  # a real key, not "...anything..."
            yield m.span()
    if "Private-" in text:
        for m in _PUTTY_RX.finditer(text, lo, hi):
            yield m.span()


# --- AWS secret access key near an access key id -------------------------------------------------

_AKID_RX = re.compile(r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}")
_AWS_SECRET_RX = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _find_aws_secret_near_id(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    for m in _AKID_RX.finditer(text, lo, hi):
        lo, hi = max(0, m.start() - 300), min(len(text), m.end() + 300)
        for s in _AWS_SECRET_RX.finditer(text, lo, hi):
            v = s.group()
            if any(c.islower() for c in v) and any(c.isupper() for c in v) and any(c.isdigit() for c in v):
                yield s.span()


# --- passwords in URLs ---------------------------------------------------------------------------

# Starts with the literal "://" (the scheme is a lookbehind) so the engine can jump between them.
_URL_USERINFO_RX = re.compile(r"(?<=[A-Za-z0-9+.-]{2})://([^\s/@\"'<>]{0,256}(?:@[^\s/@\"'<>]{0,256}){0,4})@")


def _find_url_passwords(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    for m in _URL_USERINFO_RX.finditer(text, lo, hi):
        userinfo = m.group(1)
        colon = userinfo.find(":")
        if colon < 0 or colon == len(userinfo) - 1:
            continue
        password = userinfo[colon + 1 :]
        if _is_placeholder(password) or password.startswith("$"):
            continue
        start = m.start(1) + colon + 1
        yield start, m.end(1)


# --- Authorization headers, bearer tokens, cookies -------------------------------------------------

_CLI_PLACEHOLDERS = frozenset({"password", "pass", "passwd", "token", "secret", "test", "yyy", "xxx", "pwd"})


# The flag name may carry a prefix: ``--db-password``, ``-vaultToken`` (camelCase), ``-ApiKey``.
# Patterns here start with a literal "-" (boundaries are lookbehinds after it): the regex engine then
# skips to each "-" instead of trying every position.
_CLI_FLAG_RX = re.compile(
    r"-(?<![\w-]-)-?(?P<key>(?:[A-Za-z0-9]+[_-]|[a-z0-9]+(?=[A-Z]))*(?i:password|passwd|pass|token|secret|api-?key))"
    r"[ \t=]+(?P<q>[\"']?)(?P<v>[^\s\"'$%<{(-][^\s\"']{2,})(?P=q)(?=[\s\"'`]|$)"
)


def _find_cli_flags(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    if "-" not in text[lo:hi]:
        return
    for m in _CLI_FLAG_RX.finditer(text, lo, hi):
        if _value_is_secret(m.group("key"), m.group("v"), True):
            yield m.span("v")


def _cli_value_ok(value: str, *, token: bool) -> bool:
    low = value.lower()
    if low in _CLI_PLACEHOLDERS or low in _PASSWORD_PLACEHOLDERS or _is_placeholder(value):
        return False
    return not _is_dummy(value) if token else not low.startswith("your")  # (a password: see _is_dummy)


def _find_cli_passwords(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    """``curl -u user:pass``, ``--user "user":"pass"``, ``-u "API_KEY:"`` (a key sent as the user name)."""
    for m in _CLI_USER_RX.finditer(text, lo, hi):
        user, start, end = m.group("user"), m.start("pw"), m.end("pw")
        if text.startswith("{", start) and text.startswith("}", end - 1):
            start, end = start + 1, end - 1  # --user "{id}":"{secret}": the braces are quoting
        pw = text[start:end]
        if pw == user or (user.isdigit() and pw.isdigit()):
            continue  # docker run -u 1000:1000 / -u app:app is user:group; "test:test" a placeholder
        if len(pw) >= 3 and not pw.startswith(("$", "<", "[", "{")) and _cli_value_ok(pw, token=False):
            yield start, end
        elif not pw and _looks_random(user, 10) and _cli_value_ok(user, token=True):
            yield m.span("user")


_CLI_USER_RX = re.compile(
    r"-(?<!\S-)(?:u|-user)[ \t=]+[\"']?(?P<user>[^\s\"':$<\[]{0,100})[\"']?:[\"']?(?P<pw>[^\s\"']{0,200})"
)
_AUTH_HEADER_RX = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
    r"(?:(?:basic|bearer|token|digest|negotiate|ntlm|apikey|sso-key|ssws|aws4-hmac-sha256|hmac)\s+)?"
    r"(?![<{$])([^\s\"',;]{8,}(?:[ \t]*,[ \t]*[A-Za-z]+=[^\s,]+){0,8})"
)
_BEARER_RX = re.compile(r"(?i)\bbearer:?\s+([A-Za-z0-9._~+/-]{16,}=*)")
_COOKIE_LINE_RX = re.compile(r"(?im)\b(?:set-)?cookie[\"']?\s*[:=]\s*[\"']?([^\r\n]*)")
_COOKIE_PAIR_RX = re.compile(r"([^=;,\s]{1,100})=([^;,\s\"']{4,})")
_SESSION_NAME_RX = re.compile(r"(?i)sess|sid|token|auth|jwt|csrf|xsrf|remember|login|secret|key|pass|sig")
_COOKIE_ATTRS = frozenset({"path", "domain", "expires", "max-age", "samesite", "priority", "version"})


def _find_cookie_values(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    for line in _COOKIE_LINE_RX.finditer(text, lo, hi):
        base = line.start(1)
        for pair in _COOKIE_PAIR_RX.finditer(line.group(1)):
            name, value = pair.group(1), pair.group(2)
            if name.lower() in _COOKIE_ATTRS:
                continue
            if _SESSION_NAME_RX.search(name) or _looks_random(value, 16):
                yield base + pair.start(2), base + pair.end(2)


# --- key = value lines with a secret-named key -----------------------------------------------------

# A key names a secret if it contains one of these words. "pass" must end the word (bypass, passive,
# passwordField, timePasswordChanged are not secrets).
_SECRET_KEY_WORD = (
    r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"client[_-]?secret|auth|credentials?|app[_-]?key|account[_-]?key|encryption[_-]?key|signing[_-]?key|"
    r"master[_-]?key|secret[_-]?key|session[_-]?key|license[_-]?key|salt|[_.-]key|pat)"
)
_KEY = r"[A-Za-z0-9_.-]{0,40}?" + _SECRET_KEY_WORD + r"(?![a-z])[A-Za-z0-9_.-]{0,40}"
_SECRET_KEY_RX = re.compile(r"(?i)" + _SECRET_KEY_WORD + r"(?![a-z])")
_SEP = r"(?:\\{0,2}[\"'])?[ \t]{0,20}(?:=>|:=|[!=]==?|=|:|[\"'][ \t]*,)[ \t]{0,20}"
_QUOTED = r"(?:\"(?P<qv>[^\"\r\n]{1,500})\"|'(?P<sv>[^'\r\n]{1,500})'|`(?P<bv>[^`\r\n]{1,500})`)"
_DOTNET_ADD_RX = re.compile(r"<add\s+key=\"(?P<key>[^\"]{1,100})\"\s+value=\"(?P<qv>[^\"]{1,500})\"")
_PROSE_PASSWORD_RX = re.compile(
    r"(?i)\bpass(?:word|phrase)\b[^.\n]{0,40}?\bis:?\s+(?:\"(?P<qv>[^\"\n]{3,64})\"|'(?P<sv>[^'\n]{3,64})')"
)
_XML_ELEM_RX = re.compile(r"(?i)<(?P<key>" + _KEY + r")(?:\s[^>]{0,200})?>(?P<qv>[^<\r\n]{1,500})</")
_WS_PASSWORD_RX = re.compile(
    r"(?im)(?:^[ \t]*|\blogin[ \t]+\S+[ \t]+)(?P<key>password|passwd|passphrase)[ \t]+"
    r"\"?(?P<qv>[^\s\"]{1,200}(?<![.,:;]))\"?[ \t]*(?:$|\s(?:account|machine|login|port)\b)"
)
# Keys that *mention* a secret but hold metadata about it (a suffix test: ``token_path``, ``secretName``).
_META_KEY_SUFFIXES = (
    "path", "file", "name", "id", "type", "field", "length", "len", "size", "url", "uri", "dir", "enabled",
    "required", "count", "ttl", "timeout", "format", "version", "algorithm", "alg", "hint", "prompt", "label",
    "policy", "header", "ref", "location", "provider", "mode", "endpoint", "changed", "reset", "pattern",
    "regex", "strength", "min", "max", "hash", "validation", "store", "env", "var", "prefix", "domain",
    "host", "hostname", "server", "realm", "scope", "method", "issuer", "audience", "age", "days", "retries",
    "attempts", "history", "rounds", "iterations", "cost", "metadata",
)  # fmt: skip


def _is_meta_key(key: str) -> bool:
    low = key.lower()
    if low.endswith(_META_KEY_SUFFIXES):
        return not low.endswith(("access_key_id", "accesskeyid", "access-key-id"))
    i = low.rfind("expir")  # token_expiry, secret_expires_at
    return i >= 0 and "." not in low[i:] and "-" not in low[i:]


# Human-chosen placeholders for a password (changeit is the JDK trust store's documented default).
_PASSWORD_PLACEHOLDERS = frozenset(
    {"changeme", "change_me", "change-me", "changeit", "changethis", "change_this", "secret_here"}
)
_PASSWORD_KEY_RX = re.compile(r"(?i)pass(?:word|wd|phrase)?(?![a-z])|pwd")
_PLACEHOLDER_RX = re.compile(
    r"(?i)^(?:.*\.\.\.|\$\{.*\}|\$\(.*\)|\$[A-Za-z_][A-Za-z0-9_]*|%\(.*\)s|%[A-Za-z_]+%|\{\{.*\}\}|\{[A-Za-z_]*\}|<.*>|&lt;.*&gt;|"
    r"\[REDACTED[A-Z_]*\]|<<[A-Z_]+_[0-9a-f]{8}>>|\*+|x+|\.+|-+|_+|#+|"
    r"null|none|nil|true|false|yes|no|on|off|undefined|empty|required|optional|string|str|"
    r"placeholder|redacted|hidden|masked|todo|tbd|"
    r"env\(.*|process\.env.*|os\.environ.*|os\.getenv.*|getenv.*|!vault.*|vault:.*|ref\+.*)$"
)
_IDENTIFIER_RX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$|^[a-z]+(?:[A-Z][a-z]+)+$")


def _is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER_RX.match(value.strip()))


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(value: str, min_len: int) -> bool:
    """A token-like value: long enough, several character classes, no spaces, high entropy."""
    if len(value) < min_len or " " in value:
        return False
    classes = sum(
        (any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value))
    )
    return classes >= 2 and _entropy(value) >= 3.0


_NOT_LITERAL_RX = re.compile(r"^\\?\$|^@@?[A-Za-z_]|\$[{(]|^[,;)+.]|[:(+]$|^arn:|[-_]v?\d+\.\d+(?:\.\d+)*$")
_CODE_START_RX = re.compile(r"^:")  # unquoted only (a YAML symbol); quoted, ":9URM*n5…" is a literal


_WORD_SPLIT_RX = re.compile(r"[_.\-/ ]+|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")  # CPUThrottlingHigh


def _is_wordy(value: str) -> bool:
    """Identifier-like values (``DOC_Vector_5_32``, ``jetbrains.mps.v8_elimination``,
    ``ConnectionString_B2B``), not tokens."""
    parts = [p for p in _WORD_SPLIT_RX.split(value) if p]
    if len(parts) < 3 or max(len(p) for p in parts) > 12:
        return False
    return all(
        p.isalpha() or p.isdigit() or len(p) <= 3 or (p[0].isalpha() and p[1:].isdigit()) for p in parts
    )


def _value_is_secret(key: str, value: str, quoted: bool, *, compared: bool = False) -> bool:
    """Is ``value`` (assigned to, or with ``compared`` tested against, ``key``) a literal secret?"""
    # Cheap structural rejections first: this runs on every secret-named key in every tool output.
    if not value or value != value.strip() or _is_meta_key(key):
        return False
    low_key = key.lower()
    if "csrf" in low_key or "xsrf" in low_key:
        return False  # anti-forgery tokens are per session and useless without its cookie
    inner = value.strip("\"'")  # DATABASE_PASSWORD="'$VAR'" quotes the interpolation twice
    if _is_placeholder(value) or (inner != value and _is_placeholder(inner)) or _NOT_LITERAL_RX.search(inner):
        return False  # placeholders, concatenations, variable interpolation, ARNs, versions
    if "public" in low_key or (not quoted and _CODE_START_RX.search(value)):
        return False
    if value.lower() == key.lower():
        return False
    if not quoted and (_IDENTIFIER_RX.match(value) or value.startswith(("~", "http://", "https://"))):
        return False  # a variable, attribute access or path, not a literal secret
    if _PATH_OR_SELECTOR_RX.match(value):
        return False
    if _PASSWORD_KEY_RX.search(key):
        # Any other literal password is a secret, however weak: people choose them, so words in
        # them ("ExamplePas123") are not evidence of a placeholder the way they are in a token.
        low = value.lower()
        return len(value) >= 3 and low not in _PASSWORD_PLACEHOLDERS and not low.startswith("your")
    if value.isdigit() and len(value) < 12:
        return False  # a count or an id; a numeric *password* ("123456") was taken above
    if not _looks_like_secret_value(key, value, quoted and compared):
        return False
    return not _is_dummy(value) and not _is_wordy(value)


def _looks_like_secret_value(key: str, value: str, quoted_comparison: bool) -> bool:
    """Shape test for the value of a key that names a secret but is not a password."""
    if key.lower().strip("_.-") == "key":
        return ":" not in value and _looks_random(value, 20)  # a bare "key" is as often a cache/map key
    if " " in value:  # a few spaces in a random blob, not prose ("*Severity*: warning …")
        return value.count(" ") * 16 <= len(value) and _looks_random(value.replace(" ", ""), 20)
    if len(value) >= 12 or _looks_random(value, 10):
        return True
    # Short and plain: a secret only where code compares one with it: `creds.Secret != "open-sesame"`.
    return quoted_comparison and len(value) >= 6 and _STRONG_KEY_RX.search(key) is not None


_PATH_OR_SELECTOR_RX = re.compile(r"(?:#[a-z-]+|(?:/|~/|\./|\.\./)[^ ]*)$")
_STRONG_KEY_RX = re.compile(r"(?i)secret|token|credential")


_KV_TAIL_RX = re.compile(
    r"(?i)(?P<word>pass(?:word|wd|phrase)?|pwd|secret|token|key|auth|credentials?|salt|pat)(?![a-z])"
    r"[A-Za-z0-9_.-]{0,40}(?P<sep>"
    + _SEP
    + r")(?:"
    + _QUOTED
    # a value quoted with escaped quotes: JSON inside a string (\"x\"), JS inside a string (\\'x\\')
    + r"|\\{1,2}(?P<eq>[\"'])(?P<ev>[^\"'\\\r\n]{1,500})\\{1,2}(?P=eq)|(?P<uv>[^\s\"'`,;<>(){}\[\]]{1,500}))"
)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# Words that may be glued in front of a weak key word without a separator (apikey, accesskey).
_GLUE_PREFIXES = (
    "api", "access", "private", "client", "app", "account", "encryption", "signing", "master", "secret",
    "session", "license", "auth", "oauth", "bearer", "refresh", "id", "db", "user", "admin", "root",
    "ssh", "ftp",
)  # fmt: skip
_STRONG_WORDS = ("pass", "pwd", "secret", "token", "credential")


def _key_word_starts(text: str, p: int, word: str) -> bool:
    """Is ``word`` at ``p`` the start of a word inside a key (not the tail of ``monkey``, ``compat``)?"""
    if p == 0 or not text[p - 1].isalpha():
        return True
    if text[p - 1].islower() and text[p].isupper():
        return True  # camelCase: apiKey, dbPassword
    if word.lower().startswith(_STRONG_WORDS):
        return True  # distinctive even when glued: dbpasswd, jwtsecret, authtoken
    return text[max(0, p - 12) : p].lower().endswith(_GLUE_PREFIXES)


def _find_kv_secrets(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    low = text[lo:hi].lower()
    done: set[int] = set()
    for kw in _SECRET_KEY_KEYWORDS:
        i = low.find(kw)
        while i >= 0:
            p = lo + i
            i = low.find(kw, i + 1)
            if not _key_word_starts(text, p, kw):
                continue  # "monkey", "compat": checked before the regex, most hits end here
            m = _KV_TAIL_RX.match(text, p)
            if m is None or m.end() in done:
                continue
            done.add(m.end())
            ks = p
            while ks > lo and p - ks < 40 and text[ks - 1] in _KEY_CHARS:
                ks -= 1
            if ks > 0 and text[ks - 1] == "/":
                continue  # a path segment ('/forgot-password' => "passwords#update"), not a key
            key = text[ks : m.start("sep")]
            group = next(g for g in ("qv", "sv", "bv", "ev", "uv") if m.group(g) is not None)
            if group == "uv" and m.end() < len(text) and text[m.end()] in "({[$":
                continue  # a call, an index or an interpolation, not a literal
            sep = m.group("sep")
            if sep.rstrip().endswith(",") and text[max(0, ks - 4) : ks].rstrip("\"' ").endswith((":", "[")):
                # ('KEY', 'value') is an argument list (define(), buildConfigField); in
                # "file": "a_secret.txt", "next" or ["a_secret", "b"] the "key" is itself a value
                continue
            if group == "bv" and " " in m.group(group):
                continue  # `kubectl get secret …`: a shell command substitution, not a literal
            code_style = group == "uv" and "=" in sep and " " in sep
            if _value_is_secret(key, m.group(group), not code_style, compared="==" in sep or "!=" in sep):
                yield m.span(group)
    rxs = [_XML_ELEM_RX] if "<" in low else []
    if "<add" in low:
        rxs.append(_DOTNET_ADD_RX)
    if "passw" in low or "passphrase" in low:
        rxs.append(_WS_PASSWORD_RX)
    for rx in rxs:
        for m in rx.finditer(text, lo, hi):
            key = m.group("key")
            if _SECRET_KEY_RX.search(key) and _value_is_secret(key, m.group("qv"), True):
                yield m.span("qv")
    if "pass" in low and " is" in low:
        for m in _PROSE_PASSWORD_RX.finditer(text, lo, hi):
            group = "qv" if m.group("qv") is not None else "sv"
            if not _is_placeholder(m.group(group)):
                yield m.span(group)


# Terraform: the secret's name is the variable's, the literal is its default.
_TF_VARIABLE_RX = re.compile(
    r"variable \"(?P<key>[^\"\n]{1,100})\"[ \t]*\{[^{}]{0,400}?"
    r"\bdefault[ \t]*=[ \t]*\"(?P<qv>[^\"\n]{1,500})\""
)


def _find_tf_variable_defaults(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    for m in _TF_VARIABLE_RX.finditer(text, lo, hi):
        key = m.group("key")
        if _SECRET_KEY_RX.search(key) and _value_is_secret(key, m.group("qv"), True):
            yield m.span("qv")


_SECRET_KEY_KEYWORDS = (
    "pass", "pwd", "secret", "token", "key", "auth", "credential", "salt", "pat",
)  # fmt: skip

_RULES: list[_Rule] = [
    *_PROVIDER_RULES,
    _Rule("private_key", ("private key", "private-lines", "private-mac"), _find_private_keys, multiline=True),
    _Rule(
        "aws_secret_access_key",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        _find_aws_secret_near_id,
        multiline=True,
    ),
    _Rule("url_password", ("://",), _find_url_passwords),
    _Rule("authorization_header", ("authorization",), _group_finder(_AUTH_HEADER_RX.pattern, 0, 1)),
    _Rule("bearer_token", ("bearer",), _group_finder(_BEARER_RX.pattern, 0, 1)),
    _Rule("cookie", ("cookie",), _find_cookie_values),
    _Rule("cli_password", ("-u", "--user"), _find_cli_passwords),
    _Rule("config_secret", _SECRET_KEY_KEYWORDS, _find_kv_secrets),
    _Rule("terraform_variable_default", ('variable "',), _find_tf_variable_defaults, multiline=True),
]


def _build_automaton(words: Iterable[str]) -> Any:
    if _ahocorasick is None:
        return None
    automaton = _ahocorasick.Automaton()
    for w in set(words):
        automaton.add_word(w, w)
    automaton.make_automaton()
    return automaton


def _is_case_insensitive(kw: str) -> bool:
    return kw.islower() or not any(c.isalpha() for c in kw)


_AUTOMATA: list[Any] = []  # [lower-case keywords, case-sensitive keywords], built on first use
_EXTRA_KEYWORDS: set[str] = set()


def index_keywords(words: Iterable[str]) -> None:
    """Index ``words`` too in every :class:`LineIndex` (same pass as the rules' keywords).

    For the entity recognizers, which share the index: a keyword they test on every text costs
    nothing extra here, instead of one scan of the text each.
    """
    new = set(words) - _EXTRA_KEYWORDS
    if new:
        _EXTRA_KEYWORDS.update(new)
        _AUTOMATA.clear()


def _all_keywords() -> list[str]:
    return [kw for rule in _RULES for kw in rule.keywords] + sorted(_EXTRA_KEYWORDS)


class LineIndex:
    """Which lines of a text hold each rule keyword, computed once per text.

    With ``pyahocorasick`` installed every keyword is found in one pass (Aho-Corasick); without it,
    one ``str.find`` scan per keyword (about 1 ms per keyword per MB) gives the same answer.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        low = text.lower()
        # str.lower() can change lengths for a few non-ASCII characters; then offsets would drift.
        self.low = low if len(low) == len(text) else None
        self._cache: dict[str, list[tuple[int, int]]] = {}
        if _ahocorasick is not None and self.low is not None:
            self._index_all()

    def _index_all(self) -> None:
        if not _AUTOMATA:
            # One automaton over the lower-cased text; case-sensitive keywords are re-checked below.
            _AUTOMATA.append(_build_automaton(kw.lower() for kw in _all_keywords()))
            _AUTOMATA.append({kw.lower(): kw for kw in _all_keywords() if not _is_case_insensitive(kw)})
        automaton, exact = _AUTOMATA
        text = self.text
        hits: dict[str, list[tuple[int, int]]] = {}
        last: dict[str, int] = {}
        for end, low_kw in automaton.iter(self.low):
            kw = low_kw
            if low_kw in exact:
                kw = exact[low_kw]
                if not text.startswith(kw, end - len(kw) + 1):
                    continue
            if last.get(kw, -1) >= end:
                continue  # already inside a line recorded for this keyword
            lo = text.rfind("\n", 0, end) + 1
            hi = text.find("\n", end)
            hi = len(text) if hi < 0 else hi
            hits.setdefault(kw, []).append((lo, hi))
            last[kw] = hi
        for kw in _all_keywords():
            self._cache[kw] = hits.get(kw, [])

    def lines(self, kw: str) -> list[tuple[int, int]]:
        """The (start, end) of every line holding ``kw`` (case-insensitively when ``kw`` is lower-case)."""
        if kw in self._cache:
            return self._cache[kw]
        text = self.text
        if _is_case_insensitive(kw):
            hay = self.low
            if hay is None:
                hit = kw in text.lower()
                self._cache[kw] = [(0, len(text))] if hit else []
                return self._cache[kw]
        else:
            hay = text
        out: list[tuple[int, int]] = []
        i = hay.find(kw)
        while i >= 0:
            lo = text.rfind("\n", 0, i) + 1
            hi = text.find("\n", i)
            hi = len(text) if hi < 0 else hi
            out.append((lo, hi))
            i = hay.find(kw, hi)
        self._cache[kw] = out
        return out

    def ranges(self, keywords: tuple[str, ...]) -> list[tuple[int, int]]:
        """Merged line ranges holding any of ``keywords``, sorted."""
        found = [self.lines(kw) for kw in keywords]
        if not any(found):
            return []
        spans = sorted({r for lines in found for r in lines})
        merged: list[tuple[int, int]] = []
        for lo, hi in spans:
            if merged and lo <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
            else:
                merged.append((lo, hi))
        return merged


def find_secrets(text: str, index: LineIndex | None = None) -> list[SecretFinding]:
    """Every secret span in ``text``, merged where rules overlap, sorted by position.

    ``index`` lets a caller that scans the same text again (the anonymizer) share the keyword index.
    """
    if not text:
        return []
    index = index or LineIndex(text)
    raw: list[SecretFinding] = []
    for rule in _RULES:
        ranges = index.ranges(rule.keywords)
        if not ranges:
            continue
        if rule.multiline:
            ranges = [(0, len(text))]
        for lo, hi in ranges:
            raw.extend(SecretFinding(rule.kind, s, e) for s, e in rule.find(text, lo, hi) if e > s)
    return _merge(raw)


def _merge(findings: list[SecretFinding]) -> list[SecretFinding]:
    """Overlapping spans become one; the longest original span names the kind."""
    findings.sort(key=lambda f: (f.start, -(f.end - f.start)))
    merged: list[SecretFinding] = []
    for f in findings:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            if f.end > last.end:
                merged[-1] = SecretFinding(last.kind, last.start, f.end)
            continue
        merged.append(f)
    return merged


def redact_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """Replace each (sorted, non-overlapping) span of ``text`` with ``[REDACTED_SECRET]``."""
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.append(text[pos:start])
        out.append(REDACTED)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def scrub(text: str) -> ScrubResult:
    """Remove every secret from ``text``; findings carry kinds and input offsets, never values."""
    findings = find_secrets(text)
    if not findings:
        return ScrubResult(text, [])
    return ScrubResult(redact_spans(text, ((f.start, f.end) for f in findings)), findings)
