"""Syntax-aware chunks from tree-sitter for Go, JS/TS, Java, YAML, Terraform, shell and Dockerfile.

Optional (``knowledge-syntax`` extra): :func:`syntax_chunks` answers ``None`` when tree-sitter or
the language's grammar wheel is missing, when the text's line breaks are not plain ``\\n`` (tree
rows would not be our line numbers) or when the tree is mostly ERROR, and the caller then uses its
heuristic. Chunks have the shape the Python ``ast`` chunker gives:

* ``function`` / ``method`` (``Server.Handle``, ``UserService.findById``), ``class`` (JS/TS
  classes; Java classes, interfaces, enums, records), ``type`` (Go types, TS interfaces, type
  aliases, enums), ``block`` (Terraform blocks as addresses, ``aws_s3_bucket.logs``; YAML
  multi-line top-level entries, ``Kind/name`` per Kubernetes document; Dockerfile stages);
* the comment block directly above a definition (no blank line between) is part of it;
* code between definitions becomes ``module`` chunks; a definition over ``MAX_LINES`` that has
  members (methods, nested blocks or keys) is cut into its header and one chunk per member,
  otherwise into windows.

This module is pure like :mod:`chunking`: text in, chunks out.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from devops_agent.knowledge.chunking import MAX_LINES, Chunk, _windows

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Parser

# language -> (grammar module, function returning the language capsule)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "go": ("tree_sitter_go", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "java": ("tree_sitter_java", "language"),
    "yaml": ("tree_sitter_yaml", "language"),
    "terraform": ("tree_sitter_hcl", "language"),
    "shell": ("tree_sitter_bash", "language"),
    "dockerfile": ("tree_sitter_containerfile", "language"),
}
_SLASH = re.compile(r"(?://|/\*|\*/|\*(?:\s|$))")
_HASH = re.compile(r"#")
_COMMENT = {
    "go": _SLASH,
    "javascript": _SLASH,
    "typescript": _SLASH,
    "java": _SLASH,
    "yaml": _HASH,
    "shell": _HASH,
    "dockerfile": _HASH,
    "terraform": re.compile(rf"{_HASH.pattern}|{_SLASH.pattern}"),
}
# Lines that carry no content of their own: a gap made only of these is not a chunk.
_FILLER = frozenset({"", "}", "};", "},", ")", ");", "})", "});", "]", "---", "..."})


@functools.cache
def _language(grammar: str) -> Language | None:
    """The grammar's language, or None when tree-sitter or the grammar wheel is not installed."""
    module, attr = _GRAMMARS[grammar]
    try:
        from tree_sitter import Language

        return Language(getattr(importlib.import_module(module), attr)())
    except Exception:  # missing, or an ABI this tree-sitter cannot load: no syntax chunking
        return None


class _Parsers(threading.local):
    """One parser per grammar and thread (a parser holds parse state and is not shared)."""

    def __init__(self) -> None:
        self.by_grammar: dict[str, Parser | None] = {}


_PARSERS = _Parsers()


def _parser(grammar: str) -> Parser | None:
    cache = _PARSERS.by_grammar
    if grammar not in cache:
        lang = _language(grammar)
        if lang is None:
            cache[grammar] = None
        else:
            from tree_sitter import Parser

            cache[grammar] = Parser(lang)
    return cache[grammar]


def syntax_chunks(path: str, text: str, lines: list[str], lang: str) -> list[Chunk] | None:
    """Chunks of ``text`` (split into ``lines``) along its syntax tree, or None for the fallback."""
    extract = _EXTRACT.get(lang)
    if extract is None:
        return None
    if not lines:
        return []
    grammar = "tsx" if lang == "typescript" and path.lower().endswith(".tsx") else lang
    parser = _parser(grammar)
    if parser is None or text.count("\n") + (not text.endswith("\n")) != len(lines):
        return None
    root = parser.parse(text.encode("utf-8", "replace")).root_node
    if root.is_error:
        return None
    try:
        defs = extract(root)
        if root.has_error and len(_damaged(root, defs)) * 2 > len(lines):
            return None
        return _Assembler(path, lines, lang).chunks(defs)
    except (AttributeError, IndexError, ValueError, RecursionError):  # a tree shape not foreseen
        return None


def _damaged(root: Node, defs: list[_Def]) -> set[int]:
    """Lines in ERROR nodes near the root or in definitions that contain an error: where error
    recovery may have merged definitions or dropped them (an unclosed brace swallows the rest)."""
    bad = {line for d in defs if d.broken for line in range(d.start, d.end + 1)}
    level = [root]
    for _ in range(4):  # an unparsable region surfaces near the root; deeper ones are local
        below = []
        for n in level:
            for c in n.children:
                if c.is_error:
                    bad.update(range(_first(c), _last(c) + 1))
                elif c.has_error:
                    below.append(c)
        level = below
    return bad


