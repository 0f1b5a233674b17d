"""Streaming log template mining: learn ``<*>`` templates from messages as they arrive.

Each message is masked first (:mod:`.masking`: numbers, ids, IPs, paths, host names become
``<*>``). Most messages repeat an already-seen shape and are resolved by one dict lookup. A new
masked text joins the most specific same-length template that covers it. Otherwise each
template differing from it in one constant position records the value seen there; the position
becomes ``<*>`` once it has ``variable_after`` distinct values (a user name shows many values,
an event word such as ``Started``/``Stopped`` few, so those stay apart), or as soon as two of
its values also fill a slot of another event (``session opened for user X`` and ``session
closed for user X``: a word that fills slots of two events is a thing named in them, a value;
an event word belongs to one event). Else the text starts a template of its own. Positions
where only a value's unit differs (``<*>B`` / ``<*>KB``) need no evidence. When a template
gains a wildcard, or is created with one, the templates it covers are merged into it and their
ids become aliases (:meth:`TemplateMiner.resolve`). The design and the measured accuracy are in
``docs/log-analysis.md``.

One configuration serves every log source; nothing is tuned per system. Memory is bounded: at
most ``max_templates`` templates (the least recently seen goes first), ``max_examples`` examples
and ``max_buckets`` time buckets each, and a capped lookup cache. Learnt templates persist as
JSON (:meth:`TemplateMiner.save` / :meth:`TemplateMiner.load`).

This module is pure apart from ``save``/``load``; it must not import from tools, policies, agent
or interfaces.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from devops_agent.analysis.masking import WILDCARD, Masker, is_measure, shape

__all__ = ["MinerConfig", "Template", "TemplateMatch", "TemplateMiner"]

_FORMAT = 1


@dataclass(frozen=True, slots=True)
class MinerConfig:
    """Settings of :class:`TemplateMiner`; the defaults are the benchmarked configuration.

    Attributes:
        variable_after: distinct values after which a position where otherwise identical
            messages differ becomes a variable.
        max_differences: constant positions in which a message may differ from a template and
            still count towards making those positions variables.
        min_constant_share: a template keeps at least this share of constant tokens.
        max_templates: templates kept; beyond it the least recently seen is dropped.
        max_examples: raw examples kept per template.
        bucket_seconds: width of the time buckets that count occurrences.
        max_buckets: time buckets kept per template (the oldest go first).
        max_cache: masked texts remembered for the fast path (cleared when full).
        max_token_cache: distinct tokens whose masking is remembered.
    """

    variable_after: int = 5
    max_differences: int = 1
    min_constant_share: float = 0.5
    max_templates: int = 10_000
    max_examples: int = 3
    bucket_seconds: int = 60
    max_buckets: int = 1440
    max_cache: int = 200_000
    max_token_cache: int = 50_000


class TemplateMatch(NamedTuple):
    """What :meth:`TemplateMiner.add` did with a message."""

    template_id: int
    template: str
    is_new: bool


@dataclass(slots=True)
class Template:
    """A learnt template with its occurrence statistics."""

    id: int
    template: str
    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    examples: list[str] = field(default_factory=list)
    buckets: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class _Cluster:
    id: int
    tokens: list[str]
    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    examples: list[str] = field(default_factory=list)
    buckets: dict[str, int] = field(default_factory=dict)
    tick: int = 0
    text: str = ""
    constants: int = 0
    # positions holding a value with a unit (``<*>KB``), which may differ only in the unit
    units: tuple[int, ...] = ()
    # position -> distinct values seen there by near-identical messages (capped)
    alternatives: dict[int, set[str]] = field(default_factory=dict)

    def refresh(self) -> None:
        """Recompute what is derived from the tokens, after they changed."""
        self.constants = _constants(self.tokens)
        self.text = " ".join(self.tokens)
        self.units = tuple(
            j for j, t in enumerate(self.tokens) if t.startswith(WILDCARD) and t != WILDCARD and is_measure(t)
        )


def _bucket_key(ts: datetime, width: int) -> str:
    epoch = datetime(1970, 1, 1, tzinfo=ts.tzinfo)
    seconds = (ts - epoch) // timedelta(seconds=1)
    return (epoch + timedelta(seconds=seconds - seconds % width)).isoformat()


def _token_covers(general: str, specific: str) -> bool:
    if general in (specific, WILDCARD):
        return True
    # ``user=<*>`` covers ``user=root``
    prefix = general[:-3]
    return general.endswith(WILDCARD) and specific.startswith(prefix) and len(specific) > len(prefix)


def _covers(general: list[str], specific: list[str]) -> bool:
    # a plain loop, not all(): this runs for every new template against its peers
    for g, s in zip(general, specific, strict=False):  # same length
        if g != s and g != WILDCARD and not (g.endswith(WILDCARD) and _token_covers(g, s)):
            return False
    return True


def _merge_token(a: str, b: str) -> str:
    """``<*>``, keeping a shared ``key=`` or ``name:`` prefix (``user=root`` + ``user=x`` -> ``user=<*>``)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    cut = max(a.rfind("=", 0, n), a.rfind(":", 0, n))
    return a[: cut + 1] + WILDCARD if cut >= 0 else WILDCARD


