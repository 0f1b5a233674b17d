"""Options read the way programs read them: GNU abbreviation and bundling, cobra global flags (issue 20)."""

from __future__ import annotations

import pytest

from devops_agent.safety import classify
from devops_agent.safety.commands.base import Arg
from devops_agent.safety.commands.options import CobraFlags, Spec, cobra_path, parse

SORT = Spec("o:k:rT:", "output=|o key=|k reverse|r temporary-directory=|T")


def test_getopt_long_resolves_unique_prefixes_and_attached_values() -> None:
    p = parse(["--out=x", "--rev", "-k2", "data"], SORT)
    assert p.opts == [("output", "x"), ("reverse", None), ("key", "2")]
    assert p.operands == ["data"]
    assert parse(["--outp", "y"], SORT).value("output") == "y"


def test_getopt_bundles_short_flags_and_the_last_takes_the_rest_or_the_next_word() -> None:
    assert parse(["-ro/tmp/x", "f"], SORT).value("output") == "/tmp/x"
    assert parse(["-ro", "/tmp/y", "f"], SORT).value("output") == "/tmp/y"


def test_ambiguous_prefix_reports_every_candidate_and_unknown_options_are_kept() -> None:
    spec = Spec("", "output= output-dir= verbose")
    p = parse(["--out", "x", "--frob"], spec)
    assert p.ambiguous == [("--out", ("output", "output-dir"))]
    assert p.unknown == ["--frob"]
    assert p.has("output")


def test_words_built_at_run_time_in_option_position_are_reported() -> None:
    word = Arg("$X", "$X", dynamic=True, starts_dynamic=True)
    glob = Arg("*.txt", "*.txt", leading_glob=True)
    p = parse([word, glob, "--", "-o"], SORT)
    assert p.injectable == [word, glob]
    assert "-o" in p.operands


def test_cobra_path_takes_the_verb_after_a_valued_global_flag() -> None:
    flags = CobraFlags.of("--cache-dir -n", "--debug")
    assert cobra_path(["--cache-dir", "get", "delete", "ns"], flags, levels=1)[0] == ["delete"]
    assert cobra_path(["--cache-dir=/tmp", "get", "pods"], flags, levels=1)[0] == ["get"]
    assert cobra_path(["-nprod", "logs"], flags, levels=1)[0] == ["logs"]
    words, blind, at, _ = cobra_path(["--unknown", "get", "delete"], flags, levels=1)
    assert (words, blind, at) == ([], "--unknown", 0)


@pytest.mark.parametrize(
    ("cmd", "expected"),
    [
        # GNU long-option abbreviation and --opt=value
        ("sort --out=x data", "mutating"),
        ("sort --outp x data", "mutating"),
        ("sort --compress-p=sh data", "unknown"),
        ("sed --in -e s/a/b/ f", "mutating"),
        ("date --se 2020-01-01", "mutating"),
        ("dmesg --cl", "mutating"),
        ("journalctl --vac=1d", "mutating"),
        ("journalctl --rot", "mutating"),
        ("wget --output-doc=x https://example.com", "mutating"),
        ("curl -s --stder err.log https://example.com", "mutating"),
        ("curl --out x https://example.com", "mutating"),
        ("git config --rem=user", "mutating"),
        ("git ls-remote --upl=/tmp/x origin", "unknown"),
        ("sort --rev data", "read_only"),
        ("du --max=1 -h /var", "read_only"),
        ("journalctl --unit=nginx --since=-1h", "read_only"),
        # bundled short flags with attached values
        ("sort -uo out.txt in.txt", "mutating"),
        ("sort -ro/tmp/x data", "mutating"),
        ("curl -fsSLo /tmp/get.sh https://example.com", "mutating"),
        ("curl -sd@/etc/passwd https://example.com", "mutating"),
        ("sed -nie p f", "mutating"),
        ("date -us '2020-01-01'", "mutating"),
        ("dmesg -Tc", "mutating"),
        ("wget -qO /tmp/x https://example.com", "mutating"),
        ("ssh -vo ProxyCommand=x web1 uptime", "unknown"),
        ("python3 -Im http.server", "unknown"),
        ("curl -Lvo/dev/null https://example.com", "read_only"),
        ("wget -qO- https://example.com", "read_only"),
        ("ssh -4p 2222 web1 uptime", "read_only"),
        ("journalctl -xeu nginx", "read_only"),
        # an option a program's table does not know (another platform's writer)
        ("base64 -o out.txt in.txt", "unknown"),
    ],
)
def test_options_are_read_as_the_program_reads_them(cmd: str, expected: str) -> None:
    assert classify(cmd).level == expected, classify(cmd).reasons


@pytest.mark.parametrize(
    ("cmd", "expected"),
    [
        ("kubectl --cache-dir get delete ns prod", "destructive"),
        ("kubectl -s get delete pod api", "destructive"),
        ("kubectl --context get apply -f x.yaml", "mutating"),
        ("kubectl --all get delete pods", "unknown"),
        ("kubectl --profile=cpu get pods", "mutating"),
        ("helm --namespace get uninstall api", "destructive"),
        ("helm -n list delete web", "destructive"),
        ("docker -H ps rm -f web", "destructive"),
        ("docker --context ps kill web", "destructive"),
        ("argocd --server get app delete x", "destructive"),
        ("systemctl -p status kill nginx", "destructive"),
        ("systemctl -H status stop nginx", "mutating"),
        ("kubectl --context prod get pods", "read_only"),
        ("kubectl -v 4 get ns", "read_only"),
        ("kubectl --cache-dir=/tmp get pods", "read_only"),
        ("kubectl apply -f x.yaml --dry-run=server", "read_only"),
        ("helm --burst-limit 200 list", "read_only"),
        ("docker --tls version", "read_only"),
        ("systemctl -H admin@web1 status nginx", "read_only"),
    ],
)
def test_global_flags_with_values_decide_which_verb_runs(cmd: str, expected: str) -> None:
    assert classify(cmd).level == expected, classify(cmd).reasons