# --- definitions ---------------------------------------------------------------------------------


@dataclass
class _Def:
    """A definition's lines; ``head`` is its node's first line (``start`` may add comments above)."""

    start: int
    end: int
    kind: str
    symbol: str
    members: Callable[[], list[_Def]] | None = None
    head: int = 0
    broken: bool = False  # its node contains an ERROR or MISSING node

    def __post_init__(self) -> None:
        self.head = self.head or self.start


def _first(node: Node) -> int:
    return node.start_point.row + 1


def _last(node: Node) -> int:
    """1-based last line; a node that ends at column 0 ended with the previous line's newline."""
    row, col = node.end_point
    return max(node.start_point.row + 1, row + (1 if col else 0))


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _name(node: Node) -> str:
    return _text(node.child_by_field_name("name")).strip("\"'")


def _span(node: Node, kind: str, symbol: str, members: Callable[[], list[_Def]] | None = None) -> _Def:
    return _Def(_first(node), _last(node), kind, symbol, members, broken=node.has_error)


def _go(root: Node) -> list[_Def]:
    out = []
    for n in root.named_children:
        if n.type == "function_declaration":
            out.append(_span(n, "function", _name(n)))
        elif n.type == "method_declaration":
            recv = n.child_by_field_name("receiver")
            param = recv.named_children[0] if recv is not None and recv.named_children else None
            m = re.search(r"[A-Za-z_]\w*", _text(param.child_by_field_name("type") if param else None))
            out.append(_span(n, "method", f"{m.group(0)}.{_name(n)}" if m else _name(n)))
        elif n.type == "type_declaration":
            names = [_name(s) for s in n.named_children if s.type in {"type_spec", "type_alias"}]
            out.append(_span(n, "type", ", ".join(names)))
    return out


_JS_FUNCTIONS = frozenset(
    {"function_declaration", "generator_function_declaration", "function_expression", "function"}
)
_JS_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_JS_CLASSES = frozenset({"class_declaration", "abstract_class_declaration", "class"})
_TS_TYPES = frozenset({"interface_declaration", "type_alias_declaration", "enum_declaration"})


def _js(root: Node) -> list[_Def]:
    return [d for n in root.named_children if (d := _js_top(n)) is not None]


def _js_top(n: Node) -> _Def | None:
    decl: Node | None = n
    if n.type == "export_statement":  # the range is the statement's: decorators, `export`
        decl = n.child_by_field_name("declaration") or n.child_by_field_name("value")
    elif n.type == "expression_statement" and n.named_child_count == 1:
        decl = n.named_children[0]  # `namespace X {}` parses as an expression statement
    if decl is None:
        return None
    if decl.type in _JS_FUNCTIONS:
        return _span(n, "function", _name(decl) or "default")
    if decl.type in _JS_CLASSES:
        name = _name(decl) or "default"
        return _span(n, "class", name, functools.partial(_js_members, decl, name))
    if decl.type in _TS_TYPES:
        return _span(n, "type", _name(decl))
    if decl.type == "internal_module":
        return _span(n, "block", _name(decl))
    right = decl.child_by_field_name("right")
    if decl.type == "assignment_expression" and right is not None and right.type in _JS_VALUES:
        target = _text(decl.child_by_field_name("left"))  # `Router.prototype.handle = function`
        method = ".prototype." in target
        return _span(n, "method" if method else "function", target.replace(".prototype.", "."))
    if decl.type in {"lexical_declaration", "variable_declaration"}:
        for v in decl.named_children:  # `const handler = async () => {}`, `const A = class {}`
            value = v.child_by_field_name("value")
            if value is not None and value.type in _JS_VALUES:
                return _span(n, "function", _name(v))
            if value is not None and value.type == "class":
                return _span(n, "class", _name(v), functools.partial(_js_members, value, _name(v)))
    return None


def _js_members(cls: Node, name: str) -> list[_Def]:
    body = cls.child_by_field_name("body")
    out: list[_Def] = []
    decorated = 0  # first line of decorators seen before the next member (TS keeps them apart)
    for c in body.named_children if body is not None else []:
        if c.type == "decorator":
            decorated = decorated or _first(c)
            continue
        value = c.child_by_field_name("value")
        if c.type == "method_definition" or (
            c.type in {"public_field_definition", "field_definition"}
            and value is not None
            and value.type in _JS_VALUES
        ):
            member = _name(c) or _text(c.child_by_field_name("property"))
            d = _span(c, "method", f"{name}.{member}")
            d.start = d.head = decorated or d.start
            out.append(d)
        if c.type != "comment":
            decorated = 0
    return out


_JAVA_TYPES = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
_JAVA_METHODS = frozenset(
    {"method_declaration", "constructor_declaration", "compact_constructor_declaration"}
)


