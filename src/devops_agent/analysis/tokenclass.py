"""Classes of log tokens that are values wherever they appear, each defined by a standard.

A log template keeps the words a programmer wrote and replaces the values the program filled
in. Some values can be told by their form alone, in any log, and this module holds those forms:

- **Host names** (:func:`is_host_name`): RFC 1123 labels ending in a public suffix of the
  Public Suffix List (its ICANN section, as shipped inside the ``publicsuffixlist`` package:
  the list is read from the installed package, never fetched), or in a special-use or
  private-use name (:data:`SPECIAL_USE_SUFFIXES`): ``db-1.prod.internal``, ``nas.lan``,
  ``api.example.io``, ``www.example.co.uk``.
- **IP addresses** (:func:`is_ip_address`): whatever the standard library's ``ipaddress``
  accepts (RFC 4291 text forms of IPv6 with ``::`` compression and an embedded IPv4 tail, an
  RFC 4007 ``%zone``), bracketed (``[fe80::1]:8080``) or not.
- **Booleans** (:data:`BOOLEANS`): ``true``/``false`` as JSON, Java, Go and Python print them.
- **Unit symbols** (:data:`UNIT_SYMBOLS`): SI and IEC prefixes combined with the symbols of
  data, data rate and frequency (``B``, ``KiB``, ``MB/s``, ``GHz``), and the time symbols
  (``ms``, ``sec``). A number followed by one is a measurement; human-readable formatting picks
  the unit by magnitude (``850 B``, ``1.16 KB``), so the unit can vary within one event.

What is *not* here on purpose: lists of words seen in some benchmark's logs. A class belongs
here only when its definition comes from a standard or from maintained data.

Pure functions apart from loading the suffix list once, lazily, from the installed package (parsed,
and its data file read for :func:`top_level_domains`); this module must not open other files, use
the network, or import from tools, policies, agent or interfaces.
"""

from __future__ import annotations

import ipaddress
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList

__all__ = [
    "BOOLEANS",
    "SPECIAL_USE_SUFFIXES",
    "UNIT_SYMBOLS",
    "is_host_name",
    "is_ip_address",
    "public_suffix",
    "top_level_domains",
]

BOOLEANS = frozenset(("true", "false", "True", "False", "TRUE", "FALSE"))

# Names that end a real host name but are not in the Public Suffix List, because they are not
# delegated in the public DNS:
# - the IANA "Special-Use Domain Names" registry (RFC 6761: test, localhost, invalid, example;
#   RFC 6762: local; RFC 7686: onion; RFC 8375: home.arpa; RFC 9476: alt);
# - ICANN's private-use TLD ``internal`` (board resolution 2024.07.29.06);
# - the private names RFC 6762 appendix G found in common use: intranet, internal, private,
#   corp, home, lan.
SPECIAL_USE_SUFFIXES = frozenset(
    (
        "test",
        "localhost",
        "invalid",
        "example",
        "local",
        "onion",
        "home.arpa",
        "alt",
        "internal",
        "intranet",
        "private",
        "corp",
        "home",
        "lan",
    )
)

