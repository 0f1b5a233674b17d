"""Token classes that are values in any log (devops_agent.analysis.tokenclass), and how masking and
the template miner use them. Lines are synthetic, in the forms daemons print: none is taken from a
benchmark file."""

from __future__ import annotations

import socket

import pytest

from devops_agent.analysis import tokenclass
from devops_agent.analysis.masking import Masker, is_measure, mask
from devops_agent.analysis.templates import TemplateMiner
from devops_agent.analysis.tokenclass import UNIT_SYMBOLS, is_host_name, is_ip_address, public_suffix


@pytest.mark.parametrize(
    "name",
    [
        "db-1.prod.internal",  # ICANN's private-use TLD, not in the Public Suffix List
        "nas.lan",  # RFC 6762 appendix G
        "printer.local",  # mDNS, RFC 6762
        "router.home.arpa",  # RFC 8375
        "api.example.io",
        "www.example.co.uk",  # a two-label public suffix
        "proxy.cs.example.edu.hk",
        "grafana.example.cloud",  # a new gTLD
        "mx.example.com.",  # fully qualified, with the root dot
        "WORKSTATION.CORP.EXAMPLE.COM",
    ],
)
def test_host_names_under_any_public_or_special_use_suffix(name: str) -> None:
    assert is_host_name(name)
    assert mask(f"connecting to {name}:5432 took 3 ms") == "connecting to <*> took <*>ms"


@pytest.mark.parametrize(
    "text",
    [
        "co.uk",  # a public suffix alone names no host
        "task.It",  # two sentences run together: the suffix is not written in one case
        "java.net.ConnectException",  # a class name: its last label is no suffix
        "config.yaml",  # .yaml is no TLD
        "app.exe",
        "user_name.example.com",  # "_" is not allowed in a host label
        "10.0.0.1",
        "a.-bad-.com",
    ],
)
def test_dotted_words_that_are_not_host_names(text: str) -> None:
    assert not is_host_name(text)


def test_class_names_stay_constant_where_a_hand_list_masked_them() -> None:
    # the hand list had "net": java.net.X became <*>.X
    assert (
        mask("Caused by: java.net.ConnectException: refused")
        == "Caused by: java.net.ConnectException: refused"
    )


def test_the_suffix_list_comes_from_the_installed_package_without_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_network(*args: object, **kwargs: object) -> socket.socket:
        raise AssertionError("the Public Suffix List must not be fetched")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    tokenclass._suffix_list.cache_clear()
    assert public_suffix("www.example.co.uk") == "co.uk"
    assert public_suffix("example.zz-not-a-tld") is None


def test_top_level_domains_and_the_fast_path_agree_with_the_list() -> None:
    tops = tokenclass.top_level_domains()
    # every country code (za has only second-level rules), generic TLDs old and new, special-use
    assert {"za", "eu", "uk", "com", "name", "shop", "local", "test"} <= tops
    assert "zz-not-a-tld" not in tops
    # A TLD with no rule below it is answered without the list's walk; the answer is the list's.
    names = [f"{pre}{top}" for top in sorted(tops) for pre in ("a.", "x.co.", "b.com.", "city.kawasaki.")]
    special = {name.rpartition(".")[2] for name in tokenclass.SPECIAL_USE_SUFFIXES}
    for name in names:
        if name.rpartition(".")[2] not in special:
            assert public_suffix(name) == tokenclass._suffix_list().publicsuffix(name), name


@pytest.mark.parametrize(
    "address",
    [
        "fe80::1ff:fe23:4567:890a",
        "2001:db8::1",
        "::1",
        "fe80::1%eth0",
        "::ffff:10.0.0.1",
        "[2001:db8::1]:8080",
        "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
        "10.1.2.3",
    ],
)
def test_ip_addresses_in_their_rfc_forms(address: str) -> None:
    assert is_ip_address(address)
    assert mask(f"peer {address} is up") == "peer <*> is up"


@pytest.mark.parametrize("text", ["12:30:45", "00:1a:2b:3c:4d:5e", "1::2::3", "[::1]x", "fe80::zz"])
def test_times_macs_and_broken_forms_are_not_ip_addresses(text: str) -> None:
    assert not is_ip_address(text)


def test_ipv6_groups_without_digits_no_longer_stay_literal() -> None:
    # before, "abcd" and "fe" survived as words: <*>::abcd:<*>
    assert mask("neighbor fe80::abcd:ef01 reachable") == "neighbor <*> reachable"
    assert mask("route via fe::ab dev eth0") == "route via fe::ab dev eth0"  # no digit, 2 colons: likely code
    assert mask("in Foo::bar()") == "in Foo::bar()"


