"""Secret scrubber: finds credentials in text and replaces them, irreversibly, with ``[REDACTED_SECRET]``.

Secrets are never stored, never mapped to placeholders and never restored; this module only finds
and cuts them. Three kinds of rules, all applied to every text:

* provider token formats, generated from gitleaks' maintained rule set
  (:mod:`devops_agent.secrets.gitleaks_rules`, data written by ``scripts/gen_secret_rules.py``),
  applied with gitleaks' semantics (secret group, entropy threshold, allowlists);
* structural rules that name no provider: token *shapes* (:mod:`devops_agent.secrets.shapes`:
  a prefix and a random body, bare random runs, JWTs, webhook URLs), ``key = value`` lines whose key
  names a secret (config files, env, JSON, XML, CLI flags, ``Authorization`` headers, cookies,
  passwords in URLs), a random-looking value right after a secret word ("client secret 9fJ2…",
  "the api key is …"), a password written in prose ("the password is Hunter2!x"), PEM and PuTTY
  private keys;
* file, log and command-line formats (:mod:`devops_agent.secrets.rules`: ``~/.pgpass``,
  password hashes, ``mysql -p…``, Redis ``requirepass``/ACL/``AUTH``, SMTP ``AUTH``, Jenkins' first
  admin password, ...).

Every token rule (context, generated provider format, shape) skips documentation dummies (``xxxx``,
``EXAMPLE``, ``abcdef…``, a repeated unit: see :mod:`devops_agent.secrets.values`): a generated
token never holds one, so the test costs no real token (measured on the benchmark's held-back half)
and leaves the examples docs are full of; values gitleaks' allowlists name as public (the Firebase
SDK's test keys) are left whatever rule found them. Passwords are exempt: people put words in them.

Speed matters (every tool output passes through here), so each context or format rule carries
literal *keywords* and runs only on the lines holding one (:mod:`devops_agent.secrets.keyword_index`:
one pass for all keywords); the shape rules make one regex scan of the text. No regex has nested
unbounded quantifiers. Entropy is used only inside a narrow context or with a shape; on ordinary text
it flags nearly everything. Files that are key material by name: :mod:`devops_agent.secrets.files`
(re-exported here). This module imports only the modules of this package named here; it must never
log or return the secret values themselves.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from devops_agent.secrets.files import SECRET_FILE_NAMES, is_secret_file
from devops_agent.secrets.gitleaks_rules import (
    claimed_but_malformed,
    generated_rules,
    global_allowlist,
    known_public_value,
)
from devops_agent.secrets.keyword_index import LineIndex, index_keywords
from devops_agent.secrets.rules import TOKEN_RULES
from devops_agent.secrets.shapes import find_hook_urls, find_jwts, find_prefixed_tokens, random_body
from devops_agent.secrets.values import MASK_TAIL as _MASK_TAIL
from devops_agent.secrets.values import is_code_reference as _is_code_reference
from devops_agent.secrets.values import is_dummy as _is_dummy
from devops_agent.secrets.values import is_expression as _is_expression
from devops_agent.secrets.values import is_placeholder as _is_placeholder
from devops_agent.secrets.values import is_wordy as _is_wordy
from devops_agent.secrets.values import looks_random as _looks_random
from devops_agent.secrets.values import one_scan_per_call as _one_scan_per_call

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
    provider: bool = False  # names one provider's format (off in find_secrets(provider_rules=False))
    skip_dummies: bool = False  # drop documentation values here (other rules test them themselves)


def is_documentation_value(value: str) -> bool:
    """Whether ``value`` reads as typed by hand for documentation (``ghp_xxxx…``, ``AKIA…EXAMPLE``,
    ``a1b2c3…``, ``1234-1234``): the test the context rules apply before redacting a token."""
    return _is_dummy(value)


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
    provider: bool = False,
) -> _Rule:
    return _Rule(kind, tuple(keywords), _group_finder(pattern, flags, group), multiline, provider)


# Provider token formats and fixed file/log formats (data only: see :mod:`.rules`), then the
# command-line flag rule, which needs this module's value tests.
_PROVIDER_RULES: list[_Rule] = [
    *(
        _token(r.kind, r.keywords, r.pattern, r.flags, r.group, multiline=r.multiline, provider=r.provider)
        for r in TOKEN_RULES
    ),
    _Rule(
        "cli_password_flag", ("pass", "token", "secret", "key"), lambda t, lo, hi: _find_cli_flags(t, lo, hi)
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
# A name/value pair in one XML element: .NET appSettings (<add key=… value=…>), Spring and Ant
# properties, Maven and Ivy settings (<property name=… value=…>), JMeter and Jenkins configs.
_XML_NAME_VALUE_RX = re.compile(
    r"<[A-Za-z][\w:.-]{0,40}\s(?:[^<>\n]{0,200}?\s)?(?:name|key)=\"(?P<key>[^\"]{1,100})\"\s"
    r"(?:[^<>\n]{0,200}?\s)?value=\"(?P<qv>[^\"]{1,500})\""
)
_PROSE_PASSWORD_RX = re.compile(
    r"(?i)\bpass(?:word|phrase)\b[^.\n]{0,40}?\bis:?\s+(?:\"(?P<qv>[^\"\n]{3,64})\"|'(?P<sv>[^'\n]{3,64})')"
)
# A password in a table or a list laid out for reading: a few words naming it, then a wide gap or a
# leader ("----", "....", "->") and one value ending the line ("LDAP password  ----  <value>",
# "Admin password .......... <value>"). Only a value that reads as a password is taken
# (_prose_password): in such layouts the word after the gap is as often a status ("expired").
_LEADER_PASSWORD_RX = re.compile(
    r"(?im)^[ \t]*(?:[A-Za-z][\w.-]{0,30}[ \t]){0,3}[ \t]*(?:pass(?:word|wd|phrase)|pwd)"
    r"(?:[ \t]{2,}(?:(?:-{2,}|\.{2,}|_{2,}|->|=>)[ \t]+)?|[ \t]+(?:-{2,}|\.{2,}|_{2,}|->|=>)[ \t]+)"
    r"(?P<v>[^\s\"'`$%<{(\[-][^\s]{2,199})[ \t]*$"
)
_LEADER_GAP_RX = re.compile(r"  |\.\.|--|__|->|=>")  # cheap test first: most lines have no gap
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
_CODE_START_RX = re.compile(r"^:")  # unquoted only (a YAML symbol); quoted, ":9URM*n5…" is a literal


def _value_is_secret(key: str, value: str, quoted: bool, *, compared: bool = False) -> bool:
    """Is ``value`` (assigned to, or with ``compared`` tested against, ``key``) a literal secret?"""
    # Cheap structural rejections first: this runs on every secret-named key in every tool output.
    if not value or value != value.strip() or _is_meta_key(key):
        return False
    low_key = key.lower()
    if "csrf" in low_key or "xsrf" in low_key or "authenticity" in low_key or "verificationtoken" in low_key:
        return False  # anti-forgery tokens (forms too) are per session and useless without its cookie
    inner = value.strip("\"'")  # DATABASE_PASSWORD="'$VAR'" quotes the interpolation twice
    if _is_placeholder(value) or (inner != value and _is_placeholder(inner)) or _is_expression(inner):
        return False  # placeholders, concatenations, variable interpolation, ARNs, versions
    if "public" in low_key or (not quoted and _CODE_START_RX.search(value)):
        return False
    if value.lower() == key.lower():
        return False
    if not quoted and (_is_code_reference(value) or value.startswith(("~", "http://", "https://"))):
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
_KEY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
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
            if m is None:
                if kw in _SPACED_WORDS:
                    yield from _spaced_value(text, p + len(kw))
                continue
            if m.end() in done:
                continue
            done.add(m.end())
            ks = max(lo, p - 40)  # the key starts after the last non-key character (40 at most)
            ks += len(text[ks:p].rstrip(_KEY_CHARS))
            if ks > 0 and text[ks - 1] == "/":
                continue  # a path segment ('/forgot-password' => "passwords#update"), not a key
            key = text[ks : m.start("sep")]
            group = m.lastgroup or ""  # the value's group ends each branch: qv, sv, bv, ev or uv
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
    if "value=" in low:
        rxs.append(_XML_NAME_VALUE_RX)
    if "passw" in low or "passphrase" in low:
        rxs.append(_WS_PASSWORD_RX)
    for rx in rxs:
        for m in rx.finditer(text, lo, hi):
            key = m.group("key")
            if _SECRET_KEY_RX.search(key) and _value_is_secret(key, m.group("qv"), True):
                yield m.span("qv")
    if ("pass" in low or "pwd" in low) and _LEADER_GAP_RX.search(low):
        for m in _LEADER_PASSWORD_RX.finditer(text, lo, hi):
            if _prose_password(m.group("v")):
                yield m.span("v")
    if "pass" in low and " is" in low:
        for m in _PROSE_PASSWORD_RX.finditer(text, lo, hi):
            group = "qv" if m.group("qv") is not None else "sv"
            if not _is_placeholder(m.group(group)):
                yield m.span(group)


# Redis ACL rules: "user alice on >pw ~* +@all" (aclfile, ACL LIST) and "ACL SETUSER alice >pw".
# ">" adds a password, "#" its SHA-256; a rule may add several.
_REDIS_ACL_LINE_RX = re.compile(r"(?im)^[ \t]*(?:user|acl[ \t]+setuser)[ \t]+\S+[ \t][^\n]{0,2000}")
_REDIS_ACL_RULE_RX = re.compile(r"(?<=[ \t])(?:>([^\s]{1,200})|#([a-f0-9]{64})(?![^\s]))")
_REDIS_ACL_WORD_RX = re.compile(
    r"(?i)[ \t](?:on|off|nopass|resetpass|allkeys|allcommands|~\S*|[+-]@\S+)(?=[ \t]|$)"
)


# Keywords (scanned in every text, so neither "user" nor a bare "~"): ACL SETUSER, a password right
# after "on", or what a rule line also holds ("nopass", "allkeys", "+@category").
_REDIS_ACL_KEYWORDS = ("setuser", "on >", "on #", "nopass", "resetpass", "allkeys", "allcommands", "+@")


def _find_redis_acl_passwords(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    for line in _REDIS_ACL_LINE_RX.finditer(text, lo, hi):
        rule = line.group()
        if not rule.lstrip().lower().startswith("acl") and not _REDIS_ACL_WORD_RX.search(rule):
            continue  # "user" at the start of some other line, not an ACL rule
        for m in _REDIS_ACL_RULE_RX.finditer(rule):
            g = 1 if m.group(1) is not None else 2
            if not _is_placeholder(m.group(g)):
                yield line.start() + m.start(g), line.start() + m.end(g)


# --- passwords written in prose, Redis AUTH ---------------------------------------------------------

# "the password is Hunter2!x", "root password is: S3cr3t-Pa55", "password for user deploy: Adm1n!24",
# "using password Sup3rS3cretPw!". Only the word right after the verb or separator is read, and
# only a value that reads as a password is taken (see _prose_password): in logs and docs the word
# there is far more often English ("the password is incorrect", "password for bob has expired").
_PROSE_VALUE_RX = re.compile(
    r"(?i)\b(?:pass(?:word|wd|phrase)|pwd)"
    r"(?P<for>[ \t]+for[ \t]+(?:the[ \t]+)?(?:user[ \t]+)?[^\s:]{1,64}(?:[ \t]+(?:user|account))?)?"
    r"(?P<verb>[ \t]+(?:is|was)(?![^\s:]))?(?P<sep>[ \t]*[:=])?[ \t]*(?<=[\s:=])"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\s\"'`]{1,200})(?P=q)|(?P<v>[^\s\"'`$%<{(\[*_#=-][^\s]{0,199})(?!\S))"
)
# Without "is", "was", ":" or "=" the value must follow "using/with password" ("Failed password for
# invalid user admin", "passwd deploy01" are sshd and a command, not a password).
_PROSE_LEAD_RX = re.compile(r"(?i)\b(?:use|using|with)[ \t]+(?:the[ \t]+)?$")
# Plain words and numbers joined by "-", ".", "_" or "/", one of them a lower-case word:
# "auto-generated", "base64-encoded", "8-char", "user/pass" are wording ("Winter-2024" is not).
_WORD_COMPOUND_RX = re.compile(r"(?:[A-Za-z]+[0-9]*|[0-9]+)(?:[-._/](?:[A-Za-z]+[0-9]*|[0-9]+))+")
_LOWER_PART_RX = re.compile(r"(?:^|[-._/])[a-z]{3,}(?:[-._/]|$)")
_PARTICIPLE_RX = re.compile(r"[ \t]+[a-z]{2,}ed\b")  # "the password is base64 encoded / sha256 hashed"
# A short word with a number appended names an algorithm or encoding (sha256, Base64, AES256, utf8),
# a longer one is a weak password (hunter2, Summer2024, admin123).
_SHORT_WORD_NUMBER_RX = re.compile(r"[A-Za-z]{1,4}[0-9]+")


def _prose_password(value: str, *, quoted: bool = False) -> bool:
    """Does a word that prose names as a password read as one, not as English?

    At least 6 characters with a letter and a digit or symbol (``Hunter2!x``, ``mypassw0rd``), or
    letters only when long and random (20+, mixed case, high entropy). Left: dictionary-like words
    (``incorrect``, ``hunter``), digits alone (PINs, "8 characters"), word compounds (see
    ``_WORD_COMPOUND_RX``), algorithm names (``sha256``, ``Base64``: up to 4 letters and a number),
    calls (``sha256(pw)``), identifiers (``_is_wordy``) and whatever :func:`_value_is_secret` rejects
    for a password key (placeholders, ``$VAR``, paths, URLs, ``changeme``). Unlike a configured
    password, documentation values (``_is_dummy``: ``Example123``, ``qwerty1``) are left too: in prose
    only the word's shape says it is a password, and runbooks and docs are where such words are.
    """
    if len(value) < 6 or not any(c.isalpha() for c in value):
        return False
    if not _value_is_secret("password", value, quoted) or _is_dummy(value) or _is_wordy(value):
        return False
    if value.isalpha():
        return _looks_random(value, 20)
    if "(" in value or _SHORT_WORD_NUMBER_RX.fullmatch(value):
        return False  # a call (sha256(salt+pw)) or an algorithm's name
    return not (_WORD_COMPOUND_RX.fullmatch(value) and _LOWER_PART_RX.search(value))


_PROSE_TRAIL = ".,;:)]}>\"'"


def _prose_matches(text: str, lo: int, hi: int) -> Iterable[re.Match[str]]:
    low = text[lo:hi].lower()
    for kw in ("pass", "pwd"):  # tried only where the word is: most lines hold no match
        i = low.find(kw)
        while i >= 0:
            m = _PROSE_VALUE_RX.match(text, lo + i, hi)
            i = low.find(kw, i + 1)
            if m is not None:
                yield m


def _find_prose_passwords(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    for m in _prose_matches(text, lo, hi):
        if m.group("verb") is None:
            if m.group("sep") is not None and m.group("for") is None:
                continue  # "password: x", "password = x": a config line, _find_kv_secrets' job
            if (
                m.group("sep") is None
                and _PROSE_LEAD_RX.search(text, max(lo, m.start() - 12), m.start()) is None
            ):
                continue
        if m.group("qv") is not None:
            if _prose_password(m.group("qv"), quoted=True):
                yield m.span("qv")
            continue
        start, value = m.start("v"), m.group("v").rstrip(_PROSE_TRAIL)  # a sentence's "." is no part
        core = value.rstrip("!?")  # "the password is wrong!"; kept in the span when it is a password
        if _prose_password(core) and not _PARTICIPLE_RX.match(text, m.end()):
            yield start, start + len(value)


# Redis AUTH typed at a prompt or given to redis-cli: "AUTH pw", with Redis 6 ACLs "AUTH user pw".
# Only a line holding the command alone is one ("AUTH failed for 10.0.0.1" is a log line). After a
# redis prompt (127.0.0.1:6379>, redis>) or redis-cli any literal is the password, as with
# ``redis-cli -a``; at a bare line start or after "> " it must also read as one ("AUTH failed").
# SMTP's "AUTH <mechanism> …" is left to the sasl_credentials token rule.
_AUTH_CMD_RX = re.compile(
    r"(?m)(?<![^ \t>\n])AUTH[ \t]+(?P<qa>[\"']?)(?P<a>[^\s\"']{1,200})(?P=qa)"
    r"(?:[ \t]+(?P<qb>[\"']?)(?P<b>[^\s\"']{1,200})(?P=qb))?[ \t]*(?:$|(?=&&|\|\||;))"
)
_REDIS_PROMPT_RX = re.compile(r"[ \t]*(?:redis[ \t]+)?(?:redis|[\w.-]{1,253}:\d{1,5}(?:\[\d{1,2}\])?)>[ \t]+")
_SASL_MECHANISMS = frozenset(
    {"PLAIN", "LOGIN", "CRAM-MD5", "DIGEST-MD5", "XOAUTH2", "OAUTHBEARER", "GSSAPI", "NTLM", "EXTERNAL",
     "ANONYMOUS", "SCRAM-SHA-1", "SCRAM-SHA-256"}
)  # fmt: skip


def _find_auth_commands(text: str, lo: int, hi: int) -> Iterable[tuple[int, int]]:
    for m in _AUTH_CMD_RX.finditer(text, lo, hi):
        if m.group("a").upper() in _SASL_MECHANISMS:
            continue
        prefix = text[text.rfind("\n", 0, m.start()) + 1 : m.start()]
        cli = prefix.rfind("redis-cli")
        strong = _REDIS_PROMPT_RX.fullmatch(prefix) is not None or (
            cli >= 0 and not any(c in prefix[cli:] for c in "|;&")
        )
        if not strong and prefix.strip() not in ("", ">"):
            continue
        group = "a" if m.group("b") is None else "b"
        pw = m.group(group)
        if (
            (len(pw) >= 3 and pw[0] not in "$<[{-" and _cli_value_ok(pw, token=False))
            if strong
            else _prose_password(pw)
        ):
            yield m.span(group)


# "<secret word> <token>" without a separator ("client secret 9fJ2…", "token Zq8xK2…"): prose and
# log lines, found where the config-line scan finds no separator after the word. Only a value no
# person would type is taken: 20+ characters of letters, digits, "+/_" (no "-" or ".": names of
# Kubernetes secrets and files have them) with upper, lower and digits, or 32+ hex digits.
_SPACED_WORDS = ("secret", "token", "key")
_SPACED_VALUE_RX = re.compile(
    r"[ \t]{1,4}(?:(?:is|was)[ \t]{1,4})?"  # "the api key is 9f2c…"
    r"([A-Za-z0-9+/_]{20,200}={0,2}|(?P<grouped>[A-Za-z0-9]+(?:[.-][A-Za-z0-9]+){1,7}))(?![A-Za-z0-9+/_=.-])"
)
_HEX_TOKEN_RX = re.compile(r"[0-9a-f]{32,}")


def _spaced_value(text: str, end: int) -> Iterable[tuple[int, int]]:
    """The token after the secret word ending at ``end``, if one follows a blank."""
    m = _SPACED_VALUE_RX.match(text, end)
    if m is None:
        return
    space = text.rfind(" ", max(0, end - 80), end)  # bounded: a long line without blanks is common
    before = text[
        max(0, (space if space >= 0 else end - 80) - 5) : end
    ].lower()  # the word and the one before
    if "csrf" in before or "xsrf" in before:
        return  # anti-forgery tokens are per session and useless without their cookie
    value = m.group(1)
    mixed = all(any(f(c) for c in value) for f in (str.islower, str.isupper, str.isdigit))
    if m.group("grouped") is not None:
        # "client secret 7Hq2-vLx9-Pm4K-r8Zt": groups of random characters, both cases (a name of a
        # Kubernetes secret or a file, "my-app-token-7k2px9", is lower-case words and a hash)
        if mixed and random_body(value.replace("-", "").replace(".", ""), 16) and not _is_dummy(value):
            yield m.span(1)
        return
    hex_token = _HEX_TOKEN_RX.fullmatch(value) is not None and not value.isdigit()
    if (mixed or hex_token) and _looks_random(value, 20) and not _is_dummy(value):
        yield m.span(1)


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


def _generated(rule: Any) -> _Rule:
    allow = global_allowlist()
    find: Finder = lambda t, lo, hi: rule.find(t, lo, hi, allow)  # noqa: E731 - one line, one use
    return _Rule(rule.kind, rule.keywords, find, provider=True, skip_dummies=True)


_RULES: list[_Rule] = [
    *_PROVIDER_RULES,
    *(_generated(r) for r in generated_rules()),
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
    _Rule("redis_password", _REDIS_ACL_KEYWORDS, _find_redis_acl_passwords),
    _Rule("redis_password", ("AUTH",), _find_auth_commands),
    _Rule("prose_password", ("pass", "pwd"), _find_prose_passwords),
    _Rule("terraform_variable_default", ('variable "',), _find_tf_variable_defaults, multiline=True),
    # Shapes last: where one finds the same span as a rule above, that rule's kind names it.
    # A JWT's header is base64 of "{" and a quote ("eyJ") or of "{" and a newline ("ewog", "ewoi").
    _Rule("jwt", ("eyj", "ewog", "ewoi", "ewoj"), find_jwts),
    _Rule("webhook_url", ("hook",), find_hook_urls),
]
index_keywords(kw for rule in _RULES for kw in rule.keywords)

__all__ = [  # LineIndex and index_keywords are re-exported: the recognizers import them from here
    "REDACTED", "SECRET_FILE_NAMES", "LineIndex", "ScrubResult", "SecretFinding", "find_secrets",
    "index_keywords", "is_documentation_value", "is_secret_file", "redact_spans", "scrub",
]  # fmt: skip


@_one_scan_per_call  # a value found by several rules or in several places is tested once
def find_secrets(
    text: str, index: LineIndex | None = None, *, secret_file: bool = False, provider_rules: bool = True
) -> list[SecretFinding]:
    """Every secret span in ``text``, merged where rules overlap, sorted by position.

    ``index`` lets a caller that scans the same text again (the anonymizer) share the keyword index.
    With ``secret_file`` (the text comes from a file :func:`is_secret_file` names) the text is
    secret even where no rule says so: when the rules find nothing in it (a bare master key, a
    base64 line of a key without its armour), all of it, from its first to its last non-blank
    character, is one finding. ``provider_rules=False`` switches off every rule that names a
    provider (generated and hand), leaving shapes, contexts and formats: what a provider no rule
    names would get (the benchmark's measure; the agent never passes it).
    """
    if not text:
        return []
    index = index or LineIndex(text)
    raw: list[SecretFinding] = []
    no_keyword = index.holds_no_keyword
    for rule in _RULES:
        if rule.provider and not provider_rules:
            continue
        ranges = [] if no_keyword else index.ranges(rule.keywords)
        if not ranges:
            continue
        if rule.multiline:
            ranges = [(0, len(text))]
        spans = [span for lo, hi in ranges for span in rule.find(text, lo, hi)]  # one list per rule
        if rule.skip_dummies:
            spans = [(s, e) for s, e in spans if not _is_dummy(text[s:e])]
        raw.extend(SecretFinding(rule.kind, s, e) for s, e in spans if e > s)
    # Token shapes last, over the whole text: a run inside a span already found needs no shape test
    # (the union is the same), which spares most of the work on secret-dense text.
    found = _merge(list(raw))
    starts = [f.start for f in found]

    def covered(start: int, end: int) -> bool:
        i = bisect.bisect_right(starts, start) - 1
        return i >= 0 and found[i].end >= end

    # A shape whose prefix a provider's format claims defers to that format when provider rules run
    # (see claimed_but_malformed); without them (a provider no rule names) the shape decides alone.
    raw.extend(
        SecretFinding("prefixed_token", s, e)
        for s, e in find_prefixed_tokens(text, 0, len(text), covered)
        if not _is_dummy(text[s:e]) and not (provider_rules and claimed_but_malformed(text[s:e]))
    )
    if secret_file and not raw and text.strip():
        start = len(text) - len(text.lstrip())
        return [SecretFinding("secret_file", start, len(text.rstrip()))]
    return [f for f in _merge(raw) if not known_public_value(text[f.start : f.end])]


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


def scrub(text: str, *, secret_file: bool = False) -> ScrubResult:
    """Remove every secret from ``text``; findings carry kinds and input offsets, never values.
    ``secret_file``: see :func:`find_secrets`."""
    findings = find_secrets(text, secret_file=secret_file)
    if not findings:
        return ScrubResult(text, [])
    return ScrubResult(redact_spans(text, ((f.start, f.end) for f in findings)), findings)
