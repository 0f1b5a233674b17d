"""Syntax chunker: tree-sitter symbols and exact line ranges per language, and the heuristic fallback
when a grammar is missing or the tree is mostly errors."""

from __future__ import annotations

import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest

from devops_agent.knowledge import chunking, syntax
from devops_agent.knowledge.chunking import MAX_LINES, Chunk, chunk_text, language_of


def needs(grammar: str) -> None:
    if syntax._language(grammar) is None:
        pytest.skip(f"tree-sitter grammar for {grammar} not installed (knowledge-syntax extra)")


def chunks_of(path: str, src: str) -> list[tuple[str, str, int, int]]:
    """(kind, symbol, start, end) of each chunk, after checking what every chunk must satisfy."""
    chunks = chunk_text(path, src)
    lines = src.splitlines()
    end = 0
    for c in chunks:
        assert end < c.start_line <= c.end_line <= len(lines), c
        assert c.end_line - c.start_line + 1 <= MAX_LINES
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.language == language_of(path)
        end = c.end_line
    return [(c.kind, c.symbol, c.start_line, c.end_line) for c in chunks]


def heuristic(path: str, src: str) -> list[Chunk]:
    return chunking._blocks(path, src.splitlines(), language_of(path))


GO = textwrap.dedent(
    """\
    // Package api serves the public HTTP API.
    package api

    import (
    \t"encoding/json"
    \t"net/http"
    )

    // Server answers API requests.
    // It is safe for concurrent use.
    type Server struct {
    \tstore Store
    }

    type Store interface {
    \tUser(id string) (*User, error)
    }

    // Handle serves GET /users/{id}.
    func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {
    \tu, err := s.store.User(r.PathValue("id"))
    \tif err != nil {
    \t\thttp.Error(w, err.Error(), http.StatusNotFound)
    \t\treturn
    \t}
    \t_ = json.NewEncoder(w).Encode(u)
    }

    func (c Cache[K]) Get(k K) string { return c.m[k] }

    // NewServer wires a server.
    func NewServer(st Store) *Server {
    \treturn &Server{store: st}
    }

    var defaultTimeout = 5
    """
)


def test_go_functions_methods_and_types() -> None:
    needs("go")
    assert chunks_of("api/server.go", GO) == [
        ("module", "server", 1, 7),
        ("type", "Server", 9, 13),
        ("type", "Store", 15, 17),
        ("method", "Server.Handle", 19, 27),
        ("method", "Cache.Get", 29, 29),
        ("function", "NewServer", 31, 34),
        ("module", "server", 36, 36),
    ]
    handle = chunk_text("api/server.go", GO)[3]
    assert handle.text.startswith("// Handle serves GET /users/{id}.\nfunc (s *Server) Handle(")
    assert handle.citation == "api/server.go:19-27"


JAVA = textwrap.dedent(
    """\
    package com.acme.users;

    import java.util.Optional;

    /** Looks users up, with a cache in front of the repository. */
    @Service
    public class UserService {
        private final UserRepository repo;

        public UserService(UserRepository repo) {
            this.repo = repo;
        }

        /** The user, if any. */
        @Transactional(readOnly = true)
        public Optional<User> findById(long id) {
            return repo.findById(id);
        }
    }

    interface UserRepository {
        Optional<User> findById(long id);
    }

    enum Role { ADMIN, VIEWER }
    """
)


def test_java_types_are_classes_with_their_javadoc() -> None:
    needs("java")
    assert chunks_of("src/UserService.java", JAVA) == [
        ("module", "UserService", 1, 3),
        ("class", "UserService", 5, 19),
        ("class", "UserRepository", 21, 23),
        ("class", "Role", 25, 25),
    ]


def test_long_java_class_is_split_into_methods_with_javadoc_and_annotations() -> None:
    needs("java")
    methods = "".join(
        f"\n    /** Finds user {i}. */\n    @Transactional\n    public User find{i}(long id) {{\n"
        + "        id += 1;\n" * 8
        + "        return repo.get(id);\n    }\n"
        for i in range(12)
    )
    src = (
        "package a;\n\n/** Users. */\npublic class UserService {\n    private final Repo repo;\n"
        + methods
        + "\n    static class Cache {\n        void put() {}\n    }\n}\n"
    )
    # each method: blank line, javadoc (7 + 14i), annotation, signature, 9 body lines, "}" (19 + 14i)
    assert chunks_of("UserService.java", src) == [
        ("module", "UserService", 1, 1),
        ("class", "UserService", 3, 5),
        *[("method", f"UserService.find{i}", 7 + 14 * i, 19 + 14 * i) for i in range(12)],
        ("class", "UserService.Cache", 175, 177),
    ]  # the class's closing brace (line 178) is no chunk of its own


