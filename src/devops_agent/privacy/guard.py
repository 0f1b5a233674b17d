"""Wiring of the privacy guard: what enters the model's context is masked, tools get real values.

* :class:`PrivacyGuard` masks text and nested values (anonymize + scrub, entities remembered in
  the vault under a namespace) and restores placeholders from the vault.
* :class:`PrivacyToolset` wraps the tools: arguments are de-anonymized deeply just before the
  call (namespaces ``tool_args → user_in → tool_out → final_out``) and the output is masked
  (``tool_out``) before it goes back; :func:`strip_unknown_args` drops argument keys the tool's
  schema does not have, before validation.
* :meth:`PrivacyGuard.process_history` is a pydantic-ai history processor: before every model
  request it masks user prompts, tool returns and retry prompts (errors, MCP results) — the net
  under everything, including what bypasses the wrapper — and the responses already in the history
  (an offline report or a run with the guard off answered earlier in the session). It also relearns
  the values behind the history's placeholders, so a value masked in an earlier run stays masked
  wherever it turns up in this one.
* :class:`MaskedDefinitionsToolset` masks the descriptions in the tool definitions of toolsets we
  did not write (an MCP server describes its tools in its own words).
* The final answer is restored for the user with :meth:`PrivacyGuard.restore`; secrets were
  redacted irreversibly and never come back.

It sits between the tool middleware and the safety guard, so the safety guard classifies,
audits and shows approvers the real command, and everything on its way to the model is masked.
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import ipaddress
import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import structlog
from pydantic_ai import WrapperToolset
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponsePart,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.config import Settings
from devops_agent.privacy.anonymizer import Anonymizer
from devops_agent.privacy.ner import from_settings as ner_from_settings
from devops_agent.privacy.recognizers import PLACEHOLDER_RX, PRIORITY
from devops_agent.privacy.vault import LOOKUP_ORDER, Vault, VaultUnavailable
from devops_agent.secrets.scrubber import REDACTED, find_secrets, redact_spans, scrub
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult

log = structlog.get_logger(__name__)

LOCAL_PROVIDERS = ("scripted", "ollama", "vllm", "llamacpp", "test")
# Providers that run on the user's machine by default but can be pointed at a server elsewhere.
_SELF_HOSTED = ("ollama", "vllm", "llamacpp")
# A value the session has masked is masked wherever it turns up again (a tool echoing an argument,
# the same user name in a line no recognizer understands). Values shorter than this are left to the
# recognizers, and all-letter values must stand as a word; generic account names identify nobody.
MIN_KNOWN_CHARS = 4
_GENERIC_NAMES = frozenset(
    {"root", "admin", "administrator", "user", "guest", "test", "nobody", "daemon", "ubuntu", "debian",
     "centos", "postgres", "mysql", "redis", "www-data", "ec2-user", "default", "jenkins", "git"}
)  # fmt: skip
# Where a known value may match: all-letter values as a word (``alice``, not in ``malice``); any
# other value whatever surrounds it (``<<HOST_…>>.conf`` sent by the model reaches the tool as
# ``db1.example.conf``, and the tool's echo must not hand the name back), except that a value
# starting or ending with a digit does not match inside a longer number (``10.0.0.1`` in ``10.0.0.12``).
_WORD_EDGES = (r"(?<![^\W_])", r"(?![^\W_])")
_MARKERS = PLACEHOLDER_RX.pattern + "|" + re.escape(REDACTED)  # kept whole by mask_known
# Keys of a tool's output that name the file a piece of text comes from, and keys that hold its text.
_FILE_KEYS = frozenset({"path", "file"})
_CONTENT_KEYS = frozenset({"text", "line", "lines", "before", "after", "content", "patch", "diff"})
# Keys under which a list's dicts each hold one line of a text (``files_read``'s ``{"n", "text"}``).
_LINE_KEYS = ("text", "line")
# Keys of a JSON schema whose values are prose or sample values, not names a validator checks.
_SCHEMA_TEXT_KEYS = frozenset({"description", "title", "default", "examples"})


def _line_key(items: list[Any] | tuple[Any, ...]) -> str | None:
    """``""`` when ``items`` are lines as strings, the key when they are dicts each holding one line
    under the same :data:`_LINE_KEYS` key, else None (a list of anything else is masked item by item)."""
    if len(items) < 2:
        return None
    if all(isinstance(v, str) for v in items):
        return ""
    if isinstance(items[0], dict):
        for key in _LINE_KEYS:  # dicts naming their file (grep matches) are pieces of several texts
            if all(
                isinstance(v, dict) and isinstance(v.get(key), str) and not _FILE_KEYS & v.keys()
                for v in items
            ):
                return key
    return None


RESTORE_FAILED_NOTE = "\n\n_(Identifiers are shown masked: the privacy vault could not be read.)_"
UNSAVED_NOTE = "\n\n_(Some identifiers are shown masked: the privacy vault could not store them.)_"


def enabled_for(settings: Settings) -> bool:
    """Privacy is on when configured so, or (``auto``) when a model — the loop's, or the fast or
    smart one of routing — is hosted by someone else: each of them reads what the run gathered."""
    mode = settings.privacy.enabled
    if mode != "auto":
        return mode == "on"
    names = [n for n in (settings.model.name, settings.model.fast, settings.model.smart) if n]
    return any(_hosted(n, settings) for n in names)


def _hosted(name: str, settings: Settings) -> bool:
    provider = name.split(":", 1)[0]
    # model.base_url is the endpoint of model.name's provider; another provider uses its default.
    same = provider == (settings.model.name or "").split(":", 1)[0]
    base = settings.model.base_url if same else None
    if provider in _SELF_HOSTED and base:  # an Ollama or vLLM server somewhere else is hosted
        return not is_local_url(base)
    if provider in LOCAL_PROVIDERS:
        return False
    return not (provider == "openai-compatible" and base is not None and is_local_url(base))


def is_local_url(url: str) -> bool:
    """Whether ``url``'s host is this machine: ``localhost``, a ``*.localhost`` name or a loopback
    address. Judged on the parsed host, not on a substring (``https://localhost.example.com`` and
    ``https://api.example.com/?h=127.0.0.1`` are hosted)."""
    try:
        host = (urlsplit(url if "://" in url else f"http://{url}").hostname or "").lower()
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def anonymizer_for(settings: Settings, session_id: str, key: bytes) -> Anonymizer:
    """The anonymizer the ``privacy`` settings describe (what a session's guard and
    ``devops-agent privacy mask`` use)."""
    p = settings.privacy
    return Anonymizer(
        key,
        session_id,
        sensitive_namespaces=tuple(p.sensitive_namespaces),
        keep_domains=tuple(p.keep_domains),
        keep_public_hosts=p.keep_public_hosts,
        mask_dates=p.mask_dates,
        ner=ner_from_settings(p),
        keep_entities=p.keep_entities,
        secret_files=tuple(p.secret_files),
    )


@dataclass(repr=False)
class PrivacyGuard:
    anonymizer: Anonymizer
    vault: Vault
    restore_failed: bool = False
    # Masked messages by id; held, so that a freed one's id cannot be reused by an unmasked message.
    _seen: dict[int, ModelMessage] = field(default_factory=dict)
    _known: dict[str, str] = field(default_factory=dict)  # lower-cased original -> placeholder
    _anywhere: set[str] = field(default_factory=set)  # known values matched without a digit guard
    _known_rx: re.Pattern[str] | None = None
    _history_learned: bool = False

    def __repr__(self) -> str:
        # Never the originals it has learnt (they would reach logs and tracebacks), and cheap:
        # pydantic-ai formats a history processor's str() before every model request, and the
        # generated repr walked every masked message of the run (about 1 ms a tool step).
        kind = "secrets only" if self.anonymizer.secrets_only else "full"
        return f"<PrivacyGuard {kind} session={self.vault.session_id}>"

    @classmethod
    def for_session(cls, settings: Settings, store: Store, session_id: str, key: bytes) -> PrivacyGuard:
        return cls(anonymizer_for(settings, session_id, key), Vault(store, session_id))

    @classmethod
    def secrets_only(cls, settings: Settings, store: Store, session_id: str) -> PrivacyGuard:
        """A guard that masks no entity and only cuts secrets out: what runs when the guard is off
        and ``privacy.scrub_secrets`` is on. No placeholder is made, so the vault stays empty."""
        anonymizer = Anonymizer(
            b"secrets-only",
            session_id,
            keep_entities=PRIORITY,
            secret_files=tuple(settings.privacy.secret_files),
        )
        return cls(anonymizer, Vault(store, session_id))

    # -- masking ------------------------------------------------------------------------------

    def mask(self, text: str, namespace: str, *, secret_file: bool = False) -> str:
        """Anonymize and scrub ``text``, and replace the values this session has already masked
        wherever they turn up (see :meth:`mask_known`)."""
        if self.anonymizer.secrets_only:
            return scrub(text, secret_file=secret_file).text
        return self.mask_known(self._anonymize(text, namespace, secret_file=secret_file))

    def _anonymize(self, text: str, namespace: str, *, secret_file: bool = False) -> str:
        result = self.anonymizer.anonymize(text, secret_file=secret_file)
        self.vault.remember(namespace, result.entities)
        self.learn((e.original, e.placeholder) for e in result.entities)
        return result.text

    def learn(self, pairs: Iterable[tuple[str, str]], *, anywhere: bool = False) -> None:
        """Remember ``(original, placeholder)`` pairs for :meth:`mask_known`; with ``anywhere``
        (values restored for a tool: the model composed text around their placeholders) they are
        masked even inside a longer number (``<<IP_…>>9`` echoed as ``10.0.0.19``)."""
        for original, placeholder in pairs:
            low = original.lower()
            if len(low) < MIN_KNOWN_CHARS or low in _GENERIC_NAMES:
                continue
            if low not in self._known:
                self._known[low] = placeholder
                self._known_rx = None
            if anywhere and not low.isalpha() and low not in self._anywhere:
                self._anywhere.add(low)
                self._known_rx = None

    def mask_known(self, text: str) -> str:
        """Replace every value this session has masked (or restored for a tool) by its placeholder,
        in any case, outside the placeholders and redaction markers already in ``text``.

        The recognizers find ``user=jdoe42`` but not ``Accepted publickey for jdoe42``, nor a tool
        echoing the real value of a placeholder the model sent it (``no lines match 'zzjdoe42'``,
        ``cat: /etc/db1.example.conf: No such file``); once a value is known, it does not reach the
        model in any of those forms. Values with a digit or a symbol match whatever surrounds them
        (inside ``zzjdoe42``, ``db1.example.conf``, ``db1.example.10.0.0.1``) but not inside a longer
        number, all-letter ones as a word (see ``_WORD_EDGES``).
        """
        if not self._known or not text:
            return text
        if self._known_rx is None:
            # placeholders and redaction markers first, so that they are matched whole and kept
            pattern = f"(?P<marker>{_MARKERS})|" + _known_pattern(self._known, self._anywhere)
            self._known_rx = re.compile(pattern, re.IGNORECASE)
        return self._known_rx.sub(
            lambda m: m.group() if m.group("marker") else self._known[m.group().lower()], text
        )

    def mask_lines(self, texts: list[str], namespace: str, *, secret_file: bool = False) -> list[str]:
        """Mask consecutive lines of one text (a file read line by line, a grep match's context):
        secrets are looked for in the lines joined, so a PEM block split over lines is found, and
        in one pass (one scan for 10,000 lines, not 10,000 scans); entities line by line."""
        joined = "\n".join(texts)
        bounds: list[tuple[int, int]] = []
        pos = 0
        for t in texts:
            bounds.append((pos, pos + len(t)))
            pos += len(t) + 1
        cuts: list[list[tuple[int, int]]] = [[] for _ in texts]
        for f in find_secrets(joined, secret_file=secret_file):
            i = bisect.bisect_right(bounds, (f.start, len(joined) + 1)) - 1
            while 0 <= i < len(texts) and bounds[i][0] < f.end:
                lo, hi = max(f.start, bounds[i][0]), min(f.end, bounds[i][1])
                if hi > lo:
                    cuts[i].append((lo - bounds[i][0], hi - bounds[i][0]))
                i += 1
        scrubbed = [redact_spans(t, c) if c else t for t, c in zip(texts, cuts, strict=True)]
        if self.anonymizer.secrets_only:
            return scrubbed
        # One anonymize call for all the lines (per-call costs dominate on short lines: ~15x), unless
        # an entity ran across a line break (an address block); then line by line. Redaction
        # markers are kept as they are; known values are looked for once, in all the lines.
        masked = self._anonymize("\n".join(scrubbed), namespace).split("\n")
        if len(masked) != len(scrubbed):
            masked = [self._anonymize(t, namespace) for t in scrubbed]
        return self.mask_known("\n".join(masked)).split("\n") if self._known else masked

    def mask_value(self, value: Any, namespace: str, *, secret_file: bool = False) -> Any:
        """Mask every string inside ``value`` (dicts, lists, tuples), dict keys too (a result keyed
        by file path names hosts and addresses as much as its values do; a key that is an identifier
        is a field name and stays).

        A dict whose ``path`` or ``file`` names a file of key material (``id_rsa``, ``*.key``: see
        :meth:`Anonymizer.holds_only_secrets`) is a piece of that file: the strings under its
        content keys (:data:`_CONTENT_KEYS`) are redacted whole, its other fields masked as usual.
        A list of lines of one text goes to :meth:`mask_lines`.
        """
        if isinstance(value, str):
            return self.mask(value, namespace, secret_file=secret_file)
        if isinstance(value, BinaryContent):
            return self._mask_binary(value, namespace, secret_file=secret_file)
        if isinstance(value, dict):
            named = [v for k in _FILE_KEYS if isinstance(v := value.get(k), str)]
            whole = any(self.anonymizer.holds_only_secrets(n) for n in named)
            return {
                self._mask_key(k, namespace): self.mask_value(
                    v, namespace, secret_file=k in _CONTENT_KEYS if whole else secret_file
                )
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            masked = self._mask_items(value, namespace, secret_file=secret_file)
            return tuple(masked) if isinstance(value, tuple) else masked  # a tuple stays one (``loc``)
        return value

    def _mask_items(
        self, value: list[Any] | tuple[Any, ...], namespace: str, *, secret_file: bool
    ) -> list[Any]:
        key = _line_key(value)
        if key == "":  # lines as strings
            return self.mask_lines(list(value), namespace, secret_file=secret_file)
        if key is not None:  # lines as {"n": 1, "text": "..."}
            texts = self.mask_lines([v[key] for v in value], namespace, secret_file=secret_file)
            return [
                {
                    k: t if k == key else self.mask_value(x, namespace, secret_file=secret_file)
                    for k, x in v.items()
                }
                for v, t in zip(value, texts, strict=True)
            ]
        return [self.mask_value(v, namespace, secret_file=secret_file) for v in value]

    def _mask_key(self, key: Any, namespace: str) -> Any:
        if not isinstance(key, str):
            return key
        if key.isidentifier():  # a field name, unless it is a value the session masked (``{"jdoe42": 3}``)
            return self.mask_known(key)
        return self.mask(key, namespace)

    def _mask_binary(self, content: BinaryContent, namespace: str, *, secret_file: bool) -> Any:
        """Text sent as bytes (an MCP resource blob) is masked as text: base64 would carry it past
        every recognizer to a model that reads base64. Other bytes (images, PDFs) cannot be masked:
        the full guard withholds them, a secrets-only guard passes them on."""
        kind = content.media_type.split("/", 1)[0]
        text = None
        if kind not in ("image", "audio", "video"):
            try:
                text = content.data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
        if text is not None and "\x00" not in text:
            return self.mask(text, namespace, secret_file=secret_file)
        if self.anonymizer.secrets_only:
            return content
        return (
            f"[{content.media_type} content of {len(content.data)} bytes withheld: "
            "the privacy guard cannot mask what is not text]"
        )

    def mask_result(self, result: ToolResult) -> ToolResult:
        """A tool's result masked for the model (namespace ``tool_out``). Its ``raw`` output rides
        along unmasked: it goes to the session store for the user (secrets scrubbed there), never
        to the model. The result's own field names are kept as they are."""
        dumped = result.model_dump(mode="json")
        masked = ToolResult.model_validate({k: self.mask_value(v, "tool_out") for k, v in dumped.items()})
        return masked.with_raw(result.raw)

    def mask_tool_def(self, tool_def: ToolDefinition) -> ToolDefinition:
        """``tool_def`` with its description and the prose and sample values of its parameter schema
        masked (namespace ``tool_out``). Parameter names, types and enums stay: validators check them."""
        return dataclasses.replace(
            tool_def,
            description=self.mask(tool_def.description, "tool_out") if tool_def.description else None,
            parameters_json_schema=self._mask_schema(tool_def.parameters_json_schema),
        )

    def _mask_schema(self, schema: Any) -> Any:
        if isinstance(schema, dict):
            return {
                k: self.mask_value(v, "tool_out") if k in _SCHEMA_TEXT_KEYS else self._mask_schema(v)
                for k, v in schema.items()
            }
        if isinstance(schema, list):
            return [self._mask_schema(v) for v in schema]
        return schema

    # -- restoring ------------------------------------------------------------------------------

    def restore(self, text: str, namespaces: tuple[str, ...] = LOOKUP_ORDER) -> str:
        """Placeholders back to originals; on a vault failure the text stays masked (fail closed)."""
        found = PLACEHOLDER_RX.findall(text)
        if not found:
            return text
        try:
            mapping = self.vault.lookup(sorted(set(found)), namespaces)
        except VaultUnavailable:
            self.restore_failed = True
            return text
        self.learn(((original, placeholder) for placeholder, original in mapping.items()), anywhere=True)
        return PLACEHOLDER_RX.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)

    def restore_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.restore(value)
        if isinstance(value, dict):
            return {k: self.restore_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.restore_value(v) for v in value]
        return value

    def final_output(self, text: str, *, restore: bool) -> str:
        """What the user is shown: restored where policy allows, with a note if restoring failed."""
        if not restore:
            return text
        restored = self.restore(text, LOOKUP_ORDER)
        if self.restore_failed:
            return restored + RESTORE_FAILED_NOTE
        if self.vault.write_failed and PLACEHOLDER_RX.search(restored):  # never stored: not restorable
            return restored + UNSAVED_NOTE
        return restored

    # -- history ----------------------------------------------------------------------------------

    async def process_history_async(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """:meth:`process_history` for pydantic-ai: in the event loop when the messages not yet
        masked are small (pydantic-ai runs a plain function in a worker thread, and that hop cost
        more than the masking: about 1 ms of every tool step), in a worker thread when they are
        large, so that masking a big tool output does not hold up other sessions' events."""
        fresh = sum(_text_size(m) for m in messages if self._seen.get(id(m)) is not m)
        if fresh <= INLINE_MASK_CHARS and self._history_learned:
            return self.process_history(messages)
        return await asyncio.to_thread(self.process_history, messages)

    def process_history(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """Mask every part that carries outside text, once per message.

        Responses are masked too: the history may hold an answer no guarded model wrote (an offline
        runbook's report, a run with the guard off), and the hosted model's own text comes back
        unchanged (its placeholders are kept)."""
        if not self._history_learned:
            self._history_learned = True
            self._learn_history(messages)
        out: list[ModelMessage] = []
        for message in messages:
            if self._seen.get(id(message)) is not message:
                if isinstance(message, ModelRequest):
                    message = dataclasses.replace(message, parts=[self._mask_part(p) for p in message.parts])
                else:
                    message = dataclasses.replace(
                        message, parts=[self._mask_response_part(p) for p in message.parts]
                    )
                self._seen[id(message)] = message
            out.append(message)
        return out

    def _learn_history(self, messages: list[ModelMessage]) -> None:
        """Learn the originals of the placeholders in a stored history (see :meth:`mask_known`): the
        guard is made per run, and the session's earlier runs were stored masked."""
        if self.anonymizer.secrets_only or not messages:
            return
        found = set(PLACEHOLDER_RX.findall(ModelMessagesTypeAdapter.dump_json(messages).decode()))
        if not found:
            return
        try:
            mapping = self.vault.lookup(sorted(found))
        except VaultUnavailable as exc:  # recognizers still mask; restoring will fail closed
            log.warning("vault_read_failed", error=exc.message)
            return
        self.learn((original, placeholder) for placeholder, original in mapping.items())

    def _mask_part(self, part: ModelRequestPart) -> ModelRequestPart:
        if isinstance(part, UserPromptPart):
            if isinstance(part.content, str):
                return dataclasses.replace(part, content=self.mask(part.content, "user_in"))
            # multi-part prompts (an API caller's text and attachments): text and bytes masked,
            # other items (an image URL) returned by mask_value as they are
            return dataclasses.replace(part, content=[self.mask_value(c, "user_in") for c in part.content])
        if isinstance(part, ToolReturnPart):
            return dataclasses.replace(part, content=self.mask_value(part.content, "tool_out"))
        if isinstance(part, RetryPromptPart | RetryFeedbackPart):
            # validation errors echo the rejected input (ErrorDetails' "input"), which may be a secret
            return dataclasses.replace(part, content=self.mask_value(part.content, "tool_out"))
        return part

    def _mask_response_part(self, part: ModelResponsePart) -> ModelResponsePart:
        if isinstance(part, TextPart | ThinkingPart):
            return dataclasses.replace(part, content=self.mask(part.content, "final_out"))
        if isinstance(part, ToolCallPart) and part.args:
            args = part.args
            if isinstance(args, str):
                try:
                    return dataclasses.replace(
                        part, args=json.dumps(self.mask_value(json.loads(args), "final_out"))
                    )
                except json.JSONDecodeError:
                    return dataclasses.replace(part, args=self.mask(args, "final_out"))
            return dataclasses.replace(part, args=self.mask_value(args, "final_out"))
        return part


# Characters of new message text masked in the event loop rather than in a worker thread.
INLINE_MASK_CHARS = 32_768


def _text_size(message: ModelMessage) -> int:
    """About how many characters of text ``message`` holds (what masking it would scan)."""
    size = 0
    for part in message.parts:
        content = getattr(part, "content", None) or getattr(part, "args", None)
        if isinstance(content, str):
            size += len(content)
        elif isinstance(content, dict | list):  # a tool's JSON (repr of framework objects is slow)
            size += len(json.dumps(content, default=str))
        elif isinstance(content, BinaryContent):
            size += len(content.data)
    return size


def _known_pattern(values: Iterable[str], anywhere: Collection[str] = ()) -> str:
    """One alternation matching every known value with its edges (see ``_WORD_EDGES``); values in
    ``anywhere`` have no digit guard."""
    words: list[str] = []
    groups: dict[tuple[bool, bool], list[str]] = {}
    for v in values:
        if v.isalpha():
            words.append(v)
        elif v in anywhere:
            groups.setdefault((False, False), []).append(v)
        else:
            groups.setdefault((v[0].isdigit(), v[-1].isdigit()), []).append(v)
    parts = [f"{_WORD_EDGES[0]}(?:{trie_pattern(words)}){_WORD_EDGES[1]}"] if words else []
    for (digit_first, digit_last), group in sorted(groups.items()):
        before, after = ("(?<![0-9])" if digit_first else ""), ("(?![0-9])" if digit_last else "")
        parts.append(f"{before}(?:{trie_pattern(group)}){after}")
    return "|".join(parts)


def trie_pattern(words: Iterable[str]) -> str:
    """One regex for many literal ``words``, factored by common prefix (a trie), so that matching
    costs about the same for 10 or 10,000 words; at each point the longer word is tried first."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}  # the end of a word

    def build(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:  # a word ends here, a longer one may go on: try the longer one first
            body = (body if len(branches) == 1 and len(body) == 1 else f"(?:{body})") + "?"
        return body

    return build(root)


def strip_unknown_args(
    ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
) -> Any:
    """``before_tool_validate`` hook: drop argument keys the tool's schema does not declare.

    A model can smuggle data into keys no tool reads; they are removed before validation (which
    would otherwise bounce the whole call back to the model). A tool without parameters declares
    none, so every key goes, unless its schema takes any (``additionalProperties``).
    """
    schema = tool_def.parameters_json_schema or {}
    properties = schema.get("properties")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return args  # malformed: let validation report it to the model
    takes_any = not properties and schema.get("additionalProperties")
    if isinstance(args, dict) and isinstance(properties, dict) and not takes_any:
        return {k: v for k, v in args.items() if k in properties}
    return args


@dataclass
class MaskedDefinitionsToolset(WrapperToolset[Any]):
    """The wrapped tools with their definitions masked (:meth:`PrivacyGuard.mask_tool_def`).

    For toolsets whose descriptions we did not write (an MCP server's may name its hosts and
    owners); our own tools' docstrings are static text, and their examples (``OPS-123``) stay."""

    guard: PrivacyGuard | None = None
    _masked: dict[str, ToolDefinition] = field(default_factory=dict)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        assert self.guard is not None
        tools = await super().get_tools(ctx)
        out: dict[str, ToolsetTool[Any]] = {}
        for name, tool in tools.items():
            seen = json.dumps(
                [tool.tool_def.description, tool.tool_def.parameters_json_schema], sort_keys=True, default=str
            )
            key = f"{name}\x1f{seen}"
            if key not in self._masked:
                self._masked[key] = self.guard.mask_tool_def(tool.tool_def)
            out[name] = dataclasses.replace(tool, tool_def=self._masked[key])
        return out
