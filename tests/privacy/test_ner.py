"""The optional NER path: prefilter and postfilter, overlap rules, settings, offline loading.

Tests that need the model skip when spaCy or the model package (extra ``privacy-ner``) is absent;
the filters, the gap filling and the settings logic are tested without it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from devops_agent.config.settings import PrivacySettings
from devops_agent.errors import UserError
from devops_agent.privacy import PLACEHOLDER_RX, REDACTED, Anonymizer, Candidate, deanonymize
from devops_agent.privacy.anonymizer import fill_gaps
from devops_agent.privacy.names import cap_words, extend_name, name_lines, person_named, plausible
from devops_agent.privacy.ner import NerRecognizer, _trim, from_settings, installed_model

KEY = b"test-key-0123456789abcdef"


def words(line: str) -> list[str]:
    return [line[s:e] for s, e in cap_words(line)]


def test_model_org_with_a_known_first_name_reads_as_a_person() -> None:
    assert person_named("Sandra Young")
    assert person_named("Christine")
    assert person_named("Mary J. Blige")
    assert not person_named("Bertha Inc")  # a company word
    assert not person_named("Clean Power Finance")  # no first name
    assert not person_named("Maria Lopez Garcia Holdings")  # too long for a name
    assert not person_named("Maria nginx")  # not name-like


@pytest.fixture(scope="module")
def ner() -> NerRecognizer:
    pytest.importorskip("spacy")
    model = installed_model()
    if model is None:
        pytest.skip("no spaCy model package installed (extra privacy-ner)")
    return NerRecognizer(model)


@pytest.fixture
def anon(ner: NerRecognizer) -> Anonymizer:
    return Anonymizer(KEY, "session-1", ner=NerRecognizer(ner.model))


def entities(anon: Anonymizer, text: str) -> list[tuple[str, str]]:
    return [(e.type, e.original) for e in anon.anonymize(text).entities]


# -- prefilter and postfilter (no model needed) -------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Nicole: Remember me, Mary?", ["Nicole", "Remember", "Mary"]),
        ("assigned to O'Brien and McDonald by Jean-Luc", ["O'Brien", "McDonald", "Jean-Luc"]),
        ("reviewed by Kónya Ágnes and Šušulić", ["Kónya", "Ágnes", "Šušulić"]),
        # code, ids, camelCase, ALL-CAPS and log vocabulary are not name-like
        ("INFO dfs.DataNode$PacketResponder: PacketResponder 1 for block blk_38", []),
        ("key=Value Step_LSC SELinux ALERTs RMCommunicator Allocator WARN Node", []),
        ("Mar 12 10:11:12 sshd[42]: Accepted publickey for alice from 10.0.0.1", []),
        ("Authorization: Bearer abcDEF123 Mozilla/5.0 (X11; Linux x86_64)", []),
        ("call Foo(x) and foo.Bar and /usr/Lib and http://Host", []),
    ],
)
def test_prefilter_keeps_only_name_like_words(line: str, expected: list[str]) -> None:
    assert words(line) == expected


@pytest.mark.parametrize(
    ("span", "ok"),
    [
        ("Alice Johnson", True),
        ("Janka M. Szász", True),
        ("Davis, Reynolds and Williamson", True),
        ("uid=0 euid=0", False),
        ("msra-sa-41:8030", False),
        ("INFO Node", False),
        ("RAS KERNEL FATAL Machine", False),
        ("Server", False),
        ("<<PERSON_0123abcd>>", False),
        ("Alice\nBob", False),
    ],
)
def test_postfilter(span: str, ok: bool) -> None:
    assert plausible(span) is ok


def test_prefilter_selects_only_lines_with_a_name_word() -> None:
    log = "Mar 12 10:11:12 web-1 sshd[1]: Accepted publickey for alice\nERROR Bearer abc Mozilla/5.0\n"
    assert list(name_lines(log)) == []
    text = log + "escalated to Alice Johnson\nINFO done"
    start = text.index("escalated")
    assert list(name_lines(text)) == [(start, text.index("\nINFO"))]


@pytest.mark.parametrize(
    ("line", "end", "expected"),
    [
        ("Ryan P Costa as guardian", 4, "Ryan P Costa"),
        ("Janka M. Szász\n", 5, "Janka M. Szász"),
        ("Jane Doe <jane@acme.com>", 4, "Jane Doe"),
        ("Ryan P as guardian", 4, "Ryan"),  # an initial alone is not taken
        ("Ann's Cautionary Tales", 5, "Ann's"),
    ],
)
def test_person_spans_extend_over_initials_and_surnames(line: str, end: int, expected: str) -> None:
    assert line[: extend_name(line, end)] == expected


def test_possessive_is_trimmed_from_model_spans() -> None:
    assert _trim("Emmie Ström's tales", 0, 13) == (0, 11)
    assert _trim("Emmie Ström’s tales", 0, 13) == (0, 11)
    assert _trim("Emmie Ström tales", 0, 11) == (0, 11)


def test_titles_are_not_names() -> None:
    assert words("Dr. Kyle Kuefer and Mrs Ann Lee") == ["Kyle", "Kuefer", "Ann", "Lee"]


def test_model_spans_only_fill_gaps_between_pattern_matches() -> None:
    text = "user=Ann Lee and Bob Stone wrote to ann@acme.com"
    at = text.index("ann@")
    username = Candidate("USERNAME", 5, 8, 19)  # "Ann"
    email = Candidate("EMAIL", at, at + 12, 90)
    chosen = [username, email]
    model = [
        Candidate("PERSON", 5, 12, 16),  # "Ann Lee": the pattern keeps "Ann", "Lee" is left
        Candidate("PERSON", 17, 26, 16),  # "Bob Stone": no overlap, kept as it is
        Candidate("ORG", at, at + 8, 14),  # inside the e-mail: nothing left
    ]
    out = fill_gaps(chosen, model, text)
    assert [(c.type, text[c.start : c.end]) for c in out] == [
        ("USERNAME", "Ann"),
        ("PERSON", "Lee"),
        ("PERSON", "Bob Stone"),
        ("EMAIL", "ann@acme.com"),
    ]


def test_leftover_that_does_not_look_like_a_name_is_dropped() -> None:
    text = "ping bob.smith@acme.com's box"
    email = Candidate("EMAIL", 5, 23, 90)
    out = fill_gaps([email], [Candidate("PERSON", 5, 25, 16)], text)
    assert out == [email]


# -- settings (no model needed) -------------------------------------------------------------------


def test_missing_model_names_the_extra() -> None:
    with pytest.raises(UserError) as err:
        NerRecognizer("no_such_spacy_model_pkg")
    assert "privacy-ner" in (err.value.hint or "")


def test_settings_modes() -> None:
    missing = "no_such_spacy_model_pkg"
    assert from_settings(PrivacySettings(ner="off")) is None
    with pytest.raises(UserError):
        from_settings(PrivacySettings(ner="on", ner_model=missing))


def test_auto_with_a_misspelt_model_is_an_error_not_names_in_clear(tmp_path: Path) -> None:
    """Under ``auto``, a model the user named but that is not there must not quietly turn name
    masking off (names would then reach a hosted model)."""
    for missing in ("en_core_web_mdd", str(tmp_path / "no-such-pipeline")):
        with pytest.raises(UserError) as err:
            from_settings(PrivacySettings(ner="auto", ner_model=missing))
        assert "privacy.ner_model" in str(err.value)
        assert "privacy.ner = 'off'" in (err.value.hint or "")


def test_unknown_entity_type_is_refused(ner: NerRecognizer) -> None:
    with pytest.raises(UserError):
        NerRecognizer(ner.model, entities=["PERSON", "DATE"])


def test_auto_turns_on_when_installed(ner: NerRecognizer) -> None:
    got = from_settings(PrivacySettings(ner="auto", ner_entities=["PERSON"]))
    assert got is not None
    assert got.model == ner.model


# -- with the model -----------------------------------------------------------------------------------


def test_names_in_a_ticket_comment_are_masked_and_restored(anon: Anonymizer) -> None:
    text = "Alice Johnson approved the rollback; ping Robert Miller at bob@acme.com about OPS-1234."
    out = anon.anonymize(text)
    found = {(e.type, e.original) for e in out.entities}
    assert {
        ("PERSON", "Alice Johnson"),
        ("PERSON", "Robert Miller"),
        ("EMAIL", "bob@acme.com"),
        ("JIRA_KEY", "OPS-1234"),
    } <= found
    assert not {"Alice", "Johnson", "Robert", "Miller"} & set(out.text.replace(";", " ").split())
    assert deanonymize(out.text, out.mapping) == text


def test_git_author_keeps_the_whole_name(anon: Anonymizer) -> None:
    # The small model stops at "Jane" when an address follows; the span is extended over "Doe".
    got = entities(anon, "commit 3f2a1b\nAuthor: Jane Doe <jane.doe@acme.com>")
    assert got == [("PERSON", "Jane Doe"), ("EMAIL", "jane.doe@acme.com")]


def test_secrets_win_over_names(anon: Anonymizer) -> None:
    out = anon.anonymize("db password=JohnSmith99 set by Maria Garcia")
    assert REDACTED in out.text
    assert all("John" not in e.original for e in out.entities)
    assert ("PERSON", "Maria Garcia") in {(e.type, e.original) for e in out.entities}


def test_placeholders_are_never_masked_again(anon: Anonymizer) -> None:
    once = anon.anonymize("Escalated by Alice Johnson to Robert Miller in Berlin.").text
    assert len(PLACEHOLDER_RX.findall(once)) >= 2
    assert anon.anonymize(once).text == once


def test_patterns_keep_their_type_next_to_names(anon: Anonymizer) -> None:
    got = entities(anon, "Bearer token for Alice Johnson on OPS-77 from 10.2.3.4")
    assert {("JIRA_KEY", "OPS-77"), ("IP", "10.2.3.4"), ("PERSON", "Alice Johnson")} <= set(got)


@pytest.mark.parametrize(
    "line",
    [
        "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; logname= uid=0 euid=0 tty=NODEVssh",
        "081109 204005 35 INFO dfs.FSNamesystem: BLOCK* NameSystem.addStoredBlock: blockMap updated",
        "2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: Created MRAppMaster",
        "- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 RAS KERNEL INFO instruction cache parity error corrected",
        "Dec 10 06:55:46 LabSZ sshd[24200]: Received disconnect from 173.234.31.186: 11: Bye Bye [preauth]",
        "2026-03-12T10:11:12Z DEBUG outbound call Authorization: Bearer abcdefghijkmnopqrstuvwxyzABCDEFGH to api",
    ],
)
def test_log_lines_give_no_model_entities(anon: Anonymizer, line: str) -> None:
    assert [t for t, _ in entities(anon, line) if t in ("PERSON", "ORG", "LOCATION")] == []


def test_lines_differing_in_ids_share_one_model_pass(ner: NerRecognizer) -> None:
    rec = NerRecognizer(ner.model)
    text = "\n".join(
        f"2026-03-{d} pod api-{d} restarted by Alice Johnson (job {d * 7919 + 100000})" for d in range(11, 31)
    )
    rec.find(text)
    assert len(rec._cache) == 1  # ids blanked to zeros of the same length: one model pass


def test_log_template_constants_are_not_names_but_its_values_are(ner: NerRecognizer) -> None:
    """Machine text is not prose: a capitalised event word that every line of a log template
    repeats is vocabulary, while the names that vary between the lines are still found."""
    rec = NerRecognizer(ner.model)
    event = "\n".join(
        f"- 11{d}231520 RAS DISCOVERY INFO Ido chip status changed: FF:F2:9F:16:E2:{d} ip=10.0.0.{d} status=M"
        for d in range(10, 30)
    )
    assert rec.find(event) == []
    # the same model on one such line alone (no template to learn from) still reads a name in it
    assert [c.type for c in rec.find(event.splitlines()[0])] == ["PERSON"]
    people = ["Szabina Kovács", "Ubul Halász", "Siiri Tamm", "Zoltán Varga", "Elif Yıldız", "Mette Dahl"]
    logins = "\n".join(
        f"2026-03-{d} web-{d} session opened for {people[d % 6]} from 10.0.0.{d}" for d in range(11, 29)
    )
    found = {logins[c.start : c.end] for c in rec.find(logins)}  # the model types some ORG or LOCATION
    assert found == set(people)
    # pattern path: a name that every line of a template repeats is still masked by the first-name rule
    repeated = "\n".join(
        f"2026-03-{d} pod api-{d} restarted by Alice Johnson (job {d})" for d in range(11, 31)
    )
    anon = Anonymizer(KEY, "s", ner=rec)
    assert {e.original for e in anon.anonymize(repeated).entities if e.type == "PERSON"} == {"Alice Johnson"}


def test_entities_setting_limits_types(ner: NerRecognizer) -> None:
    rec = NerRecognizer(ner.model, entities=["ORG"])
    assert all(c.type == "ORG" for c in rec.find("Alice Johnson joined Acme Corporation in Berlin."))


def test_loads_lazily_once_and_offline(ner: NerRecognizer) -> None:
    """In a fresh process with sockets disabled: no spaCy import until first use, then no network."""
    code = textwrap.dedent(
        f"""
        import socket, sys

        def refuse(*a, **k):
            raise OSError("network disabled in this test")

        socket.socket.connect = refuse
        socket.create_connection = refuse
        from devops_agent.privacy import Anonymizer
        from devops_agent.privacy.ner import NerRecognizer
        anon = Anonymizer(b"k", "s", ner=NerRecognizer({ner.model!r}))
        assert "spacy" not in sys.modules, "spaCy imported before first use"
        out = anon.anonymize("Escalated to Alice Johnson.")
        assert [e.type for e in out.entities] == ["PERSON"], out
        print("ok")
        """
    )
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"