@pytest.mark.parametrize(
    ("message", "masked"),
    [
        ("cache warm true", "cache warm <*>"),
        ("dryRun=false verbose=TRUE", "dryRun=<*> verbose=<*>"),
        ("Telemetry enabled: False", "Telemetry enabled: <*>"),
        ("retryOnConflict:true", "retryOnConflict:<*>"),
        ("true=1", "true=<*>"),  # a key stays
        ("construed as trueness", "construed as trueness"),
    ],
)
def test_booleans_are_variables(message: str, masked: str) -> None:
    assert mask(message) == masked


@pytest.mark.parametrize(
    ("message", "masked"),
    [
        ("trace deadbeef span cafebabedeadbeef", "trace <*> span <*>"),
        ("lock held by DEADBEEF", "lock held by <*>"),
        ("commit abcdefabcdefabcdefabcdefabcdefabcdefabcd", "commit <*>"),
        ("the decade faded", "the decade faded"),  # hex letters, but words of 6 and 5
        ("request 123e4567-e89b-12d3-a456-426614174000 done", "request <*> done"),
    ],
)
def test_hex_words_of_id_length_are_variables_with_or_without_digits(message: str, masked: str) -> None:
    assert mask(message) == masked


def test_urls_and_windows_paths_are_variables() -> None:
    assert mask("GET https://api.example.com/v1/items?id=7 failed") == "GET <*> failed"
    assert mask(r"Loaded C:\Windows\System32\drivers\x.sys") == "Loaded <*>"
    assert mask(r"share \\fileserver\public\x.txt missing") == "share <*> missing"


def test_a_quoted_path_is_one_variable_spaces_and_all() -> None:
    one = 'Cannot stat "/srv/app/Web Applications/Logs": No such file or directory (2)'
    other = 'Cannot stat "/srv/app/Cache": No such file or directory (2)'
    assert mask(one) == mask(other) == "Cannot stat <*>: No such file or directory <*>"
    assert mask(r"open 'C:\Program Files\Acme\a.dll' failed") == "open <*> failed"
    # a quoted message is the program's words, not a path; an unquoted path ends at a space
    assert (
        mask('level=info msg="Starting provider" count=2') == 'level=info msg="Starting provider" count=<*>'
    )
    assert mask("Cannot stat /srv/app/Web Applications") == "Cannot stat <*> Applications"


def test_unit_symbols_are_generated_from_si_and_iec_prefixes() -> None:
    assert {"B", "KB", "kB", "MiB", "GB", "Gbps", "MB/s", "GHz", "ms", "µs", "sec"} <= UNIT_SYMBOLS
    assert "bytes" not in UNIT_SYMBOLS  # a word the format string wrote stays a word
    assert mask("sent 1190 bytes (1.16 KB), free 317.5 MB") == "sent <*> bytes <*>KB), free <*>MB"
    assert is_measure("<*>KB),")
    assert is_measure("<*>")
    assert not is_measure("<*>)")
    assert not is_measure("KB")


def test_a_size_whose_unit_varies_is_one_variable_and_a_fixed_unit_stays() -> None:
    miner = TemplateMiner()
    for size in ("850 B", "1.16 KB", "2.5 MB"):
        miner.add(f"cache entry written (size {size}, left 317.5 MB)")
    for n in (64172, 2048, 512):
        miner.add(f"heap limit: {n} MB, in use: 0.00 MB")
    assert sorted(t.template for t in miner.templates()) == [
        "cache entry written (size <*> left <*>MB)",
        "heap limit: <*>MB, in use: <*>MB",
    ]


def test_a_duration_with_or_without_its_unit_is_one_variable() -> None:
    miner = TemplateMiner()
    for took in ("<1 sec", "00:06", "02:31:45", "<1 sec"):
        miner.add(f"upload to www.example.com:443 done, 0 bytes in {took}")
    assert [t.template for t in miner.templates()] == ["upload to <*> done, <*> bytes in <*>"]


def test_hosts_with_unusual_tlds_do_not_split_an_event() -> None:
    miner = TemplateMiner()
    for host in ("db-1.prod.internal", "nas.lan", "api.example.io", "www.example.co.uk"):
        miner.add(f"tunnel to {host}:443 opened via {host}:3128 (TLS)")
    assert [t.template for t in miner.templates()] == ["tunnel to <*> opened via <*> (TLS)"]


def test_texts_equal_up_to_digits_mask_alike_with_the_new_classes() -> None:
    """The miner's fast path keys on digits zeroed: no class may look at a digit's value."""
    pairs = [
        ("addr fe80::1ff:fe23:4567:890a up", "addr fe80::9ff:fe03:4067:800a up"),
        ("addr ::ffff:10.0.0.1 up", "addr ::ffff:999.0.0.1 up"),
        ("sent (1.16 KB) in 3 ms", "sent (9.99 KB) in 0 ms"),
        ("to db-1.prod.internal ok", "to db-7.prod.internal ok"),
    ]
    for a, b in pairs:
        masked_a, same = Masker().masked(a)
        assert same
        assert Masker().masked(b) == (masked_a, True)