JS = textwrap.dedent(
    """\
    'use strict';

    const express = require('express');

    /**
     * Users API.
     */
    class UserController {
      constructor(store) {
        this.store = store;
      }

      async show(req, res) {
        res.json(await this.store.get(req.params.id));
      }
    }

    // Health probe for the load balancer.
    const health = (req, res) => res.send('ok');

    function router(store) {
      const r = express.Router();
      r.get('/health', health);
      return r;
    }

    UserController.prototype.list = function list(req, res) {
      res.json([]);
    };

    module.exports = { router, UserController };
    """
)


def test_javascript_classes_functions_arrow_constants_and_prototype_methods() -> None:
    needs("javascript")
    assert chunks_of("src/routes.js", JS) == [
        ("module", "routes", 1, 3),
        ("class", "UserController", 5, 16),
        ("function", "health", 18, 19),
        ("function", "router", 21, 25),
        ("method", "UserController.list", 27, 29),
        ("module", "routes", 31, 31),
    ]


TS = textwrap.dedent(
    """\
    import { Injectable } from '@nestjs/common';

    /** A stored user. */
    export interface User {
      id: string;
      email: string;
    }

    export type UserId = User['id'];

    export enum Role {
      Admin = 'admin',
      Viewer = 'viewer',
    }

    @Injectable()
    export class UserService {
      constructor(private readonly repo: Repo) {}

      findById(id: UserId): Promise<User | undefined> {
        return this.repo.get(id);
      }
    }

    export default function createService(repo: Repo): UserService {
      return new UserService(repo);
    }
    """
)


def test_typescript_exports_types_and_decorated_class() -> None:
    needs("typescript")
    assert chunks_of("src/user-service.ts", TS) == [
        ("module", "user-service", 1, 1),
        ("type", "User", 3, 7),
        ("type", "UserId", 9, 9),
        ("type", "Role", 11, 14),
        ("class", "UserService", 16, 23),
        ("function", "createService", 25, 27),
    ]


def test_long_typescript_class_methods_keep_their_decorators_and_doc() -> None:
    needs("typescript")
    body = "".join(
        f"\n  /** Order {i}. */\n  @Get(':id')\n  async find{i}(id: string) {{\n"
        + "    id = id.trim();\n" * 8
        + "    return this.svc.get(id);\n  }\n"
        for i in range(10)
    )
    src = "export class OrdersController {\n  constructor(private readonly svc: Svc) {}\n" + body + "}\n"
    # each method: blank, doc (4 + 14i), decorator, signature, 9 body lines, "}" (16 + 14i)
    assert chunks_of("orders.controller.ts", src) == [
        ("class", "OrdersController", 1, 1),
        ("method", "OrdersController.constructor", 2, 2),
        *[("method", f"OrdersController.find{i}", 4 + 14 * i, 16 + 14 * i) for i in range(10)],
    ]


TSX = textwrap.dedent(
    """\
    import React from 'react';

    type Props = { label: string };

    export const Button = ({ label }: Props) => <button>{label}</button>;

    export function App() {
      return (
        <div className="app">
          <Button label="ok" />
        </div>
      );
    }
    """
)


def test_tsx_uses_the_tsx_grammar() -> None:
    needs("tsx")
    assert chunks_of("web/App.tsx", TSX) == [
        ("module", "App", 1, 1),
        ("type", "Props", 3, 3),
        ("function", "Button", 5, 5),
        ("function", "App", 7, 13),
    ]


K8S = textwrap.dedent(
    """\
    # API deployment and its service.
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: api
      labels: {app: api}
    spec:
      replicas: 2
    ---
    apiVersion: v1
    kind: Service
    metadata: {name: api-svc}
    spec:
      ports:
        - port: 80
    """
)


def test_kubernetes_manifest_is_one_chunk_per_object() -> None:
    needs("yaml")
    assert chunks_of("deploy/api.yaml", K8S) == [
        ("block", "Deployment/api", 1, 8),
        ("block", "Service/api-svc", 9, 15),
    ]


def test_yaml_long_entries_split_by_key_and_comments_move_to_what_they_document() -> None:
    needs("yaml")
    src = (
        "name: ci\non: [push]\n\n# Build and test on every push.\njobs:\n"
        "  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        + "      - run: make build\n" * 60
        + "  # Unit tests.\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        + "      - run: make test\n" * 60
    )
    assert chunks_of(".github/workflows/ci.yml", src) == [
        ("module", "ci", 1, 2),  # one-line entries stay module code
        ("block", "jobs", 4, 5),
        ("block", "jobs.build", 6, 68),
        ("block", "jobs.test", 69, 132),  # the parser hung "# Unit tests." on build
    ]