# SI (BIPM brochure, 9th ed.) and IEC 80000-13 prefixes; "K" is the customary upper-case kilo
# of data sizes (JEDEC).
_PREFIXES = ("", "k", "K", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
# Data (byte, bit), data rate and frequency symbols.
_BASE_UNITS = ("B", "b", "bit", "bits", "B/s", "b/s", "bps", "Bps", "Hz")
# Time: the SI symbols below one second and the customary abbreviations above it.
_TIME_SYMBOLS = ("ns", "us", "µs", "μs", "ms", "s", "sec", "secs", "min", "mins", "h", "hr", "hrs")
UNIT_SYMBOLS = frozenset(p + u for p in _PREFIXES for u in _BASE_UNITS) | frozenset(_TIME_SYMBOLS)

_ONES = str.maketrans("023456789", "111111111")
# One RFC 1123 label: letters, digits and hyphens, not starting or ending with a hyphen.
_LABEL_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


@cache
def _suffix_list() -> PublicSuffixList:
    from publicsuffixlist import PublicSuffixList

    # ICANN section only: the private section lists hosting platforms (github.io, ...), under
    # which a name is still a host name. accept_unknown=False: a TLD not in the list (``.py``
    # is in it, ``.exe`` is not) is not a public suffix.
    return PublicSuffixList(only_icann=True, accept_unknown=False)


@cache
def _icann_tops() -> tuple[frozenset[str], frozenset[str]]:
    """(every top-level label of the list's ICANN rules, those whose only rule is the label itself)."""
    import publicsuffixlist

    text = Path(publicsuffixlist.PSLFILE).read_text(encoding="utf-8")
    icann = text.partition("===BEGIN ICANN DOMAINS===")[2].partition("===END ICANN DOMAINS===")[0]
    rules = [line.strip() for line in icann.splitlines()]
    rules = [rule for rule in rules if rule and not rule.startswith("//")]
    tops = {rule.rpartition(".")[2].lstrip("!*") for rule in rules}
    deeper = {rule.rpartition(".")[2] for rule in rules if "." in rule}
    return frozenset(tops), frozenset(tops - deeper)


def top_level_domains() -> frozenset[str]:
    """Every top-level label a host name can end in, lower case: the last label of each rule of the
    list's ICANN section (``za`` too, whose rules are all second-level, ``co.za``) and of each
    special-use name. Read once from the installed package's copy of the list."""
    return _icann_tops()[0] | {name.rpartition(".")[2] for name in SPECIAL_USE_SUFFIXES}


def public_suffix(name: str) -> str | None:
    """The public suffix ``name`` ends in (lower case): ICANN list or special-use, else None."""
    lower = name.lower().rstrip(".")
    last = lower.rpartition(".")[2]
    if last in SPECIAL_USE_SUFFIXES:
        return last
    if lower.endswith(".home.arpa"):
        return "home.arpa"
    if last in _icann_tops()[1]:
        return last  # no rule below this TLD (com, io, dev): the list would answer the same, slower
    suffix: str | None = _suffix_list().publicsuffix(lower)
    return suffix


def is_host_name(text: str) -> bool:
    """Whether ``text`` is a fully qualified host name: RFC 1123 labels under a public suffix.

    At least one label must stand before the suffix (``co.uk`` alone is not a host). The suffix
    must be written in one case (``example.COM`` or ``example.com``, not ``task.It``, which is
    two sentences run together). ``_`` is not allowed in a host label, so a Python module path
    such as ``os.path_x`` is not one.
    """
    name = text[:-1] if text.endswith(".") else text
    top = name.rpartition(".")[2]
    # cheap tests first: most dotted tokens are numbers, versions or Java class names
    if not (top.isalpha() and (top.islower() or top.isupper()) and len(top) > 1):
        return False  # isalpha also keeps digits out of the test (see masking.shape)
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL_RE.fullmatch(label) for label in labels):
        return False
    suffix = public_suffix(name)
    if suffix is None or suffix.count(".") + 1 >= len(labels):
        return False
    written = name[len(name) - len(suffix) :]
    return written.islower() or written.isupper()


def is_ip_address(text: str) -> bool:
    """Whether ``text`` is an IPv4 or IPv6 address, optionally ``[bracketed]`` with a port.

    IPv6 may be compressed (``2001:db8::1``), carry an IPv4 tail (``::ffff:10.0.0.1``) or a zone
    (``fe80::1%eth0``). Validation is the standard library's, so ``12:30:45`` (a time) and a
    six-group MAC address are not addresses. Digits are checked for where they stand, not for
    their value (``999.1.1.1`` counts as an address), so that texts equal up to their digits
    are classified alike (see :func:`devops_agent.analysis.masking.shape`).
    """
    core = text
    if core.startswith("["):
        end = core.find("]")
        if end < 0:
            return False
        rest = core[end + 1 :]
        if rest and not (rest[0] == ":" and rest[1:].isdigit()):
            return False
        core = core[1:end]
    try:
        ipaddress.ip_address(core.translate(_ONES))
    except ValueError:
        return False
    return True
