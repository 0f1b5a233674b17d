"""Prose entities: postal addresses, ages and dates of birth (every date with ``mask_dates``),
with the countries, regions and nationalities of :mod:`.places`.

The patterns are for text people write (tickets, chat, notes); each scan runs only on the lines
that hold one of its keywords, so machine text pays for a keyword lookup, not a regex. Split out of
:mod:`.recognizers`, which turns these spans into prioritised candidates. This module must not
import from ``cli/`` or ``agent/`` and must not log matched values.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from devops_agent.privacy.places import ends_in_region, ends_with_region, find_nationalities, find_places
from devops_agent.secrets.scrubber import LineIndex, index_keywords


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Street-type words of English and the main European languages. A street line needs a house
# number *and* one of these, so "3 Node Close" or "Node 55" in a log is no address.
_LETTER = r"[^\W\d_]"
_AWORD = _LETTER + r"+(?:['’.-]" + _LETTER + r"+)*\.?"  # Lloyd-Jones, d'Orsay, Cánovas, St.
_CWORD = (
    r"(?!(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Room|Box)\b)[A-ZÀ-ÖØ-ÞĀ-ſΑ-ΩЀ-Я]"
    + _LETTER
    + r"*(?:['’.-]"
    + _LETTER
    + r"+)*\.?"
)  # capitalised
_PARTICLE = (
    r"(?:de|del|della|dei|degli|di|da|do|dos|das|du|des|la|le|les|los|las|el|van|von|der|den|y|e|of|the|d'"
    + _LETTER
    + r"+)"
)
# Types written after the name: "12 Larkspur Road", "407 Millbrook Avenue", "12 Main St."
_STREET_AFTER = (
    r"(?:(?i:street|road|avenue|boulevard|lane|drive|court|terrace|highway|parkway|crescent|"
    r"square|plaza|alley|gardens|grove|mews|trail|circle|place|way)\b|"
    r"(?:St|Rd|Ave|Av|Blvd|Ln|Dr|Ct|Pl|Sq|Hwy|Pkwy|Cres|Ter|Cir|Trl)\b\.?)"
)
# Types written before the name: "Rue des Lilas", "Via Roma", "ul. Polna", "Avenida Paulista".
_STREET_BEFORE = (
    r"(?:(?i:rue|avenue|boulevard|chemin|allée|impasse|quai|route|via|viale|piazza|piazzale|corso|"
    r"largo|calle|avenida|paseo|plaza|camino|carrer|rua|rúa|travessa|praça|aleja|ulica|trg|"
    r"náměstí|náměstí|πλατεία|οδός)|ul\.|al\.|Av\.|Avda\.|Bd\.?)"
)
# Types glued to the name (Hauptstrasse, Lindengasse, Storgatan, Skovvej, Koulutie) or a
# separate word after it (Petőfi Sándor u., Pärna tee, Kant Str.).
_STREET_GLUED = "|".join(
    f"(?<={w})"
    for w in _words(
        """strasse straße gasse weg allee platz damm straat laan gracht plein steeg gata gatan
        vägen väg gränd vej gade veien vegen veg katu kuja tie vegur braut utca ulica"""
    )
)
_STREET_WORD_AFTER = r"(?:Str\.|Straße|Strasse|Gasse|Weg|Allee|Platz|u\.|út|útja|utca|tér|tee|tn\.)"
_HOUSE = r"\d{1,6}[A-Za-z]?"
_ADDRESS_RX = re.compile(
    # number first: "12 Larkspur Road", "8 St Anne's Road", "21 avenue des Tilleuls"
    r"(?<![\w.,:/=@#-])" + _HOUSE + r",?[ ](?:"
    r"(?:" + _AWORD + r"[ ]){1,4}?" + _STREET_AFTER + r"(?:[ ](?:North|South|East|West|[NSEW]|[NS][EW])\b)?"
    r"|"
    + _STREET_BEFORE
    + r"[ ](?:(?:"
    + _PARTICLE
    + r"|"
    + _CWORD
    + r")[ ]){0,3}"
    + _CWORD
    + r"(?:[ ]\d{1,5}[A-Za-z]?\b)?)"
    # name first: "Via Mazzini 40", "Lindengasse 7", "Petőfi Sándor u. 3."
    r"|(?<![\w.-])(?:" + _STREET_BEFORE + r"[ ](?:(?:" + _PARTICLE + r"|" + _AWORD + r")[ ]){0,4}"
    r"|(?:" + _CWORD + r"[ ]){0,2}(?>" + _LETTER + r"+)(?:" + _STREET_GLUED + r")[ ]"
    r"|(?:" + _CWORD + r"[ ]){1,3}" + _STREET_WORD_AFTER + r"[ ])"
    r"\d{1,5}[A-Za-z]?\b"
    # a name and a number followed by an apartment or suite: "Ekvägen 12\n Apt. 4"
    r"|(?<![\w.-])(?:"
    + _CWORD
    + r"[ ]){1,3}\d{1,5}[A-Za-z]?(?=,?[ \t]*\n?[ \t]*(?:Apt\.?|Apartment|Suite)[ ]\d)"
    # P.O. boxes and US military addresses
    r"|\b(?:P\.[ ]?O\.|PO|Post[ ]Office)[ ]Box[ ]\d{1,6}\b"
    r"|\b(?:PSC|CMR|Unit)[ ]\d{1,5},?[ ]Box[ ]\d{1,5}\b(?:\s{1,3}(?:APO|FPO|DPO)[ ]A[AEP][ ]\d{5}\b)?"
    r"|\b(?:APO|FPO|DPO)[ ]A[AEP][ ]\d{5}\b"
)
# A unit after the street: ``Apt. 4``, ``SUITE 12``, capitalised or in capitals, also after a house
# number's full stop (``Kossuth Lajos utca 7. Suite 4``) but not across a sentence's (``…
# Street. Room 5 is free``); in lower case (``unit``, ``room``, ``floor`` are ordinary words) only
# after a street written all in lower case.
_UNIT = r"(?:(?<=\d)\.)?,?[ \t]*\n?[ \t]*(?:{})[ ]?\d{{1,5}}[A-Za-z]?\b"
_UNIT_WORDS = r"Apt\.?|Apartment|Suite|Ste\.?|Unit|Flat|Floor|Fl\.|Room|Rm\.?"
_UNIT_RX = re.compile(_UNIT.format(_UNIT_WORDS + "|" + _UNIT_WORDS.upper() + "|(?i:apt\\.?|suite)|#"))
_LOWER_UNIT_RX = re.compile(_UNIT.format("(?i:" + _UNIT_WORDS + ")|#"))
# Keywords that gate the address scan (one line each; lower-case ones are case-insensitive).
_ADDRESS_WORDS = (
    "street",
    "avenue",
    "boulevard",
    "highway",
    "parkway",
    "crescent",
    "terrace",
    "plaza",
    "gardens",
    " road",
    " lane",
    " Drive",
    " Court",
    " Place",
    " Square",
    " Alley",
    " Grove",
    " Mews",
    " Trail",
    " Circle",
    " Way",
    " St ",
    " St.",
    " St,",
    " Rd",
    " Ave",
    " Av ",
    " Av.",
    " Blvd",
    " Ln",
    " Dr ",
    " Dr.",
    " Ct",
    " Pl ",
    " Sq",
    " Hwy",
    " Pkwy",
    "Rue ",
    " rue ",
    "Chemin",
    "Allée",
    "Impasse",
    "Quai ",
    "Route ",
    "Via ",
    "Viale",
    "Piazza",
    "Corso ",
    "Largo ",
    "Calle ",
    "Avenida",
    "Avda",
    "Paseo",
    "Camino",
    "Carrer",
    "Rua ",
    "rúa ",
    "Travessa",
    "Praça",
    "Aleja",
    "ulica",
    "trg ",
    "náměstí",
    "πλατεία",
    "οδός",
    "ul. ",
    " al. ",
    "Bd",
    "strasse",
    "straße",
    "str.",
    "gasse",
    "weg ",
    "allee",
    "platz",
    "damm",
    "straat",
    "laan",
    "gracht",
    "plein",
    "steeg",
    "gata",
    "vägen",
    "väg ",
    "gränd",
    "vej ",
    "gade ",
    "veien",
    "vegen",
    "veg ",
    "katu",
    "kuja",
    "tie ",
    "vegur",
    "braut",
    "utca",
    " u. ",
    " út",
    "tér ",
    " tee ",
    "tn.",
    "Box ",
    "APO ",
    "FPO ",
    "DPO ",
    "Apt",
    "Suite",
    "Apartment",
)
_AGE_RX = re.compile(
    r"\b(\d{1,3})[ -]?(?i:years?|yrs?)[ -]old\b|\b(\d{1,3})[ ]?(?i:y/o)\b|\b(?i:aged)[ ](\d{1,3})\b"
    r"|\b(?i:age)[ ]?[:=]?[ ]?(\d{1,3})[ ](?i:years?|yrs?)\b"
)
_AGE_WORDS = ("year", "yrs", "yr old", "y/o", "aged ")
_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?"
)
_TIME = r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:[ ]?[AaPp][Mm])?(?:Z|[ ]?[+-]\d{2}:?\d{2})?)?"
_DATE = (
    r"(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})|\d{4}/\d{1,2}/\d{1,2}"
    r"|\d{1,2}(?:st|nd|rd|th)?[ ](?:of[ ])?" + _MONTH + r",?[ ]\d{4}"
    r"|" + _MONTH + r"[ ]\d{1,2}(?:st|nd|rd|th)?,?[ ]\d{4})" + _TIME
)
_DATE_RX = re.compile(r"(?<![\w.:/-])" + _DATE + r"(?![\w:/-]|\.\d)")
# A date after a birth keyword is personal whatever else the text is: always masked.
_BIRTH_DATE_RX = re.compile(
    r"(?i:\b(?:born|birth[ ]?date|date[ ]of[ ]birth|birthday|d\.?o\.?b\.?)\b)[ \t]*[:=]?[ \t]*"
    r"(?i:(?:is|was|on)[ ])?(" + _DATE + r")(?![\w:/-]|\.\d)"
)
_BIRTH_WORDS = ("born", "birth", "dob", "d.o.b")
index_keywords(_ADDRESS_WORDS + _AGE_WORDS + _BIRTH_WORDS)


_SEGMENT_RX = re.compile(r"[ \t]*(?=[\n,])(?:\n[ \t]*)?(?:,[ \t]*)?(?:\n[ \t]*)?")
_WORD_CHARS = r"[\w'’().-]"
# A city / region / country line of a postal block, with or without its postal code.
_POSTAL_LINE_RX = re.compile(
    r"(?:[^\W\d_]" + _WORD_CHARS + r"*[ ]){0,4}(?:[A-Z]{1,2}-)?(?:\d{4,6}(?:-\d{4})?|\d{3}[ ]\d{2}"
    r"|[A-Z]{1,2}\d[A-Z\d]?[ ]\d[A-Z]{2}|[A-Z]\d[A-Z][ ]\d[A-Z]\d)(?![\w-])"
)
_PLACE_LINE_RX = re.compile(
    r"[^\W\d_]" + _WORD_CHARS + r"*(?:[ ]" + _WORD_CHARS + r"+){0,4}(?=[ \t]*(?:[\n,]|$))"
)
# The last place of a block that ends a sentence: "…\n KILMORY\n United Kingdom. Please call".
_LAST_PLACE_RX = re.compile(r"[^\W\d_][\w'’()-]*(?:[ ][\w'’()-]+){0,4}?(?=\.(?:\s|$))")


def _address_tail(text: str, end: int, lower: bool = False) -> int:
    """Extend an address over the lines of its block (city, region, country) up to the last one
    that holds a postal code: ``…Apt. 7\\nLaval, QC H7N 1A1``, or ends with a country or US
    state (with the optional gazetteer, :mod:`.places`: ``…Apt. 3, Tartu, Estonia``). Without
    either within four short segments the street line stands alone (a sentence may simply go on)."""
    best = pos = ends_with_region(text, end, lower=lower)
    for _ in range(4):
        sep = _SEGMENT_RX.match(text, pos)
        if sep is None:
            break
        postal = _POSTAL_LINE_RX.match(text, sep.end())
        if postal is not None:
            best = pos = postal.end()
            continue
        place = _PLACE_LINE_RX.match(text, sep.end())
        in_region = place is not None and ends_in_region(place.group(), any_case=lower)
        if not in_region:
            last = _LAST_PLACE_RX.match(text, sep.end())
            if last is not None and ends_in_region(last.group(), any_case=lower):
                return last.end()
        if place is None:
            break
        pos = place.end()
        if in_region:
            best = pos
    return best


def find_prose(text: str, index: LineIndex, *, mask_dates: bool) -> Iterator[tuple[str, int, int]]:
    """``(type, start, end)`` of postal addresses, places, nationalities, ages and dates in ``text``."""
    done = -1
    for lo, hi in index.ranges(_ADDRESS_WORDS):
        lo = text.rfind("\n", 0, max(lo - 1, 0)) + 1  # "Ekvägen 12" is the line before "Apt. 4"
        for m in _ADDRESS_RX.finditer(text, max(lo, done), hi):
            end = m.end()
            street_lower = not any(c.isupper() for c in m.group())
            units = _LOWER_UNIT_RX if street_lower else _UNIT_RX
            for _ in range(3):
                unit = units.match(text, end)
                if unit is None:
                    break
                end = unit.end()
            lower = street_lower and not any(c.isupper() for c in text[m.end() : end])
            done = end = _address_tail(text, end, lower)
            yield "ADDRESS", m.start(), end
    for s, e in find_places(text, index):
        yield "LOCATION", s, e
    for s, e in find_nationalities(text, index):
        yield "NATIONALITY", s, e
    for lo, hi in index.ranges(_AGE_WORDS):
        for m in _AGE_RX.finditer(text, lo, hi):
            g = next(i for i in range(1, 5) if m.group(i) is not None)
            if int(m.group(g)) <= 130:
                yield "AGE", *m.span(g)
    if mask_dates:
        for m in _DATE_RX.finditer(text):
            yield "DATE", *m.span()
    else:
        for lo, hi in index.ranges(_BIRTH_WORDS):
            for m in _BIRTH_DATE_RX.finditer(text, lo, hi):
                yield "DATE", *m.span(1)
