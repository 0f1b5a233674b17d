"""Entity recognizers and the anonymizer: types, URL shapes, placeholders, overlaps, round trips."""

from __future__ import annotations

import hashlib
import hmac
import re

import pytest

from devops_agent.errors import UserError
from devops_agent.privacy import (
    PLACEHOLDER_RX,
    REDACTED,
    Anonymizer,
    Candidate,
    deanonymize,
    is_known_host,
    placeholder_tag,
    resolve_overlaps,
)

KEY = b"test-key-0123456789abcdef"


@pytest.fixture
def anon() -> Anonymizer:
    return Anonymizer(KEY, "session-1", sensitive_namespaces=["payments", "team-billing"])


def types_of(anon: Anonymizer, text: str) -> list[tuple[str, str]]:
    return [(e.type, e.original) for e in anon.anonymize(text).entities]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail bob.smith@acme.com now", [("EMAIL", "bob.smith@acme.com")]),
        ("connect to db-1.prod.acme.com:5432", [("HOST", "db-1.prod.acme.com")]),
        ("svc kafka-0.kafka.svc.cluster.local ok", [("HOST", "kafka-0.kafka.svc.cluster.local")]),
        ("from 10.12.0.7 port 22", [("IP", "10.12.0.7")]),
        ("peer fe80::1ff:fe23:4567:890a up", [("IP", "fe80::1ff:fe23:4567:890a")]),
        ("peer 2001:db8:85a3::8a2e:370:7334", [("IP", "2001:db8:85a3::8a2e:370:7334")]),
        (
            "full 6e40:4041:c617:e898:c11:40d2:c669:2eb4 form",
            [("IP", "6e40:4041:c617:e898:c11:40d2:c669:2eb4")],
        ),
        ("irc nick=zerocool joined", [("USERNAME", "zerocool")]),
        ("call +1 415-555-0134 now", [("PHONE", "+1 415-555-0134")]),
        ("call (415) 555-0134", [("PHONE", "(415) 555-0134")]),
        ("tel +442071838750", [("PHONE", "+442071838750")]),
        ("desk 345-899-3560x4587", [("PHONE", "345-899-3560x4587")]),
        ("see OPS-1234 and PROJ-7", [("JIRA_KEY", "OPS-1234"), ("JIRA_KEY", "PROJ-7")]),
        ("arn:aws:iam::123456789012:role/deploy", [("AWS_ACCOUNT", "123456789012")]),
        ("aws account id: 210987654321", [("AWS_ACCOUNT", "210987654321")]),
        ("projects/acme-prod-42/locations/eu", [("GCP_PROJECT", "acme-prod-42")]),
        (
            "/subscriptions/0b1f6471-1bf0-4dda-aec3-cb9272f09590/resourceGroups/rg",
            [("AZURE_SUBSCRIPTION", "0b1f6471-1bf0-4dda-aec3-cb9272f09590")],
        ),
        ("card 4111 1111 1111 1111 used", [("CREDIT_CARD", "4111 1111 1111 1111")]),
        ("iban GB82WEST12345698765432", [("IBAN", "GB82WEST12345698765432")]),
        ("ssn 123-45-6789", [("US_SSN", "123-45-6789")]),
        ('"username": "deploy-bot"', [("USERNAME", "deploy-bot")]),
        (
            "ns payments: pod payments-api-7d9c8f6b5-x2kqz",
            [("K8S_NAMESPACE", "payments"), ("K8S_POD", "payments-api-7d9c8f6b5-x2kqz")],
        ),
    ],
)
def test_each_entity_type(anon: Anonymizer, text: str, expected: list[tuple[str, str]]) -> None:
    assert types_of(anon, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "ip-10-0-0-1 utf-8 UTF-8 sha-256 SHA-256 x86-64 ISO-8601 RFC-3339 HTTP-2 CVE-2024-3094 TLS-1",
        "released 2026-03-12 at 10:11:12, version 1.2.3-rc1 or v1.2.3",
        "GET /index.html 200 1534 took 0.003s on port 8080 pid 12345",
        "open main.py and config.yaml, then app.js",
        "epoch 1710238272 and 1710238272123 ms",
        "localhost:8080 and 127.0.0.1 and 0.0.0.0",
        "mac aa:bb:cc:dd:ee:ff, std::string, ::1 and 10:11:12.345",
        "a Luhn-invalid 4111 1111 1111 1112 number",
        "namespace kube-system pod coredns-5d78c9869d-abcde",
    ],
)
def test_lookalikes_are_not_entities(text: str) -> None:
    assert Anonymizer(KEY, "s").anonymize(text).entities == []