def _same_family(a: _Cluster, i: int, b: _Cluster, k: int) -> bool:
    """Whether two templates are one event but for slots ``i`` / ``k`` (``VM Started`` / ``VM Paused``)."""
    if i != k or len(a.tokens) != len(b.tokens):
        return False
    return a.tokens[:i] == b.tokens[:i] and a.tokens[i + 1 :] == b.tokens[i + 1 :]


def _constants(tokens: list[str]) -> int:
    return sum(t != WILDCARD for t in tokens)


class TemplateMiner:
    """Learns templates from a stream of messages (see the module docstring for the method)."""

    def __init__(self, config: MinerConfig | None = None) -> None:
        self.config = config or MinerConfig()
        self._clusters: dict[int, _Cluster] = {}
        self._by_length: dict[int, list[_Cluster]] = {}
        self._cache: dict[str, _Cluster] = {}  # masked text -> template
        # digits-zeroed message -> (template, positions of the words that keep a digit through
        # masking, those words): the fast path (see Masker.masked_words)
        self._shapes: dict[bytes, tuple[_Cluster, tuple[int, ...], tuple[str, ...]]] = {}
        self._aliases: dict[int, int] = {}
        self._next_id = 1
        self._tick = 0
        self._mask = Masker(self.config.max_token_cache)
        # value -> (template id, position) where near-identical messages differed by it
        self._slots: dict[str, set[tuple[int, int]]] = {}
        self._pending: list[tuple[int, int]] = []  # (template id, position) to make variable

    # -- learning -----------------------------------------------------------------------------

    def add(self, message: str, timestamp: datetime | None = None, raw: str | None = None) -> TemplateMatch:
        """Learn from one message and return the template it now belongs to.

        Args:
            message: the message part of a log line (header fields already removed).
            timestamp: when it was logged, for first/last seen and the time buckets.
            raw: the text to keep as an example (defaults to ``message``).
        """
        digits_shape = shape(message)
        entry = self._shapes.get(digits_shape)
        is_new = False
        if entry is not None and not entry[1] and entry[0].id in self._clusters:
            cluster = entry[0]  # the commonest case, inline
        else:
            found = None if entry is None else self._by_shape(message, digits_shape)
            cluster, is_new = (found, False) if found is not None else self._lookup(message, digits_shape)
        self._tick += 1
        cluster.tick = self._tick
        cluster.count += 1
        if len(cluster.examples) < self.config.max_examples:
            cluster.examples.append(raw if raw is not None else message)
        if timestamp is not None:
            self._stamp(cluster, timestamp)
        return TemplateMatch(cluster.id, cluster.text, is_new)

    def _by_shape(self, message: str, digits_shape: bytes) -> _Cluster | None:
        """The template of an earlier message of the same shape, if this one must mask alike."""
        entry = self._shapes.get(digits_shape)
        if entry is None:
            return None
        cluster, positions, words = entry
        if positions:
            split = message.split()
            if tuple(split[i] for i in positions) != words:
                return None
        if cluster.id not in self._clusters:
            # merged into another since: follow the alias rather than mask the message again
            current = self.resolve(cluster.id)
            if current is None:
                return None
            cluster = self._clusters[current]
            self._shapes[digits_shape] = (cluster, positions, words)
        return cluster

    def _lookup(self, message: str, digits_shape: bytes) -> tuple[_Cluster, bool]:
        key, kept = self._mask.masked_words(message)
        cluster = self._cache.get(key)
        is_new = False
        if cluster is not None and cluster.id not in self._clusters:
            current = self.resolve(cluster.id)
            cluster = None if current is None else self._clusters[current]
        if cluster is None:
            cluster, is_new = self._place(key)
            if len(self._cache) >= self.config.max_cache:
                self._cache.clear()
            self._cache[key] = cluster
        if kept is not None:
            if len(self._shapes) >= self.config.max_cache:
                self._shapes.clear()
            split = message.split() if kept else []
            self._shapes[digits_shape] = (cluster, kept, tuple(split[i] for i in kept))
        return cluster, is_new

    def _stamp(self, cluster: _Cluster, ts: datetime) -> None:
        if cluster.first_seen is None or ts < cluster.first_seen:
            cluster.first_seen = ts
        if cluster.last_seen is None or ts > cluster.last_seen:
            cluster.last_seen = ts
        bkey = _bucket_key(ts, self.config.bucket_seconds)
        buckets = cluster.buckets
        buckets[bkey] = buckets.get(bkey, 0) + 1
        if len(buckets) > self.config.max_buckets:
            del buckets[min(buckets)]

    def _find(self, tokens: list[str], learn: bool) -> _Cluster | None:
        """The most specific template covering ``tokens``; when learning, generalize one if due."""
        covering: _Cluster | None = None
        covering_constants = -1
        # (template, positions that need evidence, positions where only a value's unit differs)
        near: list[tuple[_Cluster, list[int], list[int]]] = []
        limit = self.config.max_differences
        no_units: list[int] = []  # shared, never appended to: most templates have no unit
        for cluster in self._by_length.get(len(tokens), ()):
            misses: list[int] = []
            units = no_units
            for j, (t, m) in enumerate(zip(cluster.tokens, tokens, strict=False)):  # same length
                if t in (m, WILDCARD):
                    continue
                if t.endswith(WILDCARD) and _token_covers(t, m):  # ``user=<*>`` covers ``user=root``
                    continue
                # ``<*>B`` / ``<*>KB``: human-readable sizes pick their unit by magnitude
                if cluster.units and j in cluster.units and is_measure(m):
                    units = [*units, j]
                    continue
                misses.append(j)
                if len(misses) > limit:
                    break
            if not misses and not units:
                constants = cluster.constants
                if constants > covering_constants:
                    covering, covering_constants = cluster, constants
            elif len(misses) <= limit:
                near.append((cluster, misses, units))
        if covering is not None or not learn:
            return covering
        need = self.config.variable_after
        for cluster, misses, units in near:
            ready = True
            for j in misses:
                values = cluster.alternatives.setdefault(j, {cluster.tokens[j]})
                if len(values) < need:
                    values.add(tokens[j])
                ready = ready and (len(values) >= need or self._shared(cluster, j, values))
            positions = misses + units
            if ready and self._may_generalize(cluster, len(positions)):
                self._generalize(cluster, positions, tokens)
                return cluster
        return None

    def _generalize(self, cluster: _Cluster, positions: list[int], tokens: list[str]) -> None:
        for j in positions:
            cluster.tokens[j] = _merge_token(cluster.tokens[j], tokens[j])
        cluster.refresh()
        self._absorb(cluster)

    def _shared(self, cluster: _Cluster, position: int, values: set[str]) -> bool:
        """Whether the values seen at ``position`` also fill a slot of another template.

        A word that fills the same slot of two different events (``session opened for user X``,
        ``session closed for user X``) names a thing the program was told about, a value; an
        event word (``VM Started``) belongs to one event. The other template's slot becomes a
        variable too.
        """
        if len(values) < 2:
            return False
        slot = (cluster.id, position)
        found = False
        for value in sorted(values):  # sorted: the same result whatever the hash seed
            seen = self._slots.setdefault(value, set())
            for other_id, k in sorted(seen):
                other = self._clusters.get(other_id)
                if other is None or other is cluster or _same_family(cluster, position, other, k):
                    continue
                if len(values & other.alternatives.get(k, set())) >= 2:
                    found = True
                    if not other.tokens[k].endswith(WILDCARD) and (other.id, k) not in self._pending:
                        self._pending.append((other.id, k))  # after this message is placed
            seen.add(slot)
        if len(self._slots) > self.config.max_cache:
            self._slots.clear()
        return found

    def _may_generalize(self, cluster: _Cluster, positions: int) -> bool:
        return (cluster.constants - positions) >= self.config.min_constant_share * len(cluster.tokens)

    def _place(self, key: str) -> tuple[_Cluster, bool]:
        tokens = key.split()
        cluster = self._find(tokens, learn=True)
        is_new = cluster is None
        if cluster is None:
            cluster = self._create(tokens)
        if self._pending:
            self._generalize_pending()
            current = self.resolve(cluster.id)  # the pending ones may have absorbed it
            if current is not None:
                cluster = self._clusters[current]
        return cluster, is_new

    def _generalize_pending(self) -> None:
        pending, self._pending = self._pending, []
        for template_id, k in pending:
            current = self.resolve(template_id)
            other = None if current is None else self._clusters[current]
            if other is None or other.tokens[k].endswith(WILDCARD) or not self._may_generalize(other, 1):
                continue
            example = list(other.tokens)
            example[k] = min(other.alternatives.get(k, set()) - {other.tokens[k]}, default=WILDCARD)
            self._generalize(other, [k], example)

    def _create(self, tokens: list[str]) -> _Cluster:
        if len(self._clusters) >= self.config.max_templates:
            self._evict()
        cluster = _Cluster(self._next_id, tokens)
        cluster.refresh()
        self._next_id += 1
        self._clusters[cluster.id] = cluster
        self._by_length.setdefault(len(tokens), []).append(cluster)
        if cluster.constants < len(tokens) and self._may_generalize(cluster, 0):
            # a value masked here (``user1``) makes the position variable for the templates
            # learnt before with a word there (``user support``): same event, whatever came
            # first; unless too little would be left constant (a lone ``<*>`` covers any word)
            self._absorb(cluster)
        return cluster

    def _absorb(self, into: _Cluster) -> None:
        """Merge into ``into`` the same-length templates it now covers."""
        peers = self._by_length[len(into.tokens)]
        tokens = into.tokens
        # a covered template has the same word at the first constant position: one comparison
        # rules out most peers before the full test
        j = next((i for i, t in enumerate(tokens) if not t.endswith(WILDCARD)), 0)
        anchor = tokens[j]
        covered = [c for c in peers if c.tokens[j] == anchor and c is not into and _covers(tokens, c.tokens)]
        for other in covered:
            peers.remove(other)
            del self._clusters[other.id]
            self._alias(other.id, into.id)
            into.count += other.count
            room = self.config.max_examples - len(into.examples)
            into.examples.extend(other.examples[: max(room, 0)])
            for bkey, n in other.buckets.items():
                into.buckets[bkey] = into.buckets.get(bkey, 0) + n
            while len(into.buckets) > self.config.max_buckets:
                del into.buckets[min(into.buckets)]
            for ts in (other.first_seen, other.last_seen):
                if ts is not None:
                    into.first_seen = ts if into.first_seen is None else min(into.first_seen, ts)
                    into.last_seen = ts if into.last_seen is None else max(into.last_seen, ts)

    def _alias(self, old: int, new: int) -> None:
        self._aliases[old] = new
        if len(self._aliases) > 4 * self.config.max_templates:  # forget the oldest merges
            for stale in list(self._aliases)[: len(self._aliases) // 4]:
                del self._aliases[stale]

    def _evict(self) -> None:
        oldest = min(self._clusters.values(), key=lambda c: c.tick)
        del self._clusters[oldest.id]
        self._by_length[len(oldest.tokens)].remove(oldest)
        self._aliases = {k: v for k, v in self._aliases.items() if v != oldest.id}

    # -- queries ------------------------------------------------------------------------------

    def resolve(self, template_id: int) -> int | None:
        """The current id of a template that may since have been merged into another."""
        seen = 0
        while template_id not in self._clusters:
            nxt = self._aliases.get(template_id)
            if nxt is None or seen > len(self._aliases):
                return None
            template_id, seen = nxt, seen + 1
        return template_id

    def match(self, message: str) -> int | None:
        """The id of the template the message belongs to, without learning from it."""
        cluster = self._by_shape(message, shape(message))
        if cluster is not None:
            return cluster.id
        key = self._mask(message)
        cluster = self._cache.get(key)
        if cluster is not None and cluster.id in self._clusters:
            return cluster.id
        found = self._find(key.split(), learn=False)
        return found.id if found is not None else None

    def template(self, template_id: int) -> str | None:
        """The template text of an id (following merges), or None if unknown or evicted."""
        current = self.resolve(template_id)
        return None if current is None else self._clusters[current].text

    def templates(self) -> list[Template]:
        """All templates, most frequent first (ties by id)."""
        out = [
            Template(
                id=c.id,
                template=" ".join(c.tokens),
                count=c.count,
                first_seen=c.first_seen,
                last_seen=c.last_seen,
                examples=list(c.examples),
                buckets=dict(sorted(c.buckets.items())),
            )
            for c in self._clusters.values()
        ]
        out.sort(key=lambda t: (-t.count, t.id))
        return out

    def __len__(self) -> int:
        return len(self._clusters)

    # -- persistence --------------------------------------------------------------------------

    def to_dict(self, redact: Callable[[str], str] | None = None) -> dict[str, Any]:
        """A JSON-compatible snapshot of the learnt state (templates, statistics, merges).

        ``redact`` rewrites each example (raw log text) before it goes into the snapshot, e.g.
        to cut out secrets before the state is written to disk.
        """
        keep = redact or (lambda text: text)
        return {
            "format": _FORMAT,
            "next_id": self._next_id,
            "aliases": {str(k): v for k, v in self._aliases.items()},
            "templates": [
                {
                    "id": c.id,
                    "tokens": c.tokens,
                    "count": c.count,
                    "first_seen": c.first_seen.isoformat() if c.first_seen else None,
                    "last_seen": c.last_seen.isoformat() if c.last_seen else None,
                    "examples": [keep(e) for e in c.examples],
                    "buckets": c.buckets,
                    "tick": c.tick,
                    "alternatives": {str(j): sorted(v) for j, v in sorted(c.alternatives.items())},
                }
                for c in sorted(self._clusters.values(), key=lambda c: c.id)
            ],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], config: MinerConfig | None = None) -> TemplateMiner:
        """Rebuild a miner from :meth:`to_dict` output."""
        if data.get("format") != _FORMAT:
            raise ValueError(f"unsupported template store format: {data.get('format')!r}")
        miner = cls(config)
        for item in data["templates"]:
            cluster = _Cluster(
                id=int(item["id"]),
                tokens=[str(t) for t in item["tokens"]],
                count=int(item["count"]),
                first_seen=datetime.fromisoformat(item["first_seen"]) if item["first_seen"] else None,
                last_seen=datetime.fromisoformat(item["last_seen"]) if item["last_seen"] else None,
                examples=[str(e) for e in item["examples"]],
                buckets={str(k): int(v) for k, v in item["buckets"].items()},
                tick=int(item.get("tick", 0)),
                alternatives={int(j): {str(x) for x in v} for j, v in item.get("alternatives", {}).items()},
            )
            cluster.refresh()
            miner._clusters[cluster.id] = cluster
            miner._by_length.setdefault(len(cluster.tokens), []).append(cluster)
        miner._aliases = {int(k): int(v) for k, v in data.get("aliases", {}).items()}
        miner._next_id = int(data["next_id"])
        miner._tick = max((c.tick for c in miner._clusters.values()), default=0)
        for cluster in miner._clusters.values():  # the values seen in each slot, for _shared
            for j, values in cluster.alternatives.items():
                if len(values) >= 2:
                    for value in values:
                        miner._slots.setdefault(value, set()).add((cluster.id, j))
        return miner

    def save(self, path: str | Path, redact: Callable[[str], str] | None = None) -> None:
        """Write the learnt state to ``path`` as JSON (atomically, via a temporary file).

        ``redact``: see :meth:`to_dict`. Raises ``OSError`` when the file cannot be written; the
        temporary file is removed then.
        """
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        try:
            tmp.write_text(json.dumps(self.to_dict(redact)), encoding="utf-8")
            tmp.replace(target)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: str | Path, config: MinerConfig | None = None) -> TemplateMiner:
        """Read a miner saved with :meth:`save`."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")), config)
