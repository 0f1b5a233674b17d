"""Entity recognizers: compiled patterns that find identifying data in logs, tickets and tool output.

Each recognizer yields :class:`Candidate` spans (type, start, end, priority); the anonymizer
resolves overlaps and replaces them. Types: ``EMAIL``, ``HOST``, ``IP``, ``PHONE``, ``JIRA_KEY``,
``K8S_NAMESPACE``, ``K8S_POD``, ``AWS_ACCOUNT``, ``GCP_PROJECT``, ``AZURE_SUBSCRIPTION``,
``CREDIT_CARD``, ``IBAN``, ``US_SSN``, ``USERNAME``, ``ADDRESS`` (postal addresses), ``AGE``,
``DATE`` (dates of birth; every date with ``mask_dates``; these three from :mod:`.prose`),
``BUCKET`` (S3 / GCS bucket names) and
``PUBLIC_KEY`` (SSH public keys and age recipients: public, but each names one person's key, and
services such as code forges publish them per account). ``LOCATION`` (countries, US states, cued cities) comes
from :mod:`.places` when its optional gazetteer is installed, ``NATIONALITY`` (``the Spanish
government``) from its hand list; ``ORG``, cued ``PERSON`` and the ``TITLE`` before it (``Mr.``)
from :func:`devops_agent.privacy.names.cue_names`. URLs keep their shape: only the host (and a
user name in the userinfo) is an entity, the scheme, port, path and query stay readable.

Everything here is offline: host names are judged by the Public Suffix List inside the installed
``publicsuffixlist`` package (never fetched; see the comment above ``_PRIVATE_SUFFIXES``), and
every pattern is case-sensitive unless it says otherwise (a Jira-key pattern that ignores case
matches ``ip-10``). This module must not import from ``cli/`` or ``agent/`` and must not log
matched values.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from typing import NamedTuple

from devops_agent.analysis.tokenclass import SPECIAL_USE_SUFFIXES, public_suffix, top_level_domains
from devops_agent.privacy.prose import find_prose
from devops_agent.secrets.scrubber import LineIndex, index_keywords


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Host names end in a public suffix of the Public Suffix List (as the log miner reads them,
# :mod:`devops_agent.analysis.tokenclass`: maintained data, not a hand list of TLDs), a special-use
# name (RFC 6761: ``test``, ``example``, ``local`` …) or one of these private names in wide use that
# neither registry holds: glibc's default ``localdomain`` and Kubernetes' service DNS
# (``<service>.<namespace>.svc``). Most generic TLDs are words code uses as names (``.name``,
# ``.info``, ``.network``, ``.java``), so a bare dotted token (not in a URL or an e-mail address)
# ending in one is a host only when it reads as one: three labels or more with a digit or a hyphen
# in one (``db1.prod.acme.dev``, ``ip-10-0-0-1.acme.cloud``), or a host's context: a path or a port
# after it (``europe-docker.pkg.dev/proj/img``, ``(db.acme.dev:5432)``; not ``Method.java:42``, a
# class's file and line) or a host key before it (``rhost=``, ``"host": "``, ``--host``). Country
# codes, the original generic TLDs of RFC 1591 and special-use names need none. Two-letter ccTLDs
# that are also common file extensions (py, sh, md, ...) count only with three or more labels.
_PRIVATE_SUFFIXES = frozenset(("localdomain", "svc"))
_ORIGINAL_GTLDS = frozenset(("com", "edu", "gov", "int", "mil", "net", "org"))
_HOST_AFTER_RX = re.compile(r"/|:\d{1,5}(?!\d)")
_CLASS_FILE_RX = re.compile(r"[A-Z][A-Za-z0-9_$]*\.[a-z]+")  # Method.java, Application.kt
# "rhost=", "Host:  ", "\"host\": \"", "host = '", "--host " as logs, configs and commands write a host key
_HOST_KEY_BEFORE_RX = re.compile(
    r"(?i:(?:host(?:name)?|server|domain|fqdn|addr(?:ess)?|endpoint)[\"']?[ \t]*[=:][ \t]*"
    r"|--host(?:name)?[= ])[\"']?$"
)
_FILE_EXT_TLDS = _words("py sh md rs pl so ps ms tf mk cc am ws to ly gg fm in it is me no do")

# Public service endpoints and documentation sites identify nobody and the model needs them to
# reason ("pull from ghcr.io failed", "# see https://nginx.org/en/docs/..." in a config); they stay
# readable unless ``keep_public_hosts=False``. Exact names only: a customer's own subdomain of a
# cloud provider (xyz.rds.amazonaws.com) or its own docs site (docs.acme.internal) is still masked.
PUBLIC_HOSTS = _words(
    # code hosting, registries and package indexes
    """github.com api.github.com raw.githubusercontent.com gist.github.com objects.githubusercontent.com
    gitlab.com bitbucket.org docker.io index.docker.io registry-1.docker.io hub.docker.com ghcr.io quay.io
    gcr.io registry.k8s.io registry.npmjs.org npmjs.com www.npmjs.com pypi.org files.pythonhosted.org
    rubygems.org crates.io proxy.golang.org pkg.go.dev repo.maven.apache.org repo1.maven.org
    registry.terraform.io artifacthub.io"""
    # cloud providers' public endpoints and documentation
    """ cloud.google.com docs.aws.amazon.com learn.microsoft.com docs.microsoft.com s3.amazonaws.com
    storage.googleapis.com"""
    # documentation of languages, frameworks and the tools the agent works with
    """ docs.python.org docs.djangoproject.com flask.palletsprojects.com nodejs.org developer.mozilla.org
    go.dev docs.rs doc.rust-lang.org docs.oracle.com kubernetes.io helm.sh docs.docker.com
    prometheus.io grafana.com docs.github.com docs.gitlab.com www.jenkins.io plugins.jenkins.io
    developer.hashicorp.com nginx.org docs.nginx.com httpd.apache.org www.postgresql.org redis.io
    docs.ansible.com www.rfc-editor.org datatracker.ietf.org"""
    # questions and answers, references
    """ stackoverflow.com serverfault.com superuser.com en.wikipedia.org"""
)

PLACEHOLDER_RX = re.compile(r"<<[A-Z][A-Z0-9_]*_[0-9a-f]{8}>>")


class Candidate(NamedTuple):
    """A possible entity: ``type``, span in the input, and ``priority`` for overlap resolution."""

    type: str
    start: int
    end: int
    priority: int


# Priorities: more specific wins when spans overlap.
PRIORITY = {
    "EMAIL": 90,
    "PUBLIC_KEY": 85,
    "BUCKET": 80,
    "AWS_ACCOUNT": 75,
    "GCP_PROJECT": 75,
    "AZURE_SUBSCRIPTION": 75,
    "US_SSN": 70,
    "ADDRESS": 58,
    "DATE": 52,
    "CREDIT_CARD": 68,
    "IBAN": 68,
    "IP": 60,
    "HOST": 55,
    "PHONE": 50,
    "K8S_POD": 45,
    "K8S_NAMESPACE": 35,
    "JIRA_KEY": 30,
    "AGE": 25,
    "USERNAME": 20,
    "PERSON": 18,  # a name after a title or "my name is" (the NER path adds more, below every pattern)
    "ORG": 17,  # a capitalised name ending in a company suffix (Inc., GmbH …) or after "I work for"
    "LOCATION": 16,  # a country or US state; a city with a cue (:mod:`.places`, optional gazetteer)
    "TITLE": 15,  # an honorific before a cued name (``Mr.``, ``Dr.``): it tells gender or profession
    "NATIONALITY": 14,  # a nationality adjective before a lower-case word (``the Spanish government``)
}

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_URL_RX = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.-]{1,15}://(?:(?P<userinfo>[^\s/@\"'<>]{1,256}(?:@[^\s/@\"'<>]{1,256}){0,4})@)?"
    r"(?P<host>\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253})"
)
_IPV4_RX = re.compile(
    r"(?<![0-9.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\.?\d)"
)
# Every IPv6 address has "::" or at least six colons (eight groups, or six and an IPv4 tail);
# times (10:11:12, 2026:10:11:12) have fewer, so they never reach the slower check below.
_V6_HINT_RX = re.compile(r"::|:(?:[0-9A-Fa-f]{1,4}:){5}")
_V6_CHARS = frozenset("0123456789abcdefABCDEF:.")
_JIRA_RX = re.compile(r"[A-Z](?<![A-Za-z0-9_./-][A-Z])[A-Z0-9_]{1,9}-[1-9]\d{0,6}(?![A-Za-z0-9_-]|\.\d)")
# A key in a Jira URL (``/browse/KEY``, ``?selectedIssue=KEY``), which _JIRA_RX skips as a path segment.
_JIRA_URL_RX = re.compile(
    r"(?:/browse/|[?&]selectedIssue=)([A-Z][A-Z0-9_]{1,9}-[1-9]\d{0,6})(?![A-Za-z0-9_-])"
)
# Uppercase prefixes that are standards, encodings or algorithms, not Jira projects.
_JIRA_STOP = _words(
    """UTF UCS ISO IEC SHA MD AES DES RSA ECDSA HS RS ES PS TLS SSL HTTP CP WIN KOI PKCS ECMA ANSI X86 AMD64
    ARM CVE CWE RFC GPT COVID CRC FIPS TLSV IPV EN BS DIN JIS GB LPDDR DDR USB PCI PCIE SATA NVME EC
    P SM BLAKE ARGON2 POLY CHACHA AVX SSE E2E K8S H P2P T1 T2 M1 M2 L1 L2 L3 ID VM PR MR"""
)
_PHONE_RX = re.compile(
    r"(?<![\w.+:/-])(?:\+\d{1,3}[ .-]?(?:\(0\)[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]\d{2,4}){1,4}|"
    r"\+\d{7,15}|\(\d{2,4}\)[ .-]?\d{3,4}[ .-]?\d{3,4}|"
    r"\d{2,4}(?P<s>[.-])\d{2,4}(?:(?P=s)\d{2,4}){1,3}|\d{2,4}(?: \d{2,4}){2,4}|0\d{2,4}[ -]\d{6,8}|"
    r"[02-9]\d{9})"
    r"(?:[ ]?(?:x|ext\.?)[ ]?\d{1,5})?(?![\w.:-]|\.\d)"
)
_DATE_LIKE_RX = re.compile(r"^(?:19|20)\d\d[.-]\d\d[.-]\d\d|^\d\d[.-]\d\d[.-](?:19|20)\d\d$")
_NUMERIC_RX = re.compile(r"(?<![\w.])[+(]?\d[\d ().-]{5,30}\d(?:[ ]?(?:x|ext\.?)[ ]?\d{1,5})?(?!\w)")
_TLD_RX = re.compile(r"\.[A-Za-z]{2,24}(?![A-Za-z0-9_-]|\.[A-Za-z0-9])")
_IPV4_TAIL_RX = re.compile(r"\.\d{1,3}\.\d{1,3}\.\d{1,3}(?!\d|\.\d)")
_HOST_BACK_RX = re.compile(r"[A-Za-z0-9.-]{1,253}")
_LOCAL_BACK_RX = re.compile(r"[A-Za-z0-9._%+-]{1,64}")
_LOCAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_NOT_BEFORE_HOST = frozenset("@/_%+\\")
_HOST_TAIL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_IPV4_FULL_RX = re.compile(r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)")
_HOSTNAME_FULL_RX = re.compile(r"(?:" + _LABEL + r"\.){1,10}[A-Za-z]{2,24}")
_CARD_RX = re.compile(r"(?<![\w.-])(?:\d{4}[ -]){3}\d{1,7}(?![\w-])|(?<![\w.-])\d{12,19}(?![\w.-])")
# Upper-case country code only: a case-insensitive start would try every letter of the text.
_IBAN_RX = re.compile(r"[A-Z][A-Z]\d\d(?: ?[A-Za-z0-9]{4}){2,7}(?: ?[A-Za-z0-9]{1,3})?(?![A-Za-z0-9])")
_SSN_RX = re.compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])")
_ARN_ACCOUNT_RX = re.compile(r"arn:aws[a-z-]*:[a-z0-9-]*:[a-z0-9-]*:(\d{12}):")
_AWS_ACCOUNT_CTX_RX = re.compile(
    r"(?i)account[_ -]?(?:id|number)?[\"']?\s{0,3}[:=]?\s{0,3}[\"']?(\d{12})(?!\d)"
)
_ECR_RX = re.compile(r"(?<!\d)(\d{12})\.dkr\.ecr\.")
_GCP_PROJECT_RX = re.compile(
    r"projects/([a-z][a-z0-9-]{4,28}[a-z0-9])(?![a-z0-9-])|(?i:project[_-]?id)[\"']?\s{0,3}[:=]\s{0,3}[\"']?([a-z][a-z0-9-]{4,28}[a-z0-9])(?![a-z0-9-])"
)
_GUID = r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}"
_AZURE_SUB_RX = re.compile(
    r"(?i)/subscriptions/(" + _GUID + r")|subscription[_ -]?id[\"']?\s{0,3}[:=]\s{0,3}[\"']?(" + _GUID + r")"
)
_USER_KV_RX = re.compile(
    r"(?i)(?:user(?:_?name)?|login|uid|owner|nick(?:name)?)(?![a-z])[A-Za-z0-9_.-]{0,20}?[\"']?"
    r"[ \t]{0,10}(?:=|:|=>)[ \t]{0,10}[\"']?([A-Za-z0-9][A-Za-z0-9._@\\-]{1,63})"
)
_USER_XML_RX = re.compile(r"(?i)<(?:user|username|login)>([^<\s]{2,64})</")
_USER_KEYWORDS = ("user", "login", "uid", "owner", "nick")
_USER_GLUE = ("ssh", "db", "ftp", "sql", "smtp", "super", "admin")
_USER_STOP = frozenset(
    {"true", "false", "null", "none", "nil", "undefined", "string", "required", "optional"}
    # a template ("username:password") or prose ("distract the user: the focus …"), not a name
    | {
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "token",
        "the",
        "a",
        "an",
        "is",
        "was",
        "not",
        "and",
        "or",
    }
)
# PHP configs: define('DB_USER', 'admin');
_USER_DEFINE_RX = re.compile(
    r"(?i)define\(\s*[\"'][A-Za-z0-9_]{0,30}USER(?:_?NAME)?[\"']\s*,\s*[\"']([A-Za-z0-9][A-Za-z0-9._@\\-]{1,63})[\"']"
)
# Bucket names: 3-63 characters; legacy S3 names may hold upper case and "_".
_BUCKET = r"([A-Za-z0-9][A-Za-z0-9._-]{1,61}[A-Za-z0-9])"
_BUCKET_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_BUCKET_FULL_RX = re.compile(_BUCKET)
_S3_ENDPOINT = (
    r"s3(?:[.-][a-z0-9.-]{0,60}?)?\.amazonaws\.com(?:\.cn)?"  # one bounded run: no backtracking blow-up
)
# The service part of a virtual-hosted bucket URL; the bucket is the name in front of it.
_BUCKET_SUFFIX_RXS = (re.compile(r"\." + _S3_ENDPOINT), re.compile(r"\.storage\.googleapis\.com"))
# Each starts with a literal (boundaries are lookbehinds after it), so the engine jumps between them.
_BUCKET_PATH_RXS = (
    re.compile(r"s3(?<![A-Za-z0-9.-]s3)" + _S3_ENDPOINT[2:] + "/" + _BUCKET + r"(?![A-Za-z0-9_-])"),
    re.compile(
        r"storage(?<![A-Za-z0-9.-]storage)\.googleapis\.com/(?!(?:storage|upload|download|batch)/)" + _BUCKET
    ),
)
_BUCKET_ARN_RX = re.compile(r"arn:aws[a-z-]*:s3:::" + _BUCKET)
# bucket=…, "bucket": …, bucket: … (a bare ":" needs a space after it: a Prometheus recording rule
# such as …_seconds_bucket:increase1h is no assignment).
_BUCKET_KV_RX = re.compile(
    r"(?i)bucket(?:[_-]?name)?"
    r"(?:[\"'][ \t]{0,10}(?:=>|=|:)|[ \t]{0,10}(?:=>|=)|[ \t]{0,10}:[ \t])[ \t]{0,10}[\"']?"
    + _BUCKET
    + r"(?![A-Za-z0-9._$%{-])"
)
_SSH_PUBKEY_RX = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp(?:256|384|521)|"
    r"sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)[ \t]+(AAAA[A-Za-z0-9+/]{40,}={0,2})"
)
_AGE_RECIPIENT_RX = re.compile(
    r"age1(?<![A-Za-z0-9]age1)[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{58}(?![A-Za-z0-9])"
)
# Public AWS service endpoints, regional: sqs.eu-west-1.amazonaws.com, s3-us-west-2.amazonaws.com.
# A customer's own name adds a label in front (bucket.s3.…, id.execute-api.…) and stays masked.
_AWS_PUBLIC_ENDPOINT_RX = re.compile(
    r"(?:[a-z0-9-]{2,30}\.(?:dualstack\.)?|s3-)[a-z]{2}(?:-gov)?-[a-z]+-\d\.amazonaws\.com(?:\.cn)?"
)
# Looked up in the scrubber's keyword index (one pass for all), not with a scan of the text each.
_INDEX_WORDS = ("amazonaws.com", "storage.googleapis.com", "bucket", "ssh-", "ecdsa-sha2-", "age1")
index_keywords(_INDEX_WORDS)
_K8S_POD_RX = re.compile(
    r"(?<![A-Za-z0-9-])[a-z0-9](?:[a-z0-9-]{0,50}[a-z0-9])?-[bcdfghjklmnpqrstvwxz2456789]{5,10}-"
    r"[bcdfghjklmnpqrstvwxz2456789]{5}(?![A-Za-z0-9-])"
)


@cache
def _tlds(bare: bool) -> frozenset[str]:
    """The last labels a host name may end in; ``bare``: those that need no context (see above)."""
    tops = top_level_domains() | _PRIVATE_SUFFIXES
    if not bare:
        return tops
    named = _ORIGINAL_GTLDS | _PRIVATE_SUFFIXES | {name.rpartition(".")[2] for name in SPECIAL_USE_SUFFIXES}
    return frozenset(t for t in tops if len(t) == 2 or t in named)


def _host_context(text: str, start: int, end: int) -> bool:
    """A path or a port after ``text[start:end]`` (a class's ``File.java:42`` is a line number), or
    a host key (``host=``, ``Server:``, ``"hostname": "``, ``--host``) before it."""
    after = _HOST_AFTER_RX.match(text, end)
    if after is not None and not (after.group() != "/" and _CLASS_FILE_RX.fullmatch(text, start, end)):
        return True
    return _HOST_KEY_BEFORE_RX.search(text, max(0, start - 24), start) is not None


def is_known_host(name: str, *, bare: bool = False) -> bool:
    """True if ``name`` looks like a real hostname: labels under a public suffix (or a special-use
    or private name), not a bare suffix (``co.uk``), not a file name like ``main.py``. With ``bare``
    (a dotted token seen without a host's context: no URL, e-mail address, port, path or host key)
    a generic TLD other than RFC 1591's counts only under three labels or more, one with a digit or a
    hyphen (``db1.prod.acme.dev``; ``self.name``, ``logger.info`` are code), and a TLD written in
    mixed case (``TK.Tk``, ``Color.Red``) is code."""
    lower = name.lower().rstrip(".")
    labels = lower.split(".")
    if len(labels) < 2 or labels[-1] not in _tlds(False):
        return False
    if bare:
        top = name.rstrip(".").rpartition(".")[2]
        if not (top.islower() or top.isupper()):
            return False  # code, as the log miner reads it (tokenclass.is_host_name)
        if labels[-1] not in _tlds(True) and not (
            len(labels) >= 3 and any(c.isdigit() or c == "-" for c in "".join(labels[:-1]))
        ):
            return False
    if labels[-1] not in _PRIVATE_SUFFIXES:
        suffix = public_suffix(lower)
        if suffix is None or suffix.count(".") + 1 >= len(labels):
            return False
    return not (len(labels) == 2 and labels[-1] in _FILE_EXT_TLDS)


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _iban_ok(value: str) -> bool:
    v = value.replace(" ", "").upper()
    if not 15 <= len(v) <= 34:
        return False
    moved = v[4:] + v[:4]
    num = "".join(str(int(c, 36)) for c in moved)
    return int(num) % 97 == 1


class Recognizers:
    """All entity recognizers, configured once. ``sensitive_namespaces`` turns on K8s masking."""

    def __init__(
        self,
        sensitive_namespaces: Sequence[str] = (),
        keep_domains: Sequence[str] = (),
        *,
        keep_public_hosts: bool = True,
        mask_dates: bool = False,
    ) -> None:
        self._mask_dates = mask_dates
        names = sorted({n for n in sensitive_namespaces if n}, key=len, reverse=True)
        self._ns_rx = (
            re.compile(r"(?<![A-Za-z0-9.-])(?:" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9-])")
            if names
            else None
        )
        self._keep = tuple(d.lower().lstrip(".") for d in keep_domains) + ("localhost",)
        self._keep_exact = PUBLIC_HOSTS if keep_public_hosts else frozenset()

    def _keep_host(self, host: str) -> bool:
        h = host.lower()
        if h in self._keep_exact or any(h == d or h.endswith("." + d) for d in self._keep):
            return True
        return (
            bool(self._keep_exact)
            and h.endswith(".amazonaws.com")
            and bool(_AWS_PUBLIC_ENDPOINT_RX.fullmatch(h))
        )

    def find(self, text: str, index: LineIndex | None = None) -> list[Candidate]:
        """Every candidate entity span in ``text`` (overlapping; the anonymizer resolves them)."""
        index = index or LineIndex(text)
        out: list[Candidate] = []
        add = out.append
        if "://" in text:
            out.extend(self._urls(text))
        if "." in text or "@" in text:
            self._dotted(text, add)
        if ":" in text:
            self._ipv6(text, add)
        if "-" in text:
            for m in _JIRA_RX.finditer(text):
                if m.group().split("-", 1)[0] not in _JIRA_STOP:
                    add(Candidate("JIRA_KEY", m.start(), m.end(), PRIORITY["JIRA_KEY"]))
            if "/browse/" in text or "selectedIssue=" in text:
                for m in _JIRA_URL_RX.finditer(text):
                    add(Candidate("JIRA_KEY", m.start(1), m.end(1), PRIORITY["JIRA_KEY"]))
        out.extend(self._numbers(text))
        out.extend(self._cloud(text, index.low if index.low is not None else text.lower()))
        out.extend(self._keys_and_buckets(text, index))
        out.extend(self._users(text, index))
        out.extend(self._prose(text, index))
        if self._ns_rx is not None:
            out.extend(
                Candidate("K8S_NAMESPACE", m.start(), m.end(), PRIORITY["K8S_NAMESPACE"])
                for m in self._ns_rx.finditer(text)
            )
            out.extend(
                Candidate("K8S_POD", m.start(), m.end(), PRIORITY["K8S_POD"])
                for m in _K8S_POD_RX.finditer(text)
            )
        return out

    def _ipv6(self, text: str, add: Callable[[Candidate], None]) -> None:
        # Anchored on ":" runs that a timestamp (10:11:12) never has; each hint is widened to the
        # whole token and validated by ``ipaddress``.
        n = len(text)
        done = -1
        for m in _V6_HINT_RX.finditer(text):
            if m.start() < done:
                continue
            s, e = m.start(), m.end()
            while s > 0 and text[s - 1] in _V6_CHARS and m.start() - s < 40:
                s -= 1
            while e < n and text[e] in _V6_CHARS and e - m.end() < 40:
                e += 1
            done = e
            if s and (text[s - 1].isalnum() or text[s - 1] in "_:"):
                continue
            token = text[s:e].rstrip(".")
            if _is_ipv6(token):
                add(Candidate("IP", s, s + len(token), PRIORITY["IP"]))

    def _dotted(self, text: str, add: Callable[[Candidate], None]) -> None:
        # Each scan starts with a literal ("." or "@"), which the regex engine finds with a fast
        # substring search; the start of the token is then found by matching backwards on the
        # reversed text. Several times faster than a pattern tried at every character.
        n = len(text)
        rev: str | None = None
        for m in _TLD_RX.finditer(text):
            top = m.group()[1:].lower()
            if top not in _tlds(False):
                continue  # ".js", ".yaml", ".html": not a host, whatever precedes it
            if rev is None:
                rev = text[::-1]
            dot, end = m.start(), m.end()
            back = _HOST_BACK_RX.match(rev, n - dot)
            start = dot - (back.end() - back.start()) if back else dot
            if start == dot or (start and text[start - 1] in _NOT_BEFORE_HOST):
                continue  # an e-mail domain, a path segment or a URL host (handled elsewhere)
            host = text[start:end]
            if host[0] in ".-":
                continue
            if text.startswith("=", end) and top not in _tlds(True):
                continue  # a dotted key under a word TLD (k8s.pod.name=…, spring.app.name=…), not a host
            if (
                is_known_host(host, bare=not _host_context(text, start, end))
                and _HOSTNAME_FULL_RX.fullmatch(host)
                and not self._keep_host(host)
            ):
                add(Candidate("HOST", start, end, PRIORITY["HOST"]))
        for m in _IPV4_TAIL_RX.finditer(text):
            start = m.start()
            k = 0
            while start > 0 and k < 3 and text[start - 1].isdigit():
                start -= 1
                k += 1
            if k == 0 or (start and (text[start - 1].isdigit() or text[start - 1] == ".")):
                continue
            ip = text[start : m.end()]
            if _IPV4_FULL_RX.fullmatch(ip) and _mask_ip(ip):
                add(Candidate("IP", start, m.end(), PRIORITY["IP"]))
        at = text.find("@")
        while at >= 0:
            nxt = text.find("@", at + 1)
            if rev is None:
                rev = text[::-1]
            back = _LOCAL_BACK_RX.match(rev, n - at)
            start = at - (back.end() - back.start()) if back else at
            dm = _HOSTNAME_FULL_RX.match(text, at + 1) if start < at else None
            if dm is not None and (start == 0 or text[start - 1] not in _LOCAL_CHARS):
                end = dm.end()
                if (end >= n or text[end] not in _HOST_TAIL) and is_known_host(dm.group()):
                    add(Candidate("EMAIL", start, end, PRIORITY["EMAIL"]))
            at = nxt

    def _urls(self, text: str) -> Iterator[Candidate]:
        i = text.find("://")
        while i >= 0:
            s = i
            while s > 0 and i - s < 16 and (text[s - 1].isalnum() or text[s - 1] in "+.-"):
                s -= 1
            i = text.find("://", i + 3)
            m = _URL_RX.match(text, s)
            if m is None:
                continue
            host = m.group("host").rstrip(".")
            start = m.start("host")
            if host.startswith("["):
                if _is_ipv6(host[1:-1]):
                    yield Candidate("IP", start + 1, start + len(host) - 1, PRIORITY["IP"] + 20)
            elif _IPV4_RX.fullmatch(host):
                if _mask_ip(host):
                    yield Candidate("IP", start, start + len(host), PRIORITY["IP"] + 20)
            elif host and not self._keep_host(host):  # any host in a URL, dotted or not, names a machine
                yield Candidate("HOST", start, start + len(host), PRIORITY["HOST"] + 20)
            userinfo = m.group("userinfo")
            if userinfo:
                user = userinfo.split(":", 1)[0]
                if user and not PLACEHOLDER_RX.fullmatch(user):
                    kind = "EMAIL" if "@" in user else "USERNAME"
                    yield Candidate(
                        kind, m.start("userinfo"), m.start("userinfo") + len(user), PRIORITY[kind] + 20
                    )

    def _numbers(self, text: str) -> Iterator[Candidate]:
        # One scan for digit runs long enough to be a phone, card or SSN; each is then checked.
        for cand in _NUMERIC_RX.finditer(text):
            g = cand.group()
            dots, spaces = g.count("."), g.count(" ")
            if dots == 3 and not spaces and "-" not in g:
                continue  # an IPv4 address (the IP recognizer has it)
            if spaces == 1 and not dots and g[0] not in "+(" and "-" not in g:
                continue  # two numbers side by side ("200 1534" in an access log)
            nd = sum(map(str.isdigit, g))
            if nd < 7 or _DATE_LIKE_RX.match(g):
                continue
            lo, hi = cand.span()
            if nd == 9 and "-" in g:
                for m in _SSN_RX.finditer(text, lo, hi):
                    yield Candidate("US_SSN", m.start(), m.end(), PRIORITY["US_SSN"])
            if nd >= 12:
                for m in _CARD_RX.finditer(text, lo, hi):
                    digits = m.group().replace(" ", "").replace("-", "")
                    if (
                        12 <= len(digits) <= 19
                        and _luhn(digits)
                        and not (len(digits) == 13 and digits[0] == "1")
                    ):
                        yield Candidate("CREDIT_CARD", m.start(), m.end(), PRIORITY["CREDIT_CARD"])
            for m in _PHONE_RX.finditer(text, max(0, lo - 1), hi):
                value = m.group()
                if 7 <= sum(map(str.isdigit, value)) <= 15 and not _DATE_LIKE_RX.match(value):
                    yield Candidate("PHONE", m.start(), m.end(), PRIORITY["PHONE"])
        for m in _IBAN_RX.finditer(text):
            if (m.start() == 0 or not text[m.start() - 1].isalnum()) and _iban_ok(m.group()):
                yield Candidate("IBAN", m.start(), m.end(), PRIORITY["IBAN"])

    def _cloud(self, text: str, lowered_has: str) -> Iterator[Candidate]:
        if "arn:" in text:
            for m in _ARN_ACCOUNT_RX.finditer(text):
                yield Candidate("AWS_ACCOUNT", *m.span(1), PRIORITY["AWS_ACCOUNT"])
        if "account" in lowered_has:
            for m in _AWS_ACCOUNT_CTX_RX.finditer(text):
                yield Candidate("AWS_ACCOUNT", *m.span(1), PRIORITY["AWS_ACCOUNT"])
        if ".dkr.ecr." in text:
            for m in _ECR_RX.finditer(text):
                yield Candidate("AWS_ACCOUNT", *m.span(1), PRIORITY["AWS_ACCOUNT"])
        if "projects/" in text or "project" in lowered_has:
            for m in _GCP_PROJECT_RX.finditer(text):
                g = 1 if m.group(1) else 2
                yield Candidate("GCP_PROJECT", *m.span(g), PRIORITY["GCP_PROJECT"])
        if "subscription" in lowered_has:
            for m in _AZURE_SUB_RX.finditer(text):
                g = 1 if m.group(1) else 2
                yield Candidate("AZURE_SUBSCRIPTION", *m.span(g), PRIORITY["AZURE_SUBSCRIPTION"])

    def _keys_and_buckets(self, text: str, index: LineIndex) -> Iterator[Candidate]:
        yield from self._buckets(text, index)
        for lo, hi in index.ranges(("ssh-", "ecdsa-sha2-")):
            for m in _SSH_PUBKEY_RX.finditer(text, lo, hi):
                yield Candidate("PUBLIC_KEY", *m.span(1), PRIORITY["PUBLIC_KEY"])
        for lo, hi in index.lines("age1"):
            for m in _AGE_RECIPIENT_RX.finditer(text, lo, hi):
                yield Candidate("PUBLIC_KEY", *m.span(), PRIORITY["PUBLIC_KEY"])

    def _buckets(self, text: str, index: LineIndex) -> Iterator[Candidate]:
        spans: list[tuple[int, int]] = []
        for lo, hi in index.ranges(("amazonaws.com", "storage.googleapis.com")):
            for rx in _BUCKET_SUFFIX_RXS:  # virtual-hosted: walk back over the name
                for m in rx.finditer(text, lo, hi):
                    end = start = m.start()
                    while start > lo and end - start < 65 and text[start - 1] in _BUCKET_CHARS:
                        start -= 1
                    if start > lo and text[start - 1] == "%" and text[start : start + 2].upper() == "2F":
                        start += 2  # "%2F" is an encoded "/" (a URL inside a query string)
                    elif start > lo and text[start - 1].isalnum():
                        continue
                    if _BUCKET_FULL_RX.fullmatch(text, start, end):
                        spans.append((start, end))
            for rx in _BUCKET_PATH_RXS:
                spans.extend(m.span(1) for m in rx.finditer(text, lo, hi))
        if "arn:aws" in text:
            spans.extend(m.span(1) for m in _BUCKET_ARN_RX.finditer(text))
        for lo, hi in index.lines("bucket"):
            spans.extend(m.span(1) for m in _BUCKET_KV_RX.finditer(text, lo, hi))
        for s, e in spans:
            name = text[s:e]
            if (
                name.lower() in _USER_STOP
                or name.isdigit()
                or any(rx.search(name) for rx in _BUCKET_SUFFIX_RXS)
            ):
                continue  # (bucket = name.s3.amazonaws.com: the virtual-hosted walk above has the name)
            yield Candidate("BUCKET", s, e, PRIORITY["BUCKET"])

    def _users(self, text: str, index: LineIndex) -> Iterable[Candidate]:
        for lo, hi in index.ranges(_USER_KEYWORDS):
            low = text[lo:hi].lower()
            spans: list[tuple[int, int]] = []
            for kw in _USER_KEYWORDS:
                i = low.find(kw)
                while i >= 0:
                    p = lo + i
                    i = low.find(kw, i + 1)
                    prev = text[p - 1] if p else " "
                    glued = prev.isalpha() and not (prev.islower() and text[p].isupper())
                    if glued and not text[max(0, p - 4) : p].lower().endswith(_USER_GLUE):
                        continue  # "user" inside a word (superuser is fine, "reuse" is not a key)
                    m = _USER_KV_RX.match(text, p)
                    if m:
                        spans.append(m.span(1))
            if "<" in low:
                spans.extend(m.span(1) for m in _USER_XML_RX.finditer(text, lo, hi))
            if "define(" in low:
                spans.extend(m.span(1) for m in _USER_DEFINE_RX.finditer(text, lo, hi))
            for s, e in set(spans):
                value = text[s:e]
                if value.lower() in _USER_STOP or value.isdigit() or PLACEHOLDER_RX.match(text, s):
                    continue
                kind = "EMAIL" if "@" in value else "USERNAME"
                yield Candidate(kind, s, e, PRIORITY[kind] - 1)

    def _prose(self, text: str, index: LineIndex) -> Iterator[Candidate]:
        """Postal addresses, ages and dates: each scan runs only on the lines holding its keywords."""
        for kind, start, end in find_prose(text, index, mask_dates=self._mask_dates):
            yield Candidate(kind, start, end, PRIORITY[kind])


def _mask_ip(value: str) -> bool:
    # Loopback, unspecified and netmask-like addresses identify nobody.
    return not (value.startswith(("127.", "0.")) or value.startswith("255."))


def _is_ipv6(value: str) -> bool:
    if value.count(":") < 2 or len(value) < 3 or not any(c.isalnum() for c in value):
        return False
    try:
        addr = ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return not (addr.is_loopback or addr.is_unspecified)