def test_jira_keys_are_case_sensitive(anon: Anonymizer) -> None:
    assert types_of(anon, "proj-123 Proj-123") == []
    assert types_of(anon, "PROJ-123") == [("JIRA_KEY", "PROJ-123")]


def test_pods_and_namespaces_only_when_configured() -> None:
    text = "payments-api-7d9c8f6b5-x2kqz in payments"
    assert Anonymizer(KEY, "s").anonymize(text).entities == []
    masked = Anonymizer(KEY, "s", sensitive_namespaces=["payments"]).anonymize(text)
    assert [e.type for e in masked.entities] == ["K8S_POD", "K8S_NAMESPACE"]


def test_url_keeps_its_shape(anon: Anonymizer) -> None:
    result = anon.anonymize("see https://ci.acme.io/job/foo/123/console?x=1")
    host = anon.placeholder("HOST", "ci.acme.io")
    assert result.text == f"see https://{host}/job/foo/123/console?x=1"


@pytest.mark.parametrize(
    "path",
    [
        "/job/team-a/job/service-b/job/main/123/",
        "/blue/organizations/jenkins/team-a%2Fservice-b/detail/main/123/pipeline",
        "/job/deploy/lastSuccessfulBuild/artifact/out.tar.gz",
    ],
)
def test_jenkins_urls_keep_nested_folders_and_blue_ocean_paths(anon: Anonymizer, path: str) -> None:
    result = anon.anonymize(f"build: https://jenkins.corp.acme.com:8443{path}")
    host = anon.placeholder("HOST", "jenkins.corp.acme.com")
    assert result.text == f"build: https://{host}:8443{path}"
    assert [e.type for e in result.entities] == ["HOST"]


def test_url_with_ip_and_single_label_host(anon: Anonymizer) -> None:
    result = anon.anonymize("http://10.0.3.4:9090/metrics and http://jenkins:8080/job/x/1/")
    assert [(e.type, e.original) for e in result.entities] == [("IP", "10.0.3.4"), ("HOST", "jenkins")]
    assert "/metrics" in result.text
    assert ":8080/job/x/1/" in result.text


def test_public_endpoints_stay_readable_unless_disabled() -> None:
    text = "pull ghcr.io/acme/app failed; see https://github.com/acme/app/issues/1"
    assert Anonymizer(KEY, "s").anonymize(text).entities == []
    strict = Anonymizer(KEY, "s", keep_public_hosts=False).anonymize(text)
    assert {e.original for e in strict.entities} == {"ghcr.io", "github.com"}


def test_public_documentation_links_stay_readable_but_a_private_docs_host_does_not() -> None:
    config = (
        "# https://docs.djangoproject.com/en/4.2/ref/settings/#databases\n"
        "# tuning: https://nginx.org/en/docs/http/ngx_http_proxy_module.html\n"
        "# runbook: https://docs.acme-corp.com/payments/db\n"
    )
    result = Anonymizer(KEY, "s").anonymize(config)
    assert [e.original for e in result.entities] == ["docs.acme-corp.com"]
    assert "https://docs.djangoproject.com/en/4.2/ref/settings/#databases" in result.text


def test_keep_domains_suffix(anon: Anonymizer) -> None:
    a = Anonymizer(KEY, "s", keep_domains=["example.org"])
    assert a.anonymize("docs.example.org and api.acme.com").entities[0].original == "api.acme.com"


