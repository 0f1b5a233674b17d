"""Anonymizer: replaces identifying entities with stable placeholders and removes secrets.

``Anonymizer(hmac_key, session_id).anonymize(text)`` runs the secret scrubber and the entity
recognizers over the *same* input, resolves overlaps, and rewrites the text in one pass:

* secrets always win: their spans become ``[REDACTED_SECRET]``, are never turned into
  placeholders and are never returned as entities (so they can never reach a vault);
* among entities the more specific wins (``PRIORITY`` in :mod:`.recognizers`): an e-mail beats the
  host inside it, a URL's host beats a bare-host match, an account id in an ARN beats a phone;
  on equal priority the longer span wins;
* placeholders already in the input (``<<TYPE_xxxxxxxx>>``) and ``[REDACTED_SECRET]`` are never
  masked again;
* with the optional NER path (:mod:`.ner`: ``PERSON``, ``ORG``, ``LOCATION``), a model's span
  only fills the gaps left by the above: it never overrides a secret, placeholder or pattern
  match, and the part of it outside such a match is still masked if it still looks like a name.

A placeholder is ``<<TYPE_tag>>`` where ``tag`` is the first 8 hex characters of
``HMAC-SHA256(hmac_key, session_id + "\\x1f" + TYPE + "\\x1f" + original)``: the same value in the
same session always gets the same placeholder, and another session gets a different one.

This module keeps no state between calls and stores nothing; the vault (which maps placeholders
back to originals) belongs to the privacy guard. It must not import from ``cli/`` or ``agent/``.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from devops_agent.errors import UserError
from devops_agent.privacy.names import cue_names, plausible
from devops_agent.privacy.ner import NerRecognizer
from devops_agent.privacy.recognizers import PLACEHOLDER_RX, PRIORITY, Candidate, Recognizers
from devops_agent.secrets.scrubber import REDACTED, LineIndex, SecretFinding, find_secrets, is_secret_file

_SECRET_PRIORITY = 1_000


class Entity(NamedTuple):
    """One masked value. ``start``/``end`` are offsets in the *input* text."""

    type: str
    original: str
    placeholder: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class AnonymizedText:
    """The rewritten text, the entities masked in it, and the secrets removed (kinds and spans only)."""

    text: str
    entities: list[Entity] = field(default_factory=list)
    secrets: list[SecretFinding] = field(default_factory=list)

    @property
    def mapping(self) -> dict[str, str]:
        """Placeholder → original, for the entities in this text (never secrets)."""
        return {e.placeholder: e.original for e in self.entities}


def placeholder_tag(hmac_key: bytes, session_id: str, entity_type: str, original: str) -> str:
    """The 8-hex-character tag of a placeholder; deterministic per (key, session, type, value)."""
    msg = f"{session_id}\x1f{entity_type}\x1f{original}".encode()
    return hmac.digest(hmac_key, msg, hashlib.sha256)[:4].hex()


def _beats(a: Candidate, b: Candidate) -> bool:
    return (a.priority, a.end - a.start) > (b.priority, b.end - b.start)


def resolve_overlaps(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Non-overlapping spans sorted by start; where spans overlap, higher priority, then longer, wins.

    One sweep in start order. Kept spans are disjoint, so a new candidate can only overlap a suffix
    of them; it replaces that suffix if it beats every span in it, and is dropped otherwise.
    """
    chosen: list[Candidate] = []
    for c in sorted(candidates, key=lambda c: (c.start, -c.priority, c.start - c.end)):
        i = len(chosen)
        while i > 0 and chosen[i - 1].end > c.start:
            if not _beats(c, chosen[i - 1]):
                break
            i -= 1
        else:
            del chosen[i:]
            chosen.append(c)
    return chosen


def fill_gaps(chosen: list[Candidate], extra: Sequence[Candidate], text: str) -> list[Candidate]:
    """Add ``extra`` (disjoint model spans) where ``chosen`` (disjoint, sorted) leaves room.

    A model span overlapping chosen spans is cut around them; each remaining piece, trimmed of
    spaces and punctuation, is kept if it still looks like a name (``user=Ann Lee``: the pattern
    takes ``Ann`` as USERNAME, the model's ``Ann Lee`` leaves ``Lee`` as PERSON).
    """
    if not extra:
        return chosen
    starts = [c.start for c in chosen]
    added: list[Candidate] = []
    for m in extra:
        i = max(0, bisect.bisect_right(starts, m.start) - 1)
        pos = m.start
        pieces: list[tuple[int, int]] = []
        while i < len(chosen) and chosen[i].start < m.end:
            c = chosen[i]
            if c.end > pos:
                if c.start > pos:
                    pieces.append((pos, c.start))
                pos = max(pos, c.end)
            i += 1
        if pos == m.start:
            added.append(m)  # no overlap: the model's span as it is
            continue
        if pos < m.end:
            pieces.append((pos, m.end))
        for s, e in pieces:
            while s < e and not text[s].isalnum():
                s += 1
            while e > s and not text[e - 1].isalnum():
                e -= 1
            if e > s and plausible(text[s:e]):
                added.append(m._replace(start=s, end=e))
    return sorted(chosen + added, key=lambda c: c.start)


