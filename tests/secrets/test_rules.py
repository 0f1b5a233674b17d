"""Provider tokens (generated gitleaks rules and token shapes) and the format rules of
``secrets/rules.py``: each is found whole, lookalikes are not.

Token bodies are generated from a hash at test time (right alphabet and length, valid for no
service), so this file holds no literal that a push-protection scanner would take for a token.
"""

from __future__ import annotations

import string

import pytest

from devops_agent.privacy import find_secrets, scrub
from devops_agent.secrets.rules import FORMAT_KINDS, TOKEN_RULES
from fixtures_canary import random_text

AN = string.ascii_letters + string.digits
LOWAN = string.ascii_lowercase + string.digits
UPAN = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
URLSAFE = AN + "_-"


def body(alphabet: str, n: int, seed: str) -> str:
    """``n`` characters of ``alphabet``, pseudo-random and stable for a given ``seed``."""
    value = random_text(alphabet, n, seed)
    if alphabet is AN or alphabet is URLSAFE:  # the mixed-class formats: make sure of a digit
        value = "7" + value[1:]
    return value


NEW_TOKENS: list[tuple[str, str]] = [
    ("buildkite_token", "bkua_" + body(AN, 40, "bk")),
    ("circleci_token", "CCIPAT_" + body(AN, 22, "cci") + "_" + body(HEX, 40, "cci2")),
    ("artifactory_token", "AKCp" + body(AN, 69, "jf")),
    ("artifactory_token", "cmVmdGtuOjAxOj" + body(AN, 50, "jfref")),
    ("bitbucket_app_password", "ATBB" + body(AN, 32, "atbb")),
    ("terraform_cloud_token", body(AN, 14, "tfc") + ".atlasv1." + body(URLSAFE, 67, "tfc2")),
    ("openshift_token", "sha256~" + body(URLSAFE, 43, "oc")),
    ("tailscale_key", "tskey-auth-" + body(AN, 12, "ts") + "-" + body(AN, 30, "ts2")),
    ("cloudflare_origin_ca_key", "v1.0-" + body(HEX, 24, "cf") + "-" + body(HEX, 146, "cf2")),
    ("flyio_token", "fo1_" + body(URLSAFE, 43, "fly")),
    ("flyio_token", "fm2_" + body(AN + "+/", 120, "fly2")),
    ("netlify_token", "nfp_" + body(AN, 36, "nf")),
    ("render_key", "rnd_" + body(AN, 32, "rnd")),
    ("supabase_token", "sbp_" + body(HEX, 40, "sb")),
    ("supabase_token", "sb_secret_" + body(URLSAFE, 31, "sb2")),
    ("planetscale_token", "pscale_tkn_" + body(AN, 43, "ps")),
    ("octopus_deploy_key", "API-" + body(UPAN, 26, "oct")),
    (
        "harness_token",
        "pat." + body(URLSAFE, 22, "h1") + "." + body(HEX, 24, "h2") + "." + body(AN, 20, "h3"),
    ),
    ("infracost_key", "ico-" + body(AN, 32, "ico")),
    ("alibaba_access_key_id", "LTAI" + body(AN, 20, "ali")),
    ("scaleway_access_key", "SCW" + body(UPAN, 17, "scw")),
    ("rubygems_key", "rubygems_" + body(HEX, 48, "gem")),
    ("groq_key", "gsk_" + body(AN, 52, "groq")),
    ("replicate_token", "r8_" + body(AN, 37, "r8")),
    ("perplexity_key", "pplx-" + body(AN, 48, "pplx")),
    ("xai_key", "xai-" + body(AN, 80, "xai")),
    ("openrouter_key", "sk-or-v1-" + body(HEX, 64, "or")),
    ("langsmith_key", "lsv2_pt_" + body(HEX, 32, "ls") + "_" + body(HEX, 10, "ls2")),
    ("huggingface_token", "api_org_" + body(string.ascii_letters, 34, "hforg")),
    ("prefect_key", "pnu_" + body(AN, 36, "pnu")),
]


@pytest.mark.parametrize(
    ("kind", "token"), NEW_TOKENS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(NEW_TOKENS)]
)
def test_provider_token_is_found_whole_in_a_config_line(kind: str, token: str) -> None:
    # ``kind`` names the provider for the reader; which rule finds the token (a generated gitleaks
    # rule or a token shape) is not fixed, the span is.
    text = f'deploy:\n  credential: "{token}"\n  region: eu-west-1\n'
    found = find_secrets(text)
    assert [text[f.start : f.end] for f in found] == [token], kind
    assert token not in scrub(text).text