def test_placeholder_format_and_tag() -> None:
    a = Anonymizer(KEY, "sess")
    ph = a.placeholder("HOST", "db.acme.com")
    expected_tag = hmac.new(KEY, b"sess\x1fHOST\x1fdb.acme.com", hashlib.sha256).hexdigest()[:8]
    assert ph == f"<<HOST_{expected_tag}>>"
    assert placeholder_tag(KEY, "sess", "HOST", "db.acme.com") == expected_tag
    assert PLACEHOLDER_RX.fullmatch(ph)


def test_placeholders_are_deterministic_per_session_and_type() -> None:
    text = "db.acme.com then db.acme.com"
    a1 = Anonymizer(KEY, "s1").anonymize(text)
    a1_again = Anonymizer(KEY, "s1").anonymize(text)
    b = Anonymizer(KEY, "s2").anonymize(text)
    assert a1.text == a1_again.text
    assert a1.entities[0].placeholder == a1.entities[1].placeholder
    assert a1.text != b.text
    other_key = Anonymizer(b"another-key", "s1").anonymize(text)
    assert other_key.text != a1.text
    a = Anonymizer(KEY, "s1")
    assert a.placeholder("HOST", "x.acme.com") != a.placeholder("EMAIL", "x.acme.com")


def test_existing_placeholders_and_markers_are_never_remasked(anon: Anonymizer) -> None:
    first = anon.anonymize(
        "host db.acme.com mail ops@acme.com token=ghp_Zq8xK2mP9vL4nB7cT1wR5yH3jD6fG0sA8eUq"
    )
    second = anon.anonymize(first.text)
    assert second.text == first.text
    assert second.entities == []
    assert second.secrets == []
    other = Anonymizer(KEY, "other-session").anonymize(
        "<<HOST_0123abcd>> [REDACTED_SECRET] <<EMAIL_89abcdef>>"
    )
    assert other.text == "<<HOST_0123abcd>> [REDACTED_SECRET] <<EMAIL_89abcdef>>"


def test_secret_inside_url_wins_and_is_never_an_entity(anon: Anonymizer) -> None:
    result = anon.anonymize("git clone https://deploy:S3cr3tPassw0rd@git.acme.com/team/repo.git")
    user = anon.placeholder("USERNAME", "deploy")
    host = anon.placeholder("HOST", "git.acme.com")
    assert result.text == f"git clone https://{user}:{REDACTED}@{host}/team/repo.git"
    assert all("S3cr3t" not in e.original for e in result.entities)
    assert "S3cr3tPassw0rd" not in str(result.mapping)
    assert [s.kind for s in result.secrets] == ["url_password"]


def test_secret_containing_an_email_is_redacted_not_masked(anon: Anonymizer) -> None:
    result = anon.anonymize('password = "me@acme.com:x9Zq2"')
    assert result.entities == []
    assert REDACTED in result.text


def test_email_beats_host_and_url_host_beats_bare_host(anon: Anonymizer) -> None:
    assert types_of(anon, "to alice@mail.acme.com") == [("EMAIL", "alice@mail.acme.com")]
    assert types_of(anon, "https://api.acme.com/v1") == [("HOST", "api.acme.com")]


def test_resolve_overlaps_rules() -> None:
    cands = [
        Candidate("HOST", 5, 15, 55),
        Candidate("EMAIL", 0, 15, 90),
        Candidate("JIRA_KEY", 20, 28, 30),
        Candidate("PHONE", 22, 26, 50),
        Candidate("IP", 40, 50, 60),
        Candidate("HOST", 40, 50, 60),
    ]
    chosen = resolve_overlaps(cands)
    assert [(c.type, c.start, c.end) for c in chosen] == [("EMAIL", 0, 15), ("PHONE", 22, 26), ("IP", 40, 50)]


def test_round_trip_deanonymize(anon: Anonymizer) -> None:
    text = "bob@acme.com hit https://ci.acme.io/job/a/job/b/12/ from 10.1.2.3 about OPS-42"
    result = anon.anonymize(text)
    assert "acme" not in result.text
    assert deanonymize(result.text, result.mapping) == text