class Anonymizer:
    """Masks entities with session-stable placeholders and cuts secrets out of text.

    ``sensitive_namespaces`` lists Kubernetes namespaces to mask (and turns on pod-name masking);
    ``keep_domains`` lists domains whose hosts stay readable (``localhost`` always does), and
    ``keep_public_hosts`` keeps well-known public endpoints (``PUBLIC_HOSTS``: github.com, pypi.org …);
    ``ner`` adds person names, organisations and places found by a local model (:mod:`.ner`;
    see :func:`devops_agent.privacy.ner.from_settings`); ``keep_entities`` lists entity types left
    readable (their matches are dropped before overlaps are resolved, so they hide nothing else;
    secrets cannot be kept); ``secret_files`` adds file-name globs to
    :data:`~devops_agent.secrets.scrubber.SECRET_FILE_NAMES`.
    """

    def __init__(
        self,
        hmac_key: bytes,
        session_id: str,
        *,
        sensitive_namespaces: Sequence[str] = (),
        keep_domains: Sequence[str] = (),
        keep_public_hosts: bool = True,
        mask_dates: bool = False,
        ner: NerRecognizer | None = None,
        keep_entities: Iterable[str] = (),
        secret_files: Sequence[str] = (),
    ) -> None:
        if not hmac_key:
            raise UserError(
                "the anonymizer needs a non-empty HMAC key", hint="generate one with os.urandom(32)"
            )
        self._key = hmac_key
        self._session = session_id
        self._recognizers = Recognizers(
            sensitive_namespaces, keep_domains, keep_public_hosts=keep_public_hosts, mask_dates=mask_dates
        )
        self._ner = ner
        self._keep = frozenset(keep_entities)
        unknown = self._keep - set(PRIORITY)
        if unknown:
            raise UserError(
                f"unknown entity types to keep: {', '.join(sorted(unknown))}",
                hint=f"known types: {', '.join(PRIORITY)}",
            )
        self._cache: dict[tuple[str, str], str] = {}
        self._secret_files = tuple(secret_files)
        # Every entity type kept and no model: only secrets are cut (the guard then calls scrub()).
        self._secrets_only = ner is None and self._keep >= set(PRIORITY)

    @property
    def secrets_only(self) -> bool:
        """Whether this anonymizer masks no entity at all (every type kept, no model): it only cuts
        secrets, exactly as :func:`~devops_agent.secrets.scrubber.scrub` does."""
        return self._secrets_only

    def holds_only_secrets(self, path: str) -> bool:
        """Whether the file at ``path`` is key material by its name (built-in names and the
        ``secret_files`` globs); its content is then redacted whole (``anonymize(..., secret_file=True)``)."""
        return is_secret_file(path, self._secret_files)

    def placeholder(self, entity_type: str, original: str) -> str:
        """The placeholder this session uses for ``original`` of ``entity_type``."""
        key = (entity_type, original)
        ph = self._cache.get(key)
        if ph is None:
            if len(self._cache) >= 100_000:
                self._cache.clear()  # bound memory on endless streams; recomputing is cheap
            ph = f"<<{entity_type}_{placeholder_tag(self._key, self._session, entity_type, original)}>>"
            self._cache[key] = ph
        return ph

    def anonymize(self, text: str, *, secret_file: bool = False) -> AnonymizedText:
        """Remove secrets and mask entities in ``text``; see the module docstring for the rules.

        ``secret_file``: the text is the content of a file whose name says it holds only key
        material (:func:`~devops_agent.secrets.scrubber.is_secret_file`): where no rule finds the
        secret, all of it is one (see :func:`~devops_agent.secrets.scrubber.find_secrets`).
        """
        if not text:
            return AnonymizedText(text)
        index = LineIndex(text)
        secrets = find_secrets(text, index, secret_file=secret_file)
        candidates: list[Candidate] = [Candidate("", f.start, f.end, _SECRET_PRIORITY) for f in secrets]
        if "<<" in text:
            candidates.extend(
                Candidate("", m.start(), m.end(), _SECRET_PRIORITY + 1) for m in PLACEHOLDER_RX.finditer(text)
            )
        if REDACTED in text:
            start = text.find(REDACTED)
            while start >= 0:
                candidates.append(Candidate("", start, start + len(REDACTED), _SECRET_PRIORITY + 1))
                start = text.find(REDACTED, start + 1)
        candidates.extend(self._recognizers.find(text, index))
        candidates.extend(cue_names(text, index))
        if self._keep:
            candidates = [c for c in candidates if c.type not in self._keep]
        out: list[str] = []
        entities: list[Entity] = []
        pos = 0
        cache = self._cache
        chosen = resolve_overlaps(candidates)
        if self._ner is not None:
            found = [c for c in self._ner.find(text) if c.type not in self._keep]
            chosen = fill_gaps(chosen, found, text)
        for c in chosen:
            out.append(text[pos : c.start])
            pos = c.end
            if c.priority == _SECRET_PRIORITY:
                out.append(REDACTED)
            elif c.type:
                original = text[c.start : c.end]
                ph = cache.get((c.type, original)) or self.placeholder(c.type, original)
                out.append(ph)
                entities.append(Entity(c.type, original, ph, c.start, c.end))
            else:
                out.append(text[c.start : c.end])  # a placeholder or marker already in the input
        out.append(text[pos:])
        return AnonymizedText("".join(out), entities, secrets)


def deanonymize(text: str, mapping: Mapping[str, str]) -> str:
    """Replace every known placeholder in ``text`` with its original; unknown ones stay as they are."""
    if "<<" not in text:
        return text
    return PLACEHOLDER_RX.sub(lambda m: mapping.get(m.group(), m.group()), text)
