"""Word-level bash semantics the parser leaves to us: quoting, braces, globs, parameter expansions.

bashlex gives the words of a command with their expansions marked; what bash then does to a
word is evaluated here, exactly or not at all:

* :func:`unquote` removes quoting as bash does (``r\\m``, ``"rm"``, ``$'\\x72m'`` are ``rm``);
* :func:`brace_expand` performs brace expansion (``{-o,out}``, ``{1..3}``) so the classifier
  judges the words that will run; forms it cannot expand exactly return ``None``;
* :func:`parameter_risk` says why a ``${…}`` expansion cannot be trusted to be data: a
  substitution nested in it, indirection (``${!x}``), prompt expansion (``${x@P}``), or an
  array subscript or offset that bash evaluates arithmetically (and that runs ``$(…)``);
* :func:`strip_time_keyword` removes bash's ``time`` keyword, which the parser does not support
  and which changes nothing about what runs.

Must not run anything or import from ``cli/`` or ``agent/``.
"""

from __future__ import annotations

import re

MAX_BRACE_WORDS = 256

_ANSI = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def unquote(raw: str) -> str:
    """Remove shell quoting the way bash does.

    ``r\\m``, ``"rm"``, ``'r''m'`` and ``$'\\x72m'`` all give ``rm``.
    """
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\" and i + 1 < n:
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
        elif ch == "'":
            j = raw.find("'", i + 1)
            j = n if j < 0 else j
            out.append(raw[i + 1 : j])
            i = j + 1
        elif ch == "$" and raw[i + 1 : i + 2] == "'":
            i = _ansi_c(raw, i + 2, out)
        elif ch == '"' or (ch == "$" and raw[i + 1 : i + 2] == '"'):
            i += 1 if ch == '"' else 2
            while i < n and raw[i] != '"':
                if raw[i] == "\\" and i + 1 < n and raw[i + 1] in '"\\$`\n':
                    if raw[i + 1] != "\n":
                        out.append(raw[i + 1])
                    i += 2
                else:
                    out.append(raw[i])
                    i += 1
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _ansi_c(raw: str, i: int, out: list[str]) -> int:
    n = len(raw)
    while i < n and raw[i] != "'":
        if raw[i] == "\\" and i + 1 < n:
            c = raw[i + 1]
            if c == "x":
                digits = "".join(raw[i + 2 : i + 4])
                hexpart = "".join(d for d in digits if d in "0123456789abcdefABCDEF")
                if hexpart:
                    out.append(chr(int(hexpart, 16)))
                    i += 2 + len(hexpart)
                    continue
            if c in "01234567":
                octal = ""
                j = i + 1
                while j < n and len(octal) < 3 and raw[j] in "01234567":
                    octal += raw[j]
                    j += 1
                out.append(chr(int(octal, 8)))
                i = j
                continue
            out.append(_ANSI.get(c, "\\" + c))
            i += 2
        else:
            out.append(raw[i])
            i += 1
    return i + 1


def _unquoted_positions(raw: str) -> list[tuple[int, str]]:
    """``(index, char)`` of the characters of ``raw`` outside quotes, escapes and ``$…`` forms."""
    out: list[tuple[int, str]] = []
    i, n = 0, len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\":
            i += 2
        elif ch == "'":
            j = raw.find("'", i + 1)
            i = n if j < 0 else j + 1
        elif ch == '"':
            i += 1
            while i < n and raw[i] != '"':
                i += 2 if raw[i] == "\\" else 1
            i += 1
        elif ch == "$" and i + 1 < n and raw[i + 1] in "{([":
            i = _skip_group(raw, i + 1)
        elif ch == "`":
            j = raw.find("`", i + 1)
            i = n if j < 0 else j + 1
        else:
            out.append((i, ch))
            i += 1
    return out