def test_round_trip_keeps_redactions_and_unknown_placeholders(anon: Anonymizer) -> None:
    text = "db.acme.com password=hunter22x"
    result = anon.anonymize(text)
    restored = deanonymize(result.text + " <<HOST_ffffffff>>", result.mapping)
    assert restored == f"db.acme.com password={REDACTED} <<HOST_ffffffff>>"


def test_entities_carry_input_offsets(anon: Anonymizer) -> None:
    text = "x token=ghp_Zq8xK2mP9vL4nB7cT1wR5yH3jD6fG0sA8eUq then db.acme.com"
    for e in anon.anonymize(text).entities:
        assert text[e.start : e.end] == e.original


def test_empty_key_is_rejected() -> None:
    with pytest.raises(UserError):
        Anonymizer(b"", "s")


def test_known_host_heuristic() -> None:
    assert is_known_host("api.acme.com")
    assert is_known_host("build.tools.py.acme.dev")
    assert not is_known_host("main.py")
    assert not is_known_host("config.yaml")
    assert not is_known_host("localhost")
    # The Public Suffix List, not a hand list: every country code, second-level public suffixes.
    assert is_known_host("db1.prod.acme.eu")
    assert is_known_host("shop.acme.co.za")
    assert not is_known_host("co.uk")
    assert is_known_host("web.default.svc")  # Kubernetes service DNS
    # Generic TLDs that are words count only where the context says host (bare=False).
    assert is_known_host("api.acme.shop")
    assert not is_known_host("api.acme.shop", bare=True)
    assert is_known_host("api.acme.net", bare=True)
    assert not is_known_host("TK.Tk", bare=True)  # a TLD in mixed case is code outside an address


def _hosts(anon: Anonymizer, text: str) -> list[str]:
    return [e.original for e in anon.anonymize(text).entities if e.type in ("HOST", "EMAIL")]


def test_generic_tld_hosts_need_a_hosts_context(anon: Anonymizer) -> None:
    # Code and file names ending in a generic TLD that is a word stay readable ...
    code = "logger.info(msg); n = self.name; at com.acme.Svc.run(Method.java:42) via app.network"
    assert _hosts(anon, code) == []
    # ... a host under one is masked where a port, a path or a host key says what it is.
    assert _hosts(anon, "connect api.acme.shop:443 failed") == ["api.acme.shop"]
    assert _hosts(anon, "pull europe-docker.pkg.dev/proj/img:1.2") == ["europe-docker.pkg.dev"]
    assert _hosts(anon, "auth failure; rhost=p1.dialup.acme.info user=root") == ["p1.dialup.acme.info"]
    assert _hosts(anon, "Host: api.acme.shop") == ["api.acme.shop"]
    # In an e-mail address every TLD counts, in any case; country codes and com/net/org need no context.
    assert _hosts(anon, "mail ops@acme.shop now") == ["ops@acme.shop"]
    assert _hosts(anon, "write to Jane.Doe@Gmail.Com now") == ["Jane.Doe@Gmail.Com"]
    assert _hosts(anon, "replica db1.prod.acme.eu lagging") == ["db1.prod.acme.eu"]


@pytest.mark.parametrize(
    "text",
    [
        '{"host": "db1.acme.dev"}',
        '"hostname": "web.acme.app"',
        'host = "db.acme.dev"',
        "server:  db.acme.dev",
        "psql --host db.acme.info -U app",
        "could not connect to server (db.acme.dev:5432)",
        "replica db1.prod.acme.dev lagging",  # three labels, one with a digit: a host's shape
        "node ip-10-0-0-1.acme.cloud is NotReady",
    ],
)
def test_hosts_under_word_tlds_in_configs_commands_and_logs(anon: Anonymizer, text: str) -> None:
    assert [h for h in _hosts(anon, text) if h.endswith((".dev", ".app", ".info", ".cloud"))] != []


def test_a_class_file_and_line_is_no_host_and_port(anon: Anonymizer) -> None:
    assert _hosts(anon, "at com.acme.Svc.run(Method.java:42)") == []
    assert _hosts(anon, "Application.java:42 - started") == []
    # a dotted key before "=" under a word TLD is a key (OpenTelemetry attributes, Java properties)
    assert _hosts(anon, "labels: k8s.pod.name='api-7d9' k8s.node.name=node-1") == []