def test_yaml_sequence_items_are_named_by_their_name_key() -> None:
    needs("yaml")
    src = "- name: Install nginx\n  hosts: web\n  tasks:\n    - apt: name=nginx\n# Databases.\n- hosts: db\n  roles: [postgres]\n"
    assert chunks_of("site.yml", src) == [
        ("block", "Install nginx", 1, 4),
        ("block", "[1]", 5, 7),
    ]


TF = textwrap.dedent(
    """\
    terraform {
      required_version = ">= 1.5"
    }

    # Access logs for the public bucket.
    resource "aws_s3_bucket" "logs" {
      bucket = "acme-logs"
    }

    data "aws_iam_policy_document" "logs" {
      statement {
        actions = ["s3:PutObject"]
      }
    }

    module "vpc" {
      source = "./modules/vpc"
    }

    variable "region" {
      default = "eu-west-1"
    }

    output "bucket_arn" {
      value = aws_s3_bucket.logs.arn
    }

    locals {
      env = "prod"
    }
    """
)


def test_terraform_blocks_are_named_by_address() -> None:
    needs("terraform")
    assert chunks_of("infra/main.tf", TF) == [
        ("block", "terraform", 1, 3),
        ("block", "aws_s3_bucket.logs", 5, 8),
        ("block", "data.aws_iam_policy_document.logs", 10, 14),
        ("block", "module.vpc", 16, 18),
        ("block", "var.region", 20, 22),
        ("block", "output.bucket_arn", 24, 26),
        ("block", "locals", 28, 30),
    ]


def test_long_terraform_block_is_split_into_nested_blocks() -> None:
    needs("terraform")
    rules = "".join(f"  ingress {{\n    from_port = {p}\n    to_port   = {p}\n  }}\n" for p in range(40))
    src = 'resource "aws_security_group" "web" {\n  name = "web"\n' + rules + "}\n"
    got = chunks_of("sg.tf", src)
    assert got[0] == ("block", "aws_security_group.web", 1, 2)
    assert got[1:] == [("block", "aws_security_group.web.ingress", 3 + 4 * i, 6 + 4 * i) for i in range(40)]


SH = textwrap.dedent(
    """\
    #!/usr/bin/env bash
    # Deploy the API to a cluster.
    set -euo pipefail

    # Roll the deployment and wait for it.
    deploy() {
      kubectl rollout restart deploy/api
      kubectl rollout status deploy/api
    }

    function rollback {
      kubectl rollout undo deploy/api
    }

    deploy "$@" || rollback
    """
)


def test_shell_functions() -> None:
    needs("shell")
    assert chunks_of("bin/deploy.sh", SH) == [
        ("module", "deploy", 1, 3),
        ("function", "deploy", 5, 9),
        ("function", "rollback", 11, 13),
        ("module", "deploy", 15, 15),
    ]
    # a shebang is not the documentation of the function under it
    assert chunks_of("x.sh", "#!/bin/sh\nf() {\n  :\n}\n") == [("module", "x", 1, 1), ("function", "f", 2, 4)]


DOCKERFILE = textwrap.dedent(
    """\
    # syntax=docker/dockerfile:1
    ARG GO_VERSION=1.22

    # Build a static binary.
    FROM golang:${GO_VERSION} AS build
    WORKDIR /src
    COPY . .
    RUN CGO_ENABLED=0 go build -o /out/api \\
        ./cmd/api

    FROM gcr.io/distroless/static
    COPY --from=build /out/api /api
    ENTRYPOINT ["/api"]
    """
)


def test_dockerfile_stages() -> None:
    needs("dockerfile")
    assert chunks_of("Dockerfile", DOCKERFILE) == [
        ("module", "Dockerfile", 1, 2),
        ("block", "build", 4, 9),
        ("block", "gcr.io/distroless/static", 11, 13),
    ]


def test_a_local_syntax_error_still_gives_the_definitions() -> None:
    needs("go")
    src = "package api\n\nfunc A() {\n\tx := \n}\n\nfunc B() int {\n\treturn 1\n}\n"
    assert chunks_of("a.go", src) == [
        ("module", "a", 1, 1),
        ("function", "A", 3, 5),
        ("function", "B", 7, 9),
    ]