@pytest.mark.parametrize(
    ("kind", "token"), NEW_TOKENS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(NEW_TOKENS)]
)
def test_provider_token_is_found_in_prose_without_a_secret_named_key(kind: str, token: str) -> None:
    if kind == "scaleway_access_key":
        pytest.skip("SCW + 17 capitals: no separator, one case, 20 characters; found after a key name only")
    text = f"the job failed with {token} in its env"
    assert token in [text[f.start : f.end] for f in find_secrets(text)], kind


def test_token_rules_name_formats_not_providers() -> None:
    # provider formats come from the generated gitleaks rules; the hand rules left are formats and
    # contexts (files, command lines, connection strings) that no provider prefix tells
    assert {r.kind for r in TOKEN_RULES if not r.provider} <= FORMAT_KINDS
    assert len([r for r in TOKEN_RULES if r.provider]) <= 4


@pytest.mark.parametrize(
    "text",
    [
        # hand-typed placeholders of the new formats
        "BUILDKITE_TOKEN=bkua_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        'PREFECT_API_KEY = "pnu_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"',
        "PERPLEXITY_API_KEY=pplx-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "oc login --token=sha256~XXXXXXXXXX_PUT_YOUR_TOKEN_HERE_XXXXXXXXXXXX",
        # lookalikes (a random body one character short of a format, or a Stripe publishable
        # key, is masked by its shape now: see tests/secrets/test_shapes.py)
        "rnd_initializationVectorForTheCipher = None",  # an identifier, no digit
    ],
)
def test_new_format_lookalikes_and_placeholders(text: str) -> None:
    assert [f.kind for f in find_secrets(text) if f.kind != "config_secret"] == [], text


@pytest.mark.parametrize(
    ("text", "secrets"),
    [
        ("requirepass S3cretRedisPw\n", ["S3cretRedisPw"]),
        ('  masterauth "Zq8xK2mP9vL4"\n', ["Zq8xK2mP9vL4"]),
        ("user alice on >p1pp0 >s3cond ~cached:* +get\n", ["p1pp0", "s3cond"]),
        ("ACL SETUSER bob on >Zq8xK2mP9 ~* +@all", ["Zq8xK2mP9"]),
        ("user worker on #" + body(HEX, 64, "acl") + " ~jobs:* +@list", [body(HEX, 64, "acl")]),
        ("redis-cli -h cache-1 -p 6380 -a S3cretRedisPw ping", ["S3cretRedisPw"]),
        # AUTH typed at a prompt or given to redis-cli; with ACLs "AUTH user password"
        ("AUTH mypassw0rd", ["mypassw0rd"]),
        ("AUTH default s3cr3tpw", ["s3cr3tpw"]),
        ("127.0.0.1:6379> AUTH mypassw0rd\nOK", ["mypassw0rd"]),
        ("redis> AUTH default s3cr3tpw", ["s3cr3tpw"]),
        ("> AUTH s3cr3tpw", ["s3cr3tpw"]),
        ("cache-1:6380[2]> AUTH foobared", ["foobared"]),  # at a redis prompt any word is the password
        ('redis 127.0.0.1:6379> AUTH "Sup3rS3cret"', ["Sup3rS3cret"]),
        ("$ redis-cli -h cache01 -p 6380 AUTH default 'Zq8xK2mP9' && echo ok", ["Zq8xK2mP9"]),
    ],
)
def test_redis_passwords(text: str, secrets: list[str]) -> None:
    found = find_secrets(text)
    assert [text[f.start : f.end] for f in found] == secrets
    assert {f.kind for f in found} == {"redis_password"}