def _java(root: Node) -> list[_Def]:
    return [_java_type(n, "") for n in root.named_children if n.type in _JAVA_TYPES]


def _java_type(n: Node, outer: str) -> _Def:
    symbol = f"{outer}.{_name(n)}" if outer else _name(n)
    return _span(n, "class", symbol, functools.partial(_java_members, n, symbol))


def _java_members(n: Node, symbol: str) -> list[_Def]:
    body = n.child_by_field_name("body")
    children = list(body.named_children) if body is not None else []
    for c in list(children):  # an enum's methods follow its constants
        if c.type == "enum_body_declarations":
            children.extend(c.named_children)
    out = []
    for c in children:
        if c.type in _JAVA_METHODS:
            out.append(_span(c, "method", f"{symbol}.{_name(c)}"))
        elif c.type in _JAVA_TYPES:
            out.append(_java_type(c, symbol))
    return out


def _yaml(root: Node) -> list[_Def]:
    out: list[_Def] = []
    for doc in root.named_children:
        if doc.type != "document":
            continue
        body = next((c for c in doc.named_children if c.type in {"block_node", "flow_node"}), None)
        value = _yaml_value(body)
        if value is None:
            continue
        pairs = _yaml_pairs(value)
        kind = _yaml_scalar(pairs.get("kind"))
        if kind and "apiVersion" in pairs:  # a Kubernetes object: one chunk per document
            meta = _yaml_value(pairs.get("metadata"))
            name = _yaml_scalar(_yaml_pairs(meta).get("name")) if meta is not None else ""
            symbol = f"{kind}/{name}" if name else kind
            out.append(_span(doc, "block", symbol, functools.partial(_yaml_entries, value, symbol)))
        else:
            out.extend(_yaml_entries(value, ""))
    return out


def _yaml_value(node: Node | None) -> Node | None:
    """The mapping, sequence or scalar inside ``block_node`` / ``flow_node`` wrappers."""
    while node is not None and node.type in {"block_node", "flow_node"}:
        node = next((c for c in node.named_children if c.type not in {"anchor", "tag"}), None)
    return node


def _yaml_scalar(node: Node | None) -> str:
    value = _yaml_value(node)
    return _text(value).strip("\"'") if value is not None and value.type.endswith("scalar") else ""


def _yaml_pairs(mapping: Node) -> dict[str, Node]:
    """Key -> value node of a block or flow mapping."""
    out: dict[str, Node] = {}
    for p in mapping.named_children:
        if p.type in {"block_mapping_pair", "flow_pair"}:
            value = p.child_by_field_name("value")
            if value is not None:
                out.setdefault(_text(p.child_by_field_name("key")).strip("\"'"), value)
    return out


def _yaml_entries(container: Node, prefix: str) -> list[_Def]:
    """Multi-line entries of a mapping (``prefix.key``) or sequence (its ``name``, else ``[i]``);
    one-line entries stay in module chunks, like statements between Python functions."""
    out = []
    for i, c in enumerate(container.named_children):
        if _first(c) == _last(c):
            continue
        if c.type == "block_mapping_pair":
            symbol = _text(c.child_by_field_name("key")).strip("\"'")
            value = _yaml_value(c.child_by_field_name("value"))
        elif c.type == "block_sequence_item":
            value = _yaml_value(c.named_children[0] if c.named_children else None)
            named = _yaml_scalar(_yaml_pairs(value).get("name")) if value is not None else ""
            symbol = named or f"[{i}]"
        else:
            continue
        symbol = f"{prefix}.{symbol}" if prefix and not symbol.startswith("[") else prefix + symbol
        members = (
            functools.partial(_yaml_entries, value, symbol)
            if value is not None and value.type in {"block_mapping", "block_sequence"}
            else None
        )
        out.append(_span(c, "block", symbol, members))
    return out


# Terraform's own address prefixes; `resource "aws_s3_bucket" "logs"` is plain `aws_s3_bucket.logs`.
_TF_PREFIX = {"data": "data", "module": "module", "variable": "var", "output": "output"}


def _terraform(root: Node) -> list[_Def]:
    body = next((c for c in root.named_children if c.type == "body"), None)
    return _hcl_blocks(body, "") if body is not None else []


def _hcl_block(n: Node, outer: str) -> _Def:
    parts: list[str] = []
    body = None
    for c in n.named_children:
        if c.type in {"identifier", "string_lit"} and body is None:
            parts.append(_text(c).strip('"'))
        elif c.type == "body":
            body = c
    if outer:
        symbol = ".".join([outer, *parts])
    elif parts[:1] == ["resource"] and len(parts) > 1:
        symbol = ".".join(parts[1:])
    else:
        symbol = ".".join([_TF_PREFIX.get(parts[0], parts[0]), *parts[1:]]) if parts else ""
    members = functools.partial(_hcl_blocks, body, symbol) if body is not None else None
    return _span(n, "block", symbol, members)