def _skip_group(raw: str, i: int) -> int:
    """Index after the bracket group opening at ``raw[i]`` (``{``, ``(`` or ``[``), quotes respected."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack = [pairs[raw[i]]]
    i += 1
    n = len(raw)
    while i < n and stack:
        ch = raw[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            j = raw.find("'", i + 1)
            i = n if j < 0 else j + 1
            continue
        if ch in pairs:
            stack.append(pairs[ch])
        elif ch == stack[-1]:
            stack.pop()
        i += 1
    return i


def has_glob(raw: str) -> bool:
    """Whether ``raw`` has an unquoted glob or brace character (``*?[{``)."""
    return any(ch in "*?[{" for _, ch in _unquoted_positions(raw))


def leading_glob(raw: str) -> bool:
    """Whether ``raw`` starts with an unquoted ``*``, ``?`` or ``[``: its matches may start with ``-``."""
    return bool(raw) and raw[0] in "*?[" and has_glob(raw[:1])


_SEQ_NUM = re.compile(r"^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$")
_SEQ_CHR = re.compile(r"^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$")


def brace_expand(raw: str) -> list[str] | None:
    """The raw words bash's brace expansion makes of ``raw`` (``[raw]`` when there is none),
    or ``None`` when the result would exceed :data:`MAX_BRACE_WORDS` words."""
    out: list[str] = []
    pending = [raw]
    while pending:
        word = pending.pop(0)
        parts = _first_brace(word)
        if parts is None:
            if word or raw == "":
                out.append(word)
        else:
            pending[:0] = parts
        if len(out) + len(pending) > MAX_BRACE_WORDS:
            return None
    return out


def _first_brace(word: str) -> list[str] | None:
    """Expand the first brace expression of ``word``; ``None`` if it has none."""
    positions = _unquoted_positions(word)
    for k, (start, ch) in enumerate(positions):
        if ch != "{":
            continue
        depth = 0
        commas: list[int] = []
        for idx, c in positions[k:]:
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    inner = word[start + 1 : idx]
                    pre, post = word[:start], word[idx + 1 :]
                    if commas:
                        bounds = [start, *commas, idx]
                        return [
                            pre + word[a + 1 : b] + post for a, b in zip(bounds, bounds[1:], strict=False)
                        ]
                    seq = _sequence(inner)
                    if seq is not None:
                        return [pre + s + post for s in seq]
                    break
            elif c == "," and depth == 1:
                commas.append(idx)
    return None


def _sequence(inner: str) -> list[str] | None:
    m = _SEQ_NUM.match(inner)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        if abs(b - a) // step + 1 > MAX_BRACE_WORDS:
            return [str(a)] * (MAX_BRACE_WORDS + 1)
        width = max(len(m.group(1)), len(m.group(2))) if m.group(1).lstrip("-").startswith("0") else 0
        rng = range(a, b + (1 if b >= a else -1), step if b >= a else -step)
        return [str(x).zfill(width) if width else str(x) for x in rng]
    m = _SEQ_CHR.match(inner)
    if m:
        a, b = ord(m.group(1)), ord(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        rng = range(a, b + (1 if b >= a else -1), step if b >= a else -step)
        return [chr(x) for x in rng]
    return None


_SPECIAL = set("@*#?$!-0123456789")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SAFE_SUBSCRIPT = re.compile(r"^\s*(?:-?\d+|@|\*)\s*$")
_SAFE_OFFSET = re.compile(r"^[\s\d+-]*$")
_LIST_NAMES = re.compile(r"^![A-Za-z_][A-Za-z0-9_]*(?:[@*]|\[[@*]\])$")


def nested_commands(text: str) -> list[str]:
    """The command texts of ``$(…)`` and backquote substitutions inside ``text`` (outside single quotes)."""
    found: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
        elif ch == "'":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
        elif ch == "$" and text[i + 1 : i + 3] == "((":
            end = _skip_group(text, i + 1)
            found.extend(nested_commands(text[i + 3 : end - 2]))
            i = end
        elif ch in "$<>" and text[i + 1 : i + 2] == "(":
            end = _skip_group(text, i + 1)
            found.append(text[i + 2 : end - 1])
            i = end
        elif ch == "`":
            j = text.find("`", i + 1)
            j = n if j < 0 else j
            found.append(text[i + 1 : j])
            i = j + 1
        else:
            i += 1
    return found


def parameter_risk(value: str) -> str | None:
    """Why the parameter expansion ``${value}`` (or ``$value``) may run code or cannot be read
    as plain data, or ``None`` when it is a plain variable reference or a plain operation on one."""
    if not value:
        return None  # bashlex reports $'…' as an empty parameter
    if any(s in value for s in ("$(", "`", "$[", "<(", ">(")):
        return "a substitution nested in a parameter expansion runs when the word is expanded"
    if value[0] in _SPECIAL and len(value) == 1:
        return None
    if value.startswith("!"):
        if _LIST_NAMES.match(value):
            return None
        return (
            f"indirect expansion ${{{value}}} evaluates another variable's text (array subscripts in it run)"
        )
    body = value[1:] if value.startswith("#") and len(value) > 1 else value
    m = _NAME.match(body) or re.match(r"[0-9]+|[@*#?$!-]", body)
    if m is None:
        return f"parameter expansion ${{{value}}} this classifier cannot read"
    rest = body[m.end() :]
    if rest.startswith("["):
        close = rest.find("]")
        if close < 0 or not _SAFE_SUBSCRIPT.match(rest[1:close]):
            return f"array subscript in ${{{value}}} is evaluated arithmetically (substitutions in it run)"
        rest = rest[close + 1 :]
    if rest.startswith("@") and len(rest) == 2 and rest[1] == "P":
        return f"${{{value}}} expands the value as a prompt (command substitutions in it run)"
    substring = rest.startswith(":") and rest[1:2] not in ("-", "=", "?", "+")
    if substring and not _SAFE_OFFSET.match(rest[1:].replace(":", " ")):
        return f"substring offsets in ${{{value}}} are evaluated arithmetically"
    return None


_SEPARATORS = (";", "&", "|", "(", "{", "\n", "!")
_KEYWORD_STARTS = ("do", "then", "else", "elif")


def strip_time_keyword(text: str) -> str:
    """``text`` without bash's ``time [-p]`` keyword where it starts a pipeline.

    bashlex cannot parse the keyword; it only reports timings, so removing it changes nothing
    about what runs (a quoted or escaped ``time`` is a program, ``/usr/bin/time``, and stays).
    """
    positions = _unquoted_positions(text)
    plain = {i for i, _ in positions}
    cuts: list[tuple[int, int]] = []
    for i, _ch in positions:
        if not text.startswith("time", i):
            continue
        if not all(j in plain for j in range(i, i + 4)):
            continue
        end = i + 4
        if end < len(text) and not text[end].isspace():
            continue
        before = text[:i].rstrip()
        prev_word = before.split()[-1] if before.split() else ""
        if before and not before.endswith(_SEPARATORS) and prev_word not in _KEYWORD_STARTS:
            continue
        m = re.match(r"\s+(?:-p\s+)?(?:--\s+)?", text[end:])
        cuts.append((i, end + (m.end() if m else 0)))
    for start, stop in reversed(cuts):
        text = text[:start] + text[stop:]
    return text if text.strip() else "true"


_DBL_END = " \t\n;&|)"


def rewrite_conditionals(text: str) -> str:
    """``[[ … ]]`` (which bashlex cannot parse) as the plain command ``\\[\\[ … \\]\\]``, its
    operators escaped, so the words and substitutions in it are judged like any command's
    (``&&``/``||`` inside become ``-a``/``-o``). A ``[[`` inside a substitution is left alone."""
    positions = _unquoted_positions(text)
    plain = {i for i, _ in positions}
    spans: list[tuple[int, int]] = []
    for idx, ch in positions:
        if ch != "[" or not text.startswith("[[", idx) or idx + 1 not in plain:
            continue
        if spans and idx < spans[-1][1]:
            continue
        if idx + 2 < len(text) and not text[idx + 2].isspace():
            continue
        before = text[:idx].rstrip()
        prev_word = before.split()[-1] if before.split() else ""
        if (
            before
            and not before.endswith(_SEPARATORS)
            and prev_word not in (*_KEYWORD_STARTS, "if", "while", "until")
        ):
            continue
        end = next(
            (
                j
                for j, c2 in positions
                if j > idx + 2
                and c2 == "]"
                and text.startswith("]]", j)
                and j + 1 in plain
                and text[j - 1].isspace()
                and (j + 2 == len(text) or text[j + 2] in _DBL_END)
            ),
            None,
        )
        if end is not None:
            spans.append((idx, end))
    for start, end in reversed(spans):
        inner = text[start + 2 : end]
        out = list(inner)
        for k, c in sorted(_unquoted_positions(inner), reverse=True):
            if c in "&|" and inner[k + 1 : k + 2] == c:
                out[k : k + 2] = [" -a " if c == "&" else " -o ", ""]
            elif c in "&|<>()" and not (k > 0 and inner[k - 1] == c and c in "&|"):
                out[k] = "\\" + c
        text = text[:start] + "\\[\\[" + "".join(out) + "\\]\\]" + text[end + 2 :]
    return text


def preprocess(text: str) -> str:
    """The text bashlex is given: the ``time`` keyword removed and ``[[ … ]]`` made a command."""
    return rewrite_conditionals(strip_time_keyword(text))