def test_output_has_no_stray_entities_on_realistic_log(anon: Anonymizer) -> None:
    log = (
        '10.2.3.4 - - [12/Mar/2026:10:11:12 +0000] "GET /api/v1/orders HTTP/1.1" 200 1534 "-" "curl/8.5"\n'
        "Mar 12 10:11:12 web-1 sshd[991]: Accepted publickey for alice from 192.168.7.20 port 50122 ssh2\n"
        "2026-03-12T10:11:12Z ERROR notify carol@acme.com via https://hooks.acme.com/x failed (OPS-17)\n"
    )
    out = anon.anonymize(log).text
    for leaked in ["10.2.3.4", "192.168.7.20", "carol@acme.com", "hooks.acme.com", "OPS-17"]:
        assert leaked not in out
    for kept in ["GET /api/v1/orders HTTP/1.1", "200 1534", "10:11:12", "port 50122", "sshd[991]"]:
        assert kept in out
    assert len(re.findall(PLACEHOLDER_RX, out)) == 5


# -- prose entities: addresses, ages, dates, cued names --------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Jacob lives on 90 Whitchurch Road now.", [("ADDRESS", "90 Whitchurch Road")]),
        ("ship to 1600 Pennsylvania Ave NW today", [("ADDRESS", "1600 Pennsylvania Ave NW")]),
        ("office: 20 rue de la Paix, then left", [("ADDRESS", "20 rue de la Paix")]),
        (
            "Dexter lives on Ziegelgasse 19 and Via Roma 131.",
            [("ADDRESS", "Ziegelgasse 19"), ("ADDRESS", "Via Roma 131")],
        ),
        ("send it to ul. Miła 53 please", [("ADDRESS", "ul. Miła 53")]),
        (
            "Address:\n19902 Main Street Apt. 066\nSt Georges, QC 54256\n\nThanks",
            [("ADDRESS", "19902 Main Street Apt. 066\nSt Georges, QC 54256")],
        ),
        (
            "28030 Edeby 55\n Apt. 297\n Tystberga\n Sweden 99178",
            [("ADDRESS", "Edeby 55\n Apt. 297\n Tystberga\n Sweden 99178")],
        ),
        ("Meet me at PSC 1437, Box 3833\nAPO AA 66791", [("ADDRESS", "PSC 1437, Box 3833\nAPO AA 66791")]),
        ("mail P.O. Box 149 or call", [("ADDRESS", "P.O. Box 149")]),
        ("This 79 year old female, aged 42, a 35-year-old", [("AGE", "79"), ("AGE", "42"), ("AGE", "35")]),
        ("She was born on 2/8/1935. Her DOB: 1935-02-08", [("DATE", "2/8/1935"), ("DATE", "1935-02-08")]),
        ("Hello, this is Dr. Kyle Kuefer. Who are you?", [("TITLE", "Dr."), ("PERSON", "Kyle Kuefer")]),
        ("my name is Sara Schwarz and yours?", [("PERSON", "Sara Schwarz")]),
        ("Date: 1978-04-13\nName: Toshimi Arata\n", [("PERSON", "Toshimi Arata")]),
        # after a naming cue a name may be written in lower case; the name ends at a function word
        (
            "My name is borna but everyone calls me borna jerković. Her maiden name is nyberg",
            [("PERSON", "borna"), ("PERSON", "borna jerković"), ("PERSON", "nyberg")],
        ),
    ],
)
def test_prose_entities(anon: Anonymizer, text: str, expected: list[tuple[str, str]]) -> None:
    assert types_of(anon, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # a street line needs a house number and a street-type word; a postal block needs a postal code
        "retrying 3 times via the gateway; Node 55 joined; 3 Node Close",
        "Edeby 55 and then some, more words here",
        "disk drive 2 failed; route 66 added to table 10; took 12 years to fix",
        "Age: 120\nmax_age=3600 age 5d",
        # timestamps are not dates of birth
        "2026-03-12T10:11:12Z build born-again-1 started 12/03/2024 10:11",
        "Name: nginx-deployment-66b6c48dd5\nName: Kubernetes Dashboard\nmy name is not important",
        "my name is the admin user; they call me on duty; user name is root",
    ],
)
def test_prose_entities_leave_log_vocabulary_alone(anon: Anonymizer, text: str) -> None:
    assert types_of(anon, text) == []