@pytest.mark.parametrize(
    "text",
    [
        "# requirepass foobared",  # redis.conf's commented-out example
        "user default on nopass ~* &* +@all",  # no password
        "user foo >/tmp/out",  # a shell redirect, not an ACL rule
        "redis-cli -h cache-1 -a $REDIS_PASSWORD ping",
        "AUTH failed",  # a log line, not the command: the value must read as a password there
        "AUTH succeeded",
        "AUTH failed: WRONGPASS invalid username-password pair",  # more than a command's arguments
        "-ERR AUTH <password> called without any password configured for the default user",
        "AUTH <password>",
        "127.0.0.1:6379> AUTH $REDIS_PASSWORD",
        "redis-cli -h cache-1 monitor | grep AUTH failed",
        "OAUTH token refreshed",
        "AUTH LOGIN",  # SMTP: the mechanism, the credentials follow on their own lines
        "AUTH CRAM-MD5",
    ],
)
def test_redis_near_misses(text: str) -> None:
    assert find_secrets(text) == [], text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("AUTH PLAIN AGFsaWNlAHMzY3IzdA==", "AGFsaWNlAHMzY3IzdA=="),  # "\\0alice\\0s3cr3t"
        ("<~ 235 2.7.0 ok\n ~> AUTH PLAIN AHVzZXIAWnE4eEsybVA5\n", "AHVzZXIAWnE4eEsybVA5"),
        ("C: AUTH XOAUTH2 dXNlcj1ib2IBYXV0aD1CZWFyZXIgeWEyOS5hMGFmSDZTTQEB", None),
    ],
)
def test_sasl_initial_responses_carry_credentials(text: str, secret: str | None) -> None:
    found = find_secrets(text)
    assert [f.kind for f in found] == ["sasl_credentials"]
    if secret is not None:
        assert text[found[0].start : found[0].end] == secret


@pytest.mark.parametrize(
    "text",
    [
        "AUTH LOGIN",
        "AUTH PLAIN",  # the credentials come on the next line, after "334"
        "C: AUTH PLAIN =",  # an empty initial response
        "AUTH PLAIN <base64 of \\0user\\0password>",
        "AUTH PLAIN xxxxxxxxxxxxxxxx",
        "SASL LOGIN authentication failed: UGFzc3dvcmQ6",  # base64 of the server's "Password:" prompt
    ],
)
def test_sasl_near_misses(text: str) -> None:
    assert find_secrets(text) == [], text


@pytest.mark.parametrize(
    "text",
    [
        "Refreshing token Zq8xK2mP9vL4nB7cT1wR5yH3jD6f now",
        "clarifai access key dkHL49dId5skLfBjsf342RJkdskdpD54",
        "client secret " + body(AN, 40, "cs"),
        "token " + body(HEX, 40, "tok"),
    ],
)
def test_secret_word_then_a_random_token_without_a_separator(text: str) -> None:
    value = text.split()[-1] if not text.endswith("now") else text.split()[-2]
    assert [(f.kind, text[f.start : f.end]) for f in find_secrets(text)] == [("config_secret", value)]


@pytest.mark.parametrize(
    "text",
    [
        "kubectl get secret my-app-token-7k2px9qz3abc -o yaml",  # a resource name
        "csrf token Zq8xK2mP9vL4nB7cT1wR5yH3jD6f",  # anti-forgery token: per session, not a credential
        "token abcdefghijklmnopqrstuvwxyz123456",  # hand-typed
        "token 12345678901234567890123456789012",  # digits only: an id
        "the secret ingredient of this recipe is patience",
        "mounted secret volume /var/run/secrets/kubernetes.io/serviceaccount",
    ],
)
def test_secret_word_near_misses(text: str) -> None:
    assert find_secrets(text) == [], text


def test_dotted_token_with_a_long_hex_segment_is_not_an_attribute_chain() -> None:
    token = "patXfsZBLOgxbJqSi.fd" + body(HEX, 62, "airtable")  # a segment that starts with a letter
    assert [f.kind for f in find_secrets(f"airtable_pat = {token}")] in (
        ["config_secret"],
        ["airtable_personnal_access_token"],  # (sic: gitleaks' rule id)
    )
    assert find_secrets("api_token = settings.AIRTABLE_TOKEN") == []  # code: an attribute chain