def _hcl_blocks(body: Node, outer: str) -> list[_Def]:
    return [_hcl_block(c, outer) for c in body.named_children if c.type == "block"]


def _shell(root: Node) -> list[_Def]:
    return [_span(n, "function", _name(n)) for n in root.named_children if n.type == "function_definition"]


def _dockerfile(root: Node) -> list[_Def]:
    """One ``block`` per build stage, from its FROM to the stage's last instruction."""
    steps = [n for n in root.named_children if n.type != "comment"]
    froms = [i for i, n in enumerate(steps) if n.type == "from_instruction"]
    out = []
    for i, j in itertools.pairwise([*froms, len(steps)]):
        stage = steps[i:j]
        image = next((c for c in stage[0].named_children if c.type == "image_spec"), None)
        alias = _text(stage[0].child_by_field_name("as"))
        name = alias or _text(image.child_by_field_name("name") if image is not None else None)
        broken = any(n.has_error for n in stage)
        out.append(_Def(_first(stage[0]), _last(stage[-1]), "block", name, broken=broken))
    return out


_EXTRACT: dict[str, Callable[[Node], list[_Def]]] = {
    "go": _go,
    "javascript": _js,
    "typescript": _js,
    "java": _java,
    "yaml": _yaml,
    "terraform": _terraform,
    "shell": _shell,
    "dockerfile": _dockerfile,
}


# --- definitions to chunks -----------------------------------------------------------------------


class _Assembler:
    def __init__(self, path: str, lines: list[str], lang: str) -> None:
        self.path = path
        self.lines = lines
        self.lang = lang
        self.comment = _COMMENT[lang]
        self.stem = PurePosixPath(path).stem

    def chunks(self, defs: list[_Def]) -> list[Chunk]:
        out: list[Chunk] = []
        cursor = 1
        for d in self.settle(defs, 0, len(self.lines)):
            out.extend(self.gap(cursor, d.start - 1, "module", self.stem))
            out.extend(self.emit(d))
            cursor = d.end + 1
        out.extend(self.gap(cursor, len(self.lines), "module", self.stem))
        return out

    def settle(self, defs: list[_Def], floor: int, ceiling: int) -> list[_Def]:
        """Sorted, non-overlapping siblings within ``floor < line <= ceiling``, each with the
        comment block above it; a comment the parser hung on the previous sibling's end (YAML)
        moves to the definition it documents."""
        out: list[_Def] = []
        for d in sorted(defs, key=lambda d: d.head):
            d.end = min(d.end, ceiling)
            if out and d.head <= out[-1].end:  # two definitions on one line: keep them together
                out[-1].end = max(out[-1].end, d.end)
                continue
            d.start = self.lead(d.start, out[-1].head if out else floor)
            if out and out[-1].end >= d.start:
                out[-1].end = self.trim_end(out[-1].head, d.start - 1)
            out.append(d)
        return out

    def lead(self, start: int, floor: int) -> int:
        """First line of the comment lines directly above ``start``, staying below ``floor``."""
        line = self.lines[start - 1]
        indent = len(line) - len(line.lstrip())
        while start - 1 > floor:
            above = self.lines[start - 2]
            body = above.lstrip()
            if (
                not self.comment.match(body)
                or len(above) - len(body) > indent + 1  # deeper: inside the previous value
                or (start == 2 and body.startswith("#!"))
            ):
                break
            start -= 1
        return start

    def trim_end(self, start: int, end: int) -> int:
        while end > start and not self.lines[end - 1].strip():
            end -= 1
        return end

    def gap(self, start: int, end: int, kind: str, symbol: str) -> list[Chunk]:
        """Lines between definitions, blank edges trimmed; nothing when they hold no content."""
        while start <= end and not self.lines[start - 1].strip():
            start += 1
        end = self.trim_end(start, end)
        if start > end or all(line.strip() in _FILLER for line in self.lines[start - 1 : end]):
            return []
        return _windows(self.path, self.lines, start, end, kind, symbol, self.lang)

    def emit(self, d: _Def) -> list[Chunk]:
        """One definition: whole when short, else its header, members and the code between."""
        members = (
            self.settle(d.members(), d.head, d.end)
            if d.members is not None and d.end - d.start + 1 > MAX_LINES
            else []
        )
        if not members:
            return _windows(self.path, self.lines, d.start, d.end, d.kind, d.symbol, self.lang)
        out: list[Chunk] = []
        cursor = d.start
        for m in members:
            out.extend(self.gap(cursor, m.start - 1, d.kind if cursor == d.start else "module", d.symbol))
            out.extend(self.emit(m))
            cursor = m.end + 1
        out.extend(self.gap(cursor, d.end, d.kind, d.symbol))
        return out