@pytest.mark.parametrize(
    ("path", "src"),
    [
        # an unclosed parameter list: recovery makes A swallow B, so the tree is not trusted
        ("b.go", "package api\n\nfunc A( {\n\nfunc B() {\n\treturn\n}\n"),
        ("e.tf", 'resource "a" "b" {\n  x = \n}\n\nresource "c" "d" {\n  y = 1\n}\n'),
        ("i.js", "}}}}\n)))\nfunction ok() {\n  return 1\n}\n<<<<<<< HEAD\n>>>>>>>\n"),
        (
            "chart/templates/cm.yaml",
            "{{- if .Values.on }}\nkind: ConfigMap\n  x: {{ .Values.x }}\n{{- end }}\n",
        ),
    ],
)
def test_mostly_broken_tree_falls_back_to_the_heuristic(path: str, src: str) -> None:
    needs(language_of(path))
    assert syntax.syntax_chunks(path, src, src.splitlines(), language_of(path)) is None
    assert chunk_text(path, src) == heuristic(path, src)


def test_missing_grammar_falls_back_to_the_heuristic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syntax, "_language", lambda grammar: None)
    monkeypatch.setattr(syntax, "_PARSERS", syntax._Parsers())
    for path, src in [("api/server.go", GO), ("infra/main.tf", TF), ("Dockerfile", DOCKERFILE)]:
        chunks = chunk_text(path, src)
        assert chunks == heuristic(path, src)
        assert {c.kind for c in chunks} == {"block"}
    # the existing heuristic still names the Go functions
    assert "NewServer" in [c.symbol for c in chunk_text("api/server.go", GO)]


def test_loader_answers_none_when_tree_sitter_or_a_grammar_cannot_be_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    load = syntax._language.__wrapped__  # the loader without its cache
    monkeypatch.setitem(sys.modules, "tree_sitter_go", None)  # None in sys.modules: ImportError
    assert load("go") is None
    monkeypatch.setitem(sys.modules, "tree_sitter", None)
    assert load("yaml") is None


def test_line_breaks_other_than_lf_fall_back_or_keep_exact_lines() -> None:
    needs("go")
    assert chunks_of("crlf/server.go", GO.replace("\n", "\r\n")) == chunks_of("crlf/server.go", GO)
    cr = GO.replace("\n", "\r")  # tree rows would not be splitlines() lines
    assert syntax.syntax_chunks("cr.go", cr, cr.splitlines(), "go") is None
    # Old Mac line ends: editors, grep -n and sed -n see one line, and so do the citations.
    assert [(c.start_line, c.end_line, c.text) for c in chunk_text("cr.go", cr)] == [(1, 1, cr[:-1])]


def test_languages_without_a_syntax_chunker_keep_the_heuristic() -> None:
    src = 'fn main() {\n    println!("hi");\n}\n\nfn other() {\n    let x = 1;\n}\n'
    assert syntax.syntax_chunks("main.rs", src, src.splitlines(), "rust") is None
    assert chunk_text("main.rs", src) == heuristic("main.rs", src)


def test_parsers_are_per_thread_and_give_the_same_chunks() -> None:
    needs("go")
    needs("java")
    files = [("api/server.go", GO), ("src/UserService.java", JAVA)] * 20
    expected = [chunk_text(p, s) for p, s in files]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(lambda f: chunk_text(*f), files)) == expected
    assert syntax._parser("go") is syntax._parser("go")  # created once per thread and grammar


def test_typescript_namespaces_class_expressions_arrow_fields_and_one_line_definitions() -> None:
    needs("typescript")
    handlers = "".join(
        f"\n  on{i} = (e: Event) => {{\n" + "    this.n += 1;\n" * 10 + "  };\n" for i in range(10)
    )
    src = (
        "namespace Billing {\n  export const rate = 1;\n}\n\n"
        "export const Store = class {\n  get() { return 1; }\n};\n\n"
        "class Widget {\n  n = 0;\n" + handlers + "}\n"
        "function a() {} function b() {}\n"
    )
    # each handler: blank, `onI = (e) => {` (12 + 13i), 10 body lines, `};` (23 + 13i)
    assert chunks_of("widget.ts", src) == [
        ("block", "Billing", 1, 3),
        ("class", "Store", 5, 7),
        ("class", "Widget", 9, 10),
        *[("method", f"Widget.on{i}", 12 + 13 * i, 23 + 13 * i) for i in range(10)],
        ("function", "a", 142, 142),  # `b` shares the line: one chunk, named by the first
    ]


def test_long_java_enum_keeps_its_constants_in_the_header_and_splits_methods() -> None:
    needs("java")
    methods = "".join(
        f"\n    int weight{i}() {{\n" + "        int w = 1;\n" * 10 + "        return w;\n    }\n"
        for i in range(9)
    )
    src = "enum Tier {\n    GOLD,\n    SILVER;\n" + methods + "}\n"
    # each method: blank, signature (5 + 14i), 11 body lines, "}" (17 + 14i)
    assert chunks_of("Tier.java", src) == [
        ("class", "Tier", 1, 3),
        *[("method", f"Tier.weight{i}", 5 + 14 * i, 17 + 14 * i) for i in range(9)],
    ]
