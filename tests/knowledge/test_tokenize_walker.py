"""Tokenizer splits identifiers; the walker honours .gitignore and skips binaries and vendored code."""

from __future__ import annotations

from pathlib import Path

from devops_agent.knowledge.tokenize import split_identifier, tokenize
from devops_agent.knowledge.walker import parse_gitignore, walk
from fixtures_knowledge import write_file


def test_split_identifier_camel_snake_and_acronyms() -> None:
    assert split_identifier("getHTTPResponse_code") == ["get", "http", "response", "code"]
    assert split_identifier("parse_v2Header") == ["parse", "v", "2", "header"]


def test_tokenize_keeps_whole_identifier_and_parts() -> None:
    toks = tokenize("Call retryBackoff() in net/http_client.py for the user")
    assert "retrybackoff" in toks
    assert "retry" in toks
    assert "backoff" in toks
    assert "http_client" in toks
    assert "http" in toks
    assert "client" in toks
    assert "net" in toks
    assert "the" not in toks
    assert "for" not in toks


def test_walk_honours_gitignore_and_skips_binary_vendor_generated(tmp_path: Path) -> None:
    write_file(tmp_path, ".gitignore", "*.log\n/build_out/\nsecret*\n!secret_ok.txt\n")
    write_file(tmp_path, "app/main.py", "print(1)\n")
    write_file(tmp_path, "app/.gitignore", "local.cfg\n")
    write_file(tmp_path, "app/local.cfg", "x=1\n")
    write_file(tmp_path, "other/local.cfg", "x=1\n")
    write_file(tmp_path, "run.log", "log\n")
    write_file(tmp_path, "build_out/x.py", "x\n")
    write_file(tmp_path, "secret.txt", "s\n")
    write_file(tmp_path, "secret_ok.txt", "ok\n")
    write_file(tmp_path, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00binary")
    write_file(tmp_path, "node_modules/lib/index.js", "x\n")
    write_file(tmp_path, "vendor/github.com/x/y.go", "package y\n")
    write_file(tmp_path, "web/app.min.js", "x\n")
    write_file(tmp_path, "api/service_pb2.py", "x\n")
    got = sorted(p.as_posix() for p in walk(tmp_path))
    assert got == ["app/main.py", "other/local.cfg", "secret_ok.txt"]


def test_gitignore_patterns() -> None:
    rules = parse_gitignore("docs/**/*.tmp\n")
    assert rules[0].regex.match("docs/a/b/c.tmp")
    assert rules[0].regex.match("docs/c.tmp")
    assert not rules[0].regex.match("src/docs/c.tmp")