def test_dates_are_masked_only_when_asked() -> None:
    line = "2026-03-12T10:11:12Z deploy finished; next window March 3, 2026 or 12/03/2026"
    assert [t for t, _ in types_of(Anonymizer(KEY, "s"), line)] == []
    masked = types_of(Anonymizer(KEY, "s", mask_dates=True), line)
    assert masked == [("DATE", "2026-03-12T10:11:12Z"), ("DATE", "March 3, 2026"), ("DATE", "12/03/2026")]


def test_address_scan_is_linear_on_adversarial_input(anon: Anonymizer) -> None:
    import time

    text = ("1 " + "Aaaaaaaaaa " * 2000 + "strasse ") * 5 + "Via " + "de " * 5000
    start = time.process_time()
    anon.anonymize(text)
    assert time.process_time() - start < 2.0


@pytest.mark.parametrize("mask_dates", [False, True])
def test_guard_takes_date_masking_from_settings(store_url: str, mask_dates: bool) -> None:
    from devops_agent.config import Settings
    from devops_agent.privacy.guard import PrivacyGuard
    from devops_agent.store import Store

    settings = Settings(database_url=store_url, privacy={"ner": "off", "mask_dates": mask_dates})
    with Store(store_url) as store:
        guard = PrivacyGuard.for_session(settings, store, "s-1", KEY)
        masked = guard.mask("deployed 2026-03-12 10:11", "tool_out")
    assert ("2026-03-12" not in masked) is mask_dates


def test_kept_entity_types_stay_readable_and_hide_nothing_else() -> None:
    line = "PAY-123 failed for ann@example.com on db1.corp.example.com token=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"
    kept = Anonymizer(KEY, "s", keep_entities=["JIRA_KEY", "HOST"])
    out = kept.anonymize(line)
    assert "PAY-123" in out.text
    assert "db1.corp.example.com" in out.text
    assert "ann@example.com" not in out.text  # EMAIL still masked (its host part is not "kept" away)
    assert "ghp_" not in out.text
    assert "[REDACTED_SECRET]" in out.text
    assert {e.type for e in out.entities} == {"EMAIL"}
    default = {e.type for e in Anonymizer(KEY, "s").anonymize(line).entities}
    assert {"JIRA_KEY", "HOST", "EMAIL"} <= default


def test_unknown_kept_entity_type_is_a_user_error() -> None:
    with pytest.raises(UserError, match="PERSONS"):
        Anonymizer(KEY, "s", keep_entities=["PERSONS"])


def test_settings_entity_types_match_the_recognizers() -> None:
    import typing

    from devops_agent.config.settings import EntityType
    from devops_agent.privacy.recognizers import PRIORITY

    assert set(typing.get_args(EntityType)) == set(PRIORITY)


def test_guard_takes_kept_entities_from_settings(store_url: str) -> None:
    from pydantic import ValidationError

    from devops_agent.config import Settings
    from devops_agent.privacy.guard import PrivacyGuard
    from devops_agent.store import Store

    settings = Settings(database_url=store_url, privacy={"ner": "off", "keep_entities": ["JIRA_KEY"]})
    with Store(store_url) as store:
        guard = PrivacyGuard.for_session(settings, store, "s-1", KEY)
        masked = guard.mask("PAY-123 on 10.1.2.3", "tool_out")
    assert "PAY-123" in masked
    assert "10.1.2.3" not in masked
    with pytest.raises(ValidationError, match="keep_entities"):
        Settings(database_url=store_url, privacy={"keep_entities": ["JIRA"]})