def test_new_rules_stay_fast_on_adversarial_input() -> None:
    import time

    evil = [
        "user a " + "on " * 30_000 + ">",  # an ACL-looking line that never ends in a password
        "ACL SETUSER x " + ">" * 50_000,
        "token " * 20_000,
        ("key " + "A1b2" * 5 + "-") * 5_000,  # 20 token characters, then a character that ends it
        "rnd_" + "a" * 100_000,
        "requirepass " + "x" * 100_000,
        "redis-cli" + " -a" * 30_000,
        "sourcegraph" + "_" * 100_000,
        "AUTH " * 30_000,
        "127.0.0.1:6379> AUTH " + "a " * 50_000,
        "AUTH PLAIN " + "A" * 100_000 + "!",
        "LDAP password " + "-" * 100_000,  # a leader that never reaches a value
        "admin password" + " " * 100_000 + "\n" + "pwd ->" * 20_000,
        '<property name="password" ' + 'x="1" ' * 30_000 + 'value="v"/>',
        "CREATE USER " + "a " * 50_000 + "IDENTIFIED BY 'x'",
        "GRANT ALL TO " * 20_000 + "IDENTIFIED BY",  # was quadratic before the atomic group
        "CREATE USER " * 20_000 + "IDENTIFIED BY",
        '<p name="password" ' * 20_000 + "value=",
    ]
    for text in evil:
        t0 = time.perf_counter()
        find_secrets(text)
        assert time.perf_counter() - t0 < 2.0, text[:40]


@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        ("mysql -uroot -phunter2hunter2 shop", "mysql_password", "hunter2hunter2"),
        ('mysqladmin -u root -p"hunter2hunter2" status', "mysql_password", "hunter2hunter2"),
        ("mysqldump -u root -p's3cret!' shop > shop.sql", "mysql_password", "s3cret!"),
        ("+ MYSQL.EXE -u root -pWinPass1 db", "mysql_password", "WinPass1"),
        ("mariadb-dump -pMariaPw1 db", "mysql_password", "MariaPw1"),
        ("sshpass -p hunter2hunter2 ssh deploy@web1 uptime", "sshpass_password", "hunter2hunter2"),
        ("sshpass -p'S3cr3t!' scp a.tgz web1:", "sshpass_password", "S3cr3t!"),
    ],
)
def test_command_line_passwords_of_database_and_ssh_clients(text: str, kind: str, secret: str) -> None:
    assert [(f.kind, text[f.start : f.end]) for f in find_secrets(text)] == [(kind, secret)]
    assert secret not in scrub(text).text


@pytest.mark.parametrize(
    "text",
    [
        "mysql -u root -p shop",  # -p alone prompts; "shop" is the database
        "mysql -h db -P 3306 -p",  # -P is the port
        "mysql -u app -p$MYSQL_PWD shop",  # a variable, not a value
        'mysql -e "select 1"; mkdir -p /tmp/x',  # another command's -p
        "gcc $(mysql_config --libs) -pthread x.c",  # not a client
        "sshpass -e ssh web1",
        "sshpass -f /run/secrets/pw ssh web1",
        "ssh -p 2222 web1",
    ],
)
def test_command_line_password_near_misses(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("CREATE USER 'shop'@'%' IDENTIFIED BY 'Pl8n-Tr33s!';", "Pl8n-Tr33s!"),
        ("GRANT ALL ON shop.* TO 'shop'@'10.%' IDENTIFIED BY \"Pl8nTr33s\";", "Pl8nTr33s"),
        ("ALTER USER 'root'@'localhost' IDENTIFIED WITH caching_sha2_password BY 'Pl8nTr33s';", "Pl8nTr33s"),
        ("create user scott identified by tiger42;", "tiger42"),  # Oracle: unquoted, ends the statement
        ("ALTER ROLE app IDENTIFIED BY Tr33sPl8n", "Tr33sPl8n"),
    ],
)
def test_sql_statements_that_set_a_password(text: str, secret: str) -> None:
    assert [(f.kind, text[f.start : f.end]) for f in find_secrets(text)] == [("sql_password", secret)]
    assert find_secrets(text, provider_rules=False)  # a format, not a provider


@pytest.mark.parametrize(
    "text",
    [
        "users are identified by their badge number",  # prose
        "grant access to anyone identified by their email address",
        "CREATE USER app IDENTIFIED BY $APP_PASSWORD;",  # a variable
        "CREATE USER app IDENTIFIED BY '<password>';",  # a placeholder
        "CREATE USER app IDENTIFIED EXTERNALLY;",
        "CREATE USER app IDENTIFIED BY fingerprint and more words",  # unquoted, not ending the statement
    ],
)
def test_sql_password_near_misses(text: str) -> None:
    assert find_secrets(text) == []
