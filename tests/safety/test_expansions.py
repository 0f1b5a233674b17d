"""Expansions the classifier cannot evaluate exactly are never read-only (issue 20)."""

from __future__ import annotations

import pytest

from devops_agent.safety import classify
from devops_agent.safety.shellwords import brace_expand, parameter_risk, preprocess, strip_time_keyword


def test_brace_expansion_is_performed_as_bash_does_it() -> None:
    assert brace_expand("{-o,out}") == ["-o", "out"]
    assert brace_expand("/var/log/{syslog,auth.log}") == ["/var/log/syslog", "/var/log/auth.log"]
    assert brace_expand("x{1..3}") == ["x1", "x2", "x3"]
    assert brace_expand("{a,b{c,d}}") == ["a", "bc", "bd"]
    assert brace_expand("'{a,b}'") == ["'{a,b}'"]  # quoted: no expansion
    assert brace_expand("${x}") == ["${x}"]  # a parameter expansion, not a brace expression
    assert brace_expand("{a}") == ["{a}"]
    assert brace_expand("{1..100000}") is None


def test_parameter_expansions_that_run_code_are_named() -> None:
    assert parameter_risk("x:-$(rm x)") is not None
    assert parameter_risk("x:+`id`") is not None
    assert parameter_risk("!x") is not None
    assert parameter_risk("x@P") is not None
    assert parameter_risk("a[$(id)]") is not None
    assert parameter_risk("a[i]") is not None
    assert parameter_risk("x:i:2") is not None
    for safe in ("x", "HOME", "#x", "x:-default", "x%.log", "a[1]", "a[@]", "!pre*", "x: -2", "1", "@"):
        assert parameter_risk(safe) is None, safe


def test_time_keyword_and_double_brackets_become_parseable() -> None:
    assert strip_time_keyword("time -p ls -la") == "ls -la"
    assert strip_time_keyword("ls; time ls") == "ls; ls"
    assert strip_time_keyword("echo 'time x'") == "echo 'time x'"
    assert preprocess("[[ -f x && -d y ]] && ls") == "\\[\\[ -f x  -a  -d y \\]\\] && ls"


@pytest.mark.parametrize(
    ("cmd", "expected"),
    [
        # brace expansion builds the words that run
        ("sort {-o,out.txt} data.txt", "mutating"),
        ("sed {-i,s/a/b/} x.txt", "mutating"),
        ("{rm,-rf,/tmp/x}", "destructive"),
        ("tar -tf a.tar {--checkpoint=1,--checkpoint-action=exec=id}", "unknown"),
        ("ls /var/log/{syslog,auth.log}", "read_only"),
        ("echo {1..5}", "read_only"),
        # substitutions nested in parameter expansions
        ("echo ${x:-$(rm -rf /tmp/x)}", "destructive"),
        ('echo "${x:+`touch /tmp/p`}"', "unknown"),
        ("cat ${f:-$(id)}", "unknown"),
        ("cat ${LOG:-/var/log/syslog}", "read_only"),
        # indirection, prompt expansion, subscripts, arithmetic
        ("x='a[$(touch /tmp/p)]'; echo ${!x}", "unknown"),
        ("y='$(touch /tmp/p)'; echo ${y@P}", "unknown"),
        ("echo ${a[$(id)]}", "unknown"),
        ("printf -v 'a[$(touch /tmp/p)]' x", "unknown"),
        ("test -v 'a[$(touch /tmp/p)]'", "unknown"),
        ("[ -v 'b[$(id)]' ]", "unknown"),
        ("read 'a[$(id)]' <<< 1", "unknown"),
        ("declare 'a[$(id)]=1'", "unknown"),
        ("unset 'a[$(id)]'", "unknown"),
        ("let 'a[$(id)]=1'", "unknown"),
        ("declare -i n; n='a[$(id)]'", "unknown"),
        ("[[ $x -eq 1 ]]", "unknown"),
        ("echo $(( a[$(id)] ))", "unknown"),
        ("echo $[ 1 + 1 ]", "unknown"),
        ("n=5; [[ $n -gt 1 ]] && ls", "read_only"),
        ("[[ -f /etc/hosts ]] && cat /etc/hosts", "read_only"),
        # eval-like builtins
        ("mapfile -C 'touch /tmp/p' -c 1 arr < /etc/hosts", "unknown"),
        ("compgen -C 'touch /tmp/p' x", "unknown"),
        ('eval "$CMD"', "unknown"),
        ("eval 'rm -rf /srv'", "destructive"),
        ('bash -c "$CMD"', "unknown"),
        ("fc -s", "unknown"),
        ("source /tmp/x.sh", "unknown"),
        # the program name from an expansion
        ("$EDITOR notes.txt", "unknown"),
        ('"$(cat /tmp/cmd)" -la', "unknown"),
        # words that may turn into options of a program that has writing options
        ("sort *.txt", "unknown"),
        ("sort $X data", "unknown"),
        ("cat *.log", "read_only"),
        ("time ls -la", "read_only"),
    ],
)
def test_expansions_are_evaluated_or_unknown(cmd: str, expected: str) -> None:
    assert classify(cmd).level == expected, classify(cmd).reasons