def test_known_values_are_masked_as_words_or_anywhere_but_never_inside_a_placeholder(store_url: str) -> None:
    from devops_agent.config import Settings
    from devops_agent.privacy.guard import PrivacyGuard
    from devops_agent.store import Store

    settings = Settings(database_url=store_url, privacy={"ner": "off"})
    with Store(store_url) as store:
        guard = PrivacyGuard.for_session(settings, store, "s-1", KEY)
        first = guard.mask("user=jdoe42 user=alice user=root", "tool_out")
        jdoe, alice = (guard.mask(f"user={n}", "tool_out").split("=")[1] for n in ("jdoe42", "alice"))
        assert "jdoe42" not in first
        assert "root" not in first  # the recognizer masks it there ...
        text = "JDOE42 and zzjdoe42, Alice not malice; root cause found; <<HOST_beef1234>> [REDACTED_SECRET]"
        guard.learn([("beef12", "<<USERNAME_00000000>>")])
        assert guard.mask_known(text) == (
            f"{jdoe} and zz{jdoe}, {alice} not malice; root cause found; <<HOST_beef1234>> [REDACTED_SECRET]"
        )  # ... but a generic account name is not hunted down everywhere
        # a value masked once stays masked whatever surrounds it, also inside a longer dotted name
        # (the model's ``<<HOST_…>>.conf`` echoed by a tool; issue 21), but not inside a longer number
        guard.learn([("com.example", "<<HOST_11111111>>"), ("10.2.3.4", "<<IP_22222222>>")])
        assert guard.mask_known(
            "at com.example.payments.Gateway; /srv/com.example/x_com.example_y; 10.2.3.4.conf 10.2.3.45"
        ) == (
            "at <<HOST_11111111>>.payments.Gateway; /srv/<<HOST_11111111>>/x_<<HOST_11111111>>_y; "
            "<<IP_22222222>>.conf 10.2.3.45"
        )


@pytest.mark.parametrize(
    ("name", "base_url", "masked"),
    [
        ("openai:gpt-4o", None, True),
        ("scripted", None, False),
        ("ollama:llama3", None, False),
        ("ollama:llama3", "http://127.0.0.1:11434", False),
        ("ollama:llama3", "https://ollama.example.net", True),
        ("vllm:qwen", "https://vllm.hosted-vendor.example.com/v1", True),
        ("openai-compatible:m", "http://localhost:8000/v1", False),
        ("openai-compatible:m", "http://[::1]:8000/v1", False),
        ("openai-compatible:m", "http://gpu.localhost:8000/v1", False),
        ("openai-compatible:m", "https://localhost.llm-host.example.com/v1", True),
        ("openai-compatible:m", "https://api.example.com/v1?h=127.0.0.1", True),
        ("openai-compatible:m", "https://user@127.0.0.1.example.com/v1", True),
        ("openai-compatible:m", None, True),
    ],
)
def test_auto_privacy_judges_the_model_host_not_a_substring(
    name: str, base_url: str | None, masked: bool
) -> None:
    from devops_agent.config import Settings
    from devops_agent.privacy.guard import enabled_for

    settings = Settings(model={"name": name, "base_url": base_url})
    assert enabled_for(settings) is masked


def test_lines_are_masked_in_one_pass_and_keep_their_count(store_url: str) -> None:
    from devops_agent.config import Settings
    from devops_agent.privacy.guard import PrivacyGuard
    from devops_agent.store import Store

    settings = Settings(database_url=store_url, privacy={"ner": "off"})
    with Store(store_url) as store:
        guard = PrivacyGuard.for_session(settings, store, "s-1", KEY)
        lines = ["from 10.1.2.3", "on db1.corp.example.com", "", "plain text"]
        masked = guard.mask_lines(lines, "tool_out")
        assert masked == [guard.mask(line, "tool_out") for line in lines]
        # an address block runs across the line break: masked line by line instead, same count
        block = ["Ship to 742 Evergreen Terrace", "Springfield, OR 97403", "USA"]
        assert len(guard.mask_lines(block, "tool_out")) == 3
