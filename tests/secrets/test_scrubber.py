"""The secret scrubber: every family is found, near misses are not, and redaction keeps text usable.

Token values below are synthetic: right shape and length, random-looking, valid for no service.
"""

from __future__ import annotations

import base64
import hashlib
import string

import pytest

from devops_agent.privacy import REDACTED, find_secrets, scrub
from fixtures_canary import random_text as _random

R36 = "Zq8xK2mP9vL4nB7cT1wR5yH3jD6fG0sA8eUq"  # 36 mixed-case alphanumerics
HEX32 = "9f2c4e1a7b3d5f60a8c2e4b6d1f3a5c7"

POSITIVES: list[tuple[str, str, str | None]] = [
    ("github_token", f"GITHUB_TOKEN ghp_{R36}", f"ghp_{R36}"),
    ("github_token", f"using gho_{R36} for oauth", f"gho_{R36}"),
    ("github_pat", f"pat github_pat_11AQX4ZRT7M{R36}_{R36}", f"github_pat_11AQX4ZRT7M{R36}_{R36}"),
    ("gitlab_token", "glpat-Xk9_2mPq7LvB4nRt8wYz in ci", "glpat-Xk9_2mPq7LvB4nRt8wYz"),
    (
        "slack_token",
        "xoxb-2938472910-4829304812-Qw8eRt5yUi2oP9aSd4fGh7jK",
        "xoxb-2938472910-4829304812-Qw8eRt5yUi2oP9aSd4fGh7jK",
    ),
    (
        "slack_webhook",
        "post to https://hooks.slack.com/services/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",
        "hooks.slack.com/services/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",
    ),
    ("stripe_key", "stripe key sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe_key", "rk_live_51Hx9QmLkPq2Zr8VnT4wYs", "rk_live_51Hx9QmLkPq2Zr8VnT4wYs"),
    ("twilio_api_key", f"twilio SK{HEX32}", f"SK{HEX32}"),
    (
        "sendgrid_key",
        "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",
        "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",
    ),
    ("npm_token", f"//registry.npmjs.org/:_authToken=npm_{R36}", f"npm_{R36}"),
    ("pypi_token", "pypi-AgEIcHlwaS5vcmcCJDk0Yzg2NmQ1LTk5ZjEtNGQ3Zi1hNzQ1LWY0ZjkxZDk4NzRjNgACKlsz", None),
    ("openai_key", "OPENAI sk-proj-Xk9m2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY9uI3oP7aS2dF6gH0", None),
    ("openai_key", "sk-Xk9m2Pq7LvB4nRt8T3BlbkFJwYz3Jd6FqW1eR5tY9uI3", None),
    (
        "anthropic_key",
        "sk-ant-api03-" + ("Xk9m2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY9uI3oP7aS2dF6gH0" * 2)[:93] + "AA",
        None,
    ),
    (
        "google_api_key",
        "key=AIzaSyDx9Km2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY",
        "AIzaSyDx9Km2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY",
    ),
    ("heroku_key", "HRKU-Xk9m2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY9uI3oP7aS2dF6gH0jK4lZ8xC1vB5nM", None),
    ("mailgun_key", f"mailgun key-{HEX32}", f"key-{HEX32}"),
    ("shopify_token", f"shpat_{HEX32}", f"shpat_{HEX32}"),
    ("digitalocean_token", f"dop_v1_{HEX32}{HEX32}", f"dop_v1_{HEX32}{HEX32}"),
    # Vault 1.10+ service tokens: hvs. and 90+ characters (a shorter hvs. run is a lookalike now
    # that the generated vault format decides for its own prefix)
    ("vault_token", f"VAULT hvs.CAESI{R36}{R36}{R36[:20]}", f"hvs.CAESI{R36}{R36}{R36[:20]}"),
    (
        "atlassian_token",
        "ATATT3xFfGF0" + "Xk9m2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY9uI3oP7aS2dF6gH0jK4lZ8xC1vB5nM9qE=F7E2D9C4",
        None,
    ),
    (
        "telegram_bot_token",
        "bot 7261948305:AAHx9Km2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY",
        "AAHx9Km2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY",  # the secret half (the bot's id is not one)
    ),
    ("aws_access_key_id", "aws_access_key_id=AKIAQX4ZRT7MWN2PLK5B", "AKIAQX4ZRT7MWN2PLK5B"),
    (
        "azure_sas_signature",
        "https://acct.blob.core.windows.net/c?sv=2020&sig=Xk9m2Pq7LvB4nRt8wYz3Jd6Fq%3D",
        None,
    ),
    (
        "azure_storage_key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + "Xk9m2Pq7LvB4nRt8wYz3" * 4 + "ab==",
        None,
    ),
    ("jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.Xk9m2Pq7LvB4nRt8wYz3Jd6F", None),
    (
        "password_hash",
        "root:$6$Zq8xK2mP$Xk9m2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY9uI3oP7aS2d:19000:0:99999:7:::",
        None,
    ),
]


@pytest.mark.parametrize(
    ("kind", "text", "secret"), POSITIVES, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(POSITIVES)]
)
def test_provider_and_format_secrets_are_found(kind: str, text: str, secret: str | None) -> None:
    result = scrub(text)
    assert result.findings, f"{kind} not found in {text!r}"
    assert REDACTED in result.text
    if secret is not None:
        assert secret not in result.text
        at = text.index(secret)
        # covered by one finding (a generated rule may take the scheme too: https://hooks.slack.com/…)
        assert any(f.start <= at and at + len(secret) <= f.end for f in result.findings)


NEAR_MISSES = [
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",  # documentation placeholder
    "AKIAIOSFODNN7EXAMPLE",  # AWS's documented example key
    "ghp_short",  # too short for the format
    "sk_live_",  # prefix only
    "xoxb-123-abc",  # too short / wrong shape
    "the SK-1 ticket and sg.example.com",  # lookalike prefixes
    "sha256:9f2c4e1a7b3d5f60a8c2e4b6d1f3a5c79f2c4e1a7b3d5f60a8c2e4b6d1f3a5c7",  # a digest, not a secret
    "commit 9f2c4e1a7b3d5f60a8c2e4b6d1f3a5c7e4b6d1f3 merged",  # a git sha
    "-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----",  # no key material
    "Authorization: Bearer <token>",
    "Authorization: Bearer $API_TOKEN",
    "password=",
    "password: ${DB_PASSWORD}",
    'password = os.environ["DB_PASSWORD"]',
    "passwordField: 12, timePasswordChanged: 1515902314887",
    "api_key_path: ~/.config/key.json",
    "curl -u user:password https://example.com",
    "token_expiry=3600 secret_name=db-creds",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_left_alone(text: str) -> None:
    assert find_secrets(text) == [], text


@pytest.mark.parametrize(
    ("text", "kept", "gone"),
    [
        ("postgres://app:S3cr3t!pw@db.internal:5432/app", "postgres://app:", "S3cr3t!pw"),
        (
            "mongodb://testuser:testpass@ds048537.mongolab.com:48537/main",
            "@ds048537.mongolab.com:48537/main",
            "testpass",
        ),
        ("https://user@example.com:p4ss!#@498@github.com/org/repo", "@github.com/org/repo", "p4ss!#@498"),
        ("redis://:hunter22@cache:6379/0", "@cache:6379/0", "hunter22"),
    ],
)
def test_url_password_redaction_keeps_the_url_shape(text: str, kept: str, gone: str) -> None:
    result = scrub(text)
    assert gone not in result.text
    assert kept in result.text
    assert f":{REDACTED}@" in result.text
    assert [f.kind for f in result.findings] == ["url_password"]


def test_url_without_password_or_with_placeholder_is_untouched() -> None:
    for text in ["https://user@host.example.com/x", "postgres://app:${PGPASSWORD}@db/app", "http://a:8080/b"]:
        assert scrub(text).text == text


CONFIG_LINES = [
    ("DB_PASSWORD=admin123", "admin123"),
    ("export MLAB_PASS='password123'", "password123"),
    ('"password": "hunter22",', "hunter22"),
    ("passwd: Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("api_key = 3b6311afca5bd8aac647b316704e9c6d", "3b6311afca5bd8aac647b316704e9c6d"),
    ("client_secret: 'Xk9m2Pq7LvB4nRt8wYz3'", "Xk9m2Pq7LvB4nRt8wYz3"),
    ("define( 'DB_PASSWORD', 'admin' );", "admin"),
    ("<Pass>ExamplePas123</Pass>", "ExamplePas123"),
    ('<connection user="user" password="s3cret!"/>', "s3cret!"),
    ("machine imap.example.com login me@example.com password pass123", "pass123"),
    ("Server=h;Database=d;User Id=u;Password=myPassword;", "myPassword"),
    ("$dbpasswd = 'pass123';", "pass123"),
    ("Connect-VIServer -Server vc -User admin -Password VMware1!", "VMware1!"),
]


@pytest.mark.parametrize(("line", "secret"), CONFIG_LINES)
def test_config_lines_with_secret_named_keys(line: str, secret: str) -> None:
    result = scrub(line)
    assert secret not in result.text, result.text
    assert REDACTED in result.text


@pytest.mark.parametrize(
    "line",
    [
        "password: changeme_please_${ENV}",
        "password = get_password()",
        "secret_key_base: <%= ENV['SECRET_KEY_BASE'] %>",
        "token: null",
        "auth_enabled: true",
        "bucket_key: reports.daily.v2_summary",
        "the password reset email was sent",
    ],
)
def test_config_lines_that_are_not_secrets(line: str) -> None:
    assert find_secrets(line) == [], line


def test_authorization_headers_and_bearer_tokens() -> None:
    text = (
        "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==\n"
        "authorization: Bearer Xk9m2Pq7LvB4nRt8wYz3Jd6FqW1e\n"
        "Authorization: token ghp_" + R36 + "\n"
        "sent with bearer Zq8xK2mP9vL4nB7cT1wR5yH3 ok\n"
    )
    result = scrub(text)
    assert "dXNlcjpwYXNzd29yZDEyMw" not in result.text
    assert "Xk9m2Pq7LvB4nRt8wYz3Jd6FqW1e" not in result.text
    assert R36 not in result.text
    assert "Zq8xK2mP9vL4nB7cT1wR5yH3" not in result.text
    assert result.text.count(REDACTED) == 4
    assert result.text.startswith("Authorization: Basic ")


def test_cookie_values_of_session_like_names() -> None:
    text = "Cookie: theme=dark; sessionid=8f2k4m9x1q7z3v5b; csrftoken=Zq8xK2mP9vL4nB7c\nSet-Cookie: JSESSIONID=A1F3C9E2B7D4; Path=/"
    result = scrub(text)
    assert "theme=dark" in result.text  # not session-like, not random
    assert "8f2k4m9x1q7z3v5b" not in result.text
    assert "Zq8xK2mP9vL4nB7c" not in result.text
    assert "A1F3C9E2B7D4" not in result.text
    assert "Path=/" in result.text


PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEogIBAAKCAQEAjosMtDUqbE1/8zxZac1t8fkh2SxGuMXHk9yxniyM2m76donW\n"
    "GcbdgKgLQfoL67Pi3M3Hatsk7SCxXsZiYr6cXOtJq70VM53rr3cxO3JwKCbJ985D\n"
    "-----END RSA PRIVATE KEY-----"
)


def test_pem_private_key_block_is_removed_whole() -> None:
    text = f"key follows\n{PEM}\ndone"
    result = scrub(text)
    assert result.text == f"key follows\n{REDACTED}\ndone"
    assert [f.kind for f in result.findings] == ["private_key"]


def test_pem_inside_json_with_escaped_newlines() -> None:
    body = PEM.replace("\n", "\\n")
    text = '{"type": "service_account", "private_key": "' + body + '\\n", "client_email": "x"}'
    result = scrub(text)
    assert "MIIEogIBAAKCAQEA" not in result.text
    assert '"client_email": "x"' in result.text


def test_public_key_is_not_a_secret() -> None:
    assert (
        find_secrets(
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----"
        )
        == []
    )


def test_jwt_anywhere() -> None:
    jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    result = scrub(f'{{"msg": "login", "jwt": "{jwt}"}}')
    assert jwt not in result.text
    assert any(f.kind == "jwt" for f in result.findings)


def test_aws_secret_access_key_near_an_access_key_id() -> None:
    text = "AKIAQX4ZRT7MWN2PLK5B wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8mV3kT9L and more"
    result = scrub(text)
    assert "AKIAQX4ZRT7MWN2PLK5B" not in result.text
    assert "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8mV3kT9L" not in result.text


def test_findings_carry_input_offsets_and_scrub_is_idempotent() -> None:
    text = f"a=1 token=ghp_{R36} b=2"
    result = scrub(text)
    f = result.findings[0]
    assert text[f.start : f.end] == f"ghp_{R36}"
    again = scrub(result.text)
    assert again.text == result.text
    assert again.findings == []


def test_large_input_is_linear_and_fast() -> None:
    import time

    line = "2026-03-12T10:11:12Z host-1.prod.acme.com app[123]: user=alice latency_ms=12 key=order:1234\n"
    text = line * 20_000  # ~1.9 MB
    t0 = time.perf_counter()
    assert find_secrets(text) == []
    assert time.perf_counter() - t0 < 5.0  # generous: guards against catastrophic backtracking only
    evil = "password=" + "a" * 50_000 + "\n" + "x" * 50_000 + "@" * 10_000
    t0 = time.perf_counter()
    scrub(evil)
    assert time.perf_counter() - t0 < 5.0


# --- placeholders: hand-typed values are not secrets, in any rule --------------------------------


@pytest.mark.parametrize(
    ("placeholder", "real"),
    [
        # ascending runs, repeated units, marker words, a token cut short by a mask
        ("AIzaSyabcdefghijklmnopqrstuvwxyz1234567", "AIzaSyDx9Km2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY"),
        ("api_key = 'abcdefg12346+FJQCK'", "api_key = 'Xk9m2Pq7+LvB4nRt8'"),
        ("GR134894112312312312312312312", "GR1348941Xk9m2Pq7LvB4nRt8wYz3"),
        ("xoxp-572370529330-573807301142-572331691188-####################", None),
        ("client_secret = 'sampleClientSecretValue'", "client_secret = 'Zq8xK2mP9vL4nB7cT1'"),
        ("secret: dummy-secret-for-tests", "secret: 7Hq2-vLx9-Pm4K-r8Zt"),
    ],
)
def test_hand_typed_placeholders_are_not_secrets(placeholder: str, real: str | None) -> None:
    assert find_secrets(placeholder) == [], placeholder
    if real is not None:
        assert find_secrets(real), real


B62 = string.ascii_letters + string.digits


@pytest.mark.parametrize(
    ("typed", "real"),
    [
        # a generated provider format (Anthropic: prefix, 93 characters, "AA"), its body typed
        # (a marker word repeated) or edited (a marker word inside)
        (
            "sk-ant-api03-" + ("SAMPLE" * 16)[:93] + "AA",
            "sk-ant-api03-" + _random(B62 + "-_", 93, "anthropic") + "AA",
        ),
        (
            "sk-ant-api03-" + _random(B62, 30, "a") + "EXAMPLEKEY" + _random(B62, 53, "b") + "AA",
            "sk-ant-api03-" + _random(B62, 93, "anthropic-2") + "AA",
        ),
        # a prefix no rule names (the shapes): the body's groups repeat, or a mask ends it
        ("qz_live-4321-4321-4321-" + _random("0123456789abcdef", 32, "q"), None),
        ("tkn_" + _random(B62, 24, "tkn") + "XXXXXXXX", "tkn_" + _random(B62, 32, "tkn")),
        # three letters and three digits counting up, side by side, end a typed body
        ("zq_" + _random(B62, 30, "zq") + "def456", "zq_" + _random(B62, 36, "zq")),
    ],
)
def test_a_token_whose_body_was_typed_by_hand_is_left(typed: str, real: str | None) -> None:
    # The provider formats and the shapes apply the documentation-value test the context rules
    # always applied: a real token never holds a repeated unit, a marker word or a counting run.
    assert find_secrets(f"token: {typed}") == [], typed
    if real is not None:
        text = f"token: {real}"
        assert [text[f.start : f.end] for f in find_secrets(text)] == [real]


def test_base64_of_zero_bytes_is_not_a_typed_run() -> None:
    # DER structures (an encrypted login record, a key) carry runs of zero bytes, "AAAA…" in base64:
    # binary padding, not a placeholder someone typed.
    blob = base64.b64encode(
        bytes([0x30, 0x3A, 0x04, 0x10]) + bytes(14) + hashlib.sha256(b"der").digest()
    ).decode()
    assert "AAAAAAAAAAAA" in blob
    line = f'"client_secret": "{blob}"'
    assert [line[f.start : f.end] for f in find_secrets(line)] == [blob]


def test_hexadecimal_with_a_stray_capital_is_a_digest_not_a_token() -> None:
    digest = hashlib.sha1(b"commit").hexdigest()
    edited = digest[:4] + digest[4].upper() + digest[5:] if digest[4].isalpha() else "C" + digest[1:]
    assert find_secrets(f"ref {edited} merged") == []
    token = _random(B62, 40, "bare")
    assert find_secrets(f"ref {token} merged")


@pytest.mark.parametrize(
    "line",
    [
        "password: changeme",
        "DB_PASSWORD=changeit",
        '"password": "YOURPASSWORD"',
        "password: your_password_here",
        '"password": "&lt;YOURPASSWORD&gt;"',
        "- echo 'export DATABASE_PASSWORD=\"'$PRECOMPILE_PASSWORD'\"' >> .env",
        "Authorization: Bearer <Openverse API token>",
        'curl -H "Authorization: basic {base64(email:password)}"',
        'curl -H "Authorization: Bearer $(gcloud auth print-access-token)" https://x.googleapis.com',
        "put '/forgot-password' => \"cms/sites/passwords#update\"",
        "csrf-token=Mj2qykJO5rELyHgezQ69nzUX0i3OH67V7+V4eUrLfpuyOuxmiW9rhROG/Whikle15==",
        '<entry key="jetbrains.mps.v8_elimination" value="executed" />',
        '<add key="ConnectionString_B2B" value="Server=db;Database=B2B" />',
        "password_attempts: 3\npasswd_max_age: 365\npassword_cost: 12",
        'kms_key_id: "555ea4a3-d53a-4412-9c66-3a7cb667b0d6"',
        'existingSecret: "my-secret"',
        "AUTH0_DOMAIN=appman18922506.auth0.com",
    ],
)
def test_more_config_lines_that_are_not_secrets(line: str) -> None:
    assert find_secrets(line) == [], line


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("export AWS_ACCESS_KEY_ID=yLryKGwcGc3ez9G8YAnjeYMQOc", "yLryKGwcGc3ez9G8YAnjeYMQOc"),
        ('password = "123456"', "123456"),
        ("define('NONCE_SALT', ':9URM*n56|I|Rf$|ud0cFJ<KAA<1h_w]A!/?])<q+!qK>+Lq&j9^-!{%%pW. ,Z=');", None),
        ('if creds.Secret != "open-sesame" {', "open-sesame"),
        ('{"msg": "{\\"password\\": \\"hunter22x\\"}"}', "hunter22x"),
        (
            "clientSecret: \\\\'ca6819a54657af0d87960af15315319f8a628a53\\\\',",
            "ca6819a54657af0d87960af15315319f8a628a53",
        ),
        ('VAULT_CLIENT_TOKEN="s.Z4bTMtngfLeQ18AqVoBBkUAOD1"', "s.Z4bTMtngfLeQ18AqVoBBkUAOD1"),
    ],
)
def test_more_config_lines_with_secrets(line: str, secret: str | None) -> None:
    result = scrub(line)
    assert result.findings, line
    if secret is not None:
        assert secret not in result.text, result.text


def test_a_quoted_value_may_start_with_a_colon_but_an_unquoted_one_is_a_symbol() -> None:
    assert find_secrets("define('AUTH_SALT', ':Xk9m2Pq7LvB4nRt8wYz3');")
    assert find_secrets("secret_key: :from_env") == []


# --- new provider and log formats ------------------------------------------------------------------

JENKINS_LOG = (
    "*************************************************************\n\n"
    "Jenkins initial setup is required. An admin user has been created and a password generated.\n"
    "Please use the following password to proceed to installation:\n\n"
    f"{HEX32}\n\n"
    "This may also be found at: /var/jenkins_home/secrets/initialAdminPassword\n"
)


@pytest.mark.parametrize(
    ("kind", "text", "secret"),
    [
        ("jenkins_setup_password", JENKINS_LOG, HEX32),
        # a UUID is a secret where the key says so (Postmark tokens are UUIDs)
        ("config_secret", '"postmark_server_token": "f59dffd2-83ea-47c7-ba8f-95e053a6d0ae"', None),
        ("config_secret", "X-Postmark-Server-Token: f59dffd2-83ea-47c7-ba8f-95e053a6d0ae", None),
        (  # TrueNAS API key: "<id>-<64 random>", found by its shape
            "prefixed_token",
            '{"msg": "method", "method": "auth.login_with_api_key", "params": ["8-' + R36 + R36[:28] + '"]}',
            "8-" + R36 + R36[:28],
        ),
        ("aws_amazon_bedrock_api_key_long_lived", "ABSKQmVkcm9ja0FQSUtleS1" + R36 * 3, None),
        (
            "terraform_variable_default",
            'variable "corp_okta_api_token" {\n  type = string\n  default = "004EWTpRQT_HJtG_nL-agxacgzYHjxPcF99k"\n}\n',
            "004EWTpRQT_HJtG_nL-agxacgzYHjxPcF99k",
        ),
        ("prefixed_token", "b.AAAAAQ" + R36 * 3, None),  # a legacy Vault batch token: its shape
        (
            "pgpass_password",
            "#hostname:port:database:username:password\ndb1:5432:app:deploy:Zq8x\\:K2mP9",
            "Zq8x",
        ),
        ("cli_password_flag", f"deploy -vaultToken s.{R36} -v", f"s.{R36}"),
    ],
)
def test_new_formats_are_found(kind: str, text: str, secret: str | None) -> None:
    result = scrub(text)
    assert kind in {f.kind for f in result.findings}, result.findings
    if secret is not None:
        assert secret not in result.text


@pytest.mark.parametrize(
    "text",
    [
        "Please use the following password to proceed to installation: see the docs",
        "CC_TEST_REPORTER_ID: ${{ secrets.CC_TEST_REPORTER_ID }}",
        '"postmark_message_id": "f59dffd2-83ea-47c7-ba8f-95e053a6d0ae"',
        '{"method": "auth.login_with_api_key", "params": ["<API_KEY>"]}',
        "ABSKQmVkcm9ja0FQSUtleS1EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMPLE=",
        'variable "region" {\n  default = "eu-west-1-b"\n}\n',
        'variable "api_token_ttl" {\n  default = "3600"\n}\n',
        "deploy -bypassCache true -compassToken",
        "daemon:*:17431:0:99999:7:::\nwww-data:*:17431:0:99999:7:::",  # /etc/shadow, not ~/.pgpass
    ],
)
def test_new_format_near_misses(text: str) -> None:
    assert find_secrets(text) == [], text


def test_a_terraform_default_is_a_secret_only_under_a_secret_name() -> None:
    text = 'variable "region" {\n  default = "eu-west-1-Xk9m2Pq7LvB4nRt8"\n}\n'
    # the random-looking suffix may be masked by its shape, but not as a Terraform secret default
    assert "terraform_variable_default" not in {f.kind for f in find_secrets(text)}


def test_entra_client_secret_must_end_at_a_token_boundary() -> None:
    secret = "5pX8Q~MmTI8OMBJFVqMlFR4DE3Spz6Qm.xO.Gbf-"
    assert [f.kind for f in find_secrets(f"client_secret={secret}")] == ["azure_ad_client_secret"]
    usk = "Identity=USK@u2vn3Lh6,4~q8Q~3wIHjX9DT0yCNfQmr9oxmYrDZoQVLOdNg~yk0,AQACAAE/x"
    # the random part may be masked by its shape, but it is no Entra secret cut out of a longer run
    assert "azure_ad_client_secret" not in {f.kind for f in find_secrets(usk)}


def test_pem_key_split_into_concatenated_string_literals() -> None:
    body = '" +\n"'.join(["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAlwAAAAdzc2gtcn"] * 3)
    text = f'key = "-----BEGIN RSA PRIVATE KEY-----" +\n"{body}" +\n"-----END RSA PRIVATE KEY-----";'
    result = scrub(text)
    assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUA" not in result.text
    assert [f.kind for f in result.findings] == ["private_key"]


# --- curl -u and other CLI credentials -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('curl -u "d2LkV78zLx!t:" https://localhost:9200', "d2LkV78zLx!t"),  # an API key as the user name
        ('curl -X POST --user "{acd3c08b-74e8}":"{ZqL5kVrX1n8tA2}" https://gw.example', "ZqL5kVrX1n8tA2"),
        (
            "curl https://x.example/token \\\n-u client-id_zmNtW:5uC5Y4Mcvdl5rB56rBmxnvB4",
            "5uC5Y4Mcvdl5rB56rBmxnvB4",
        ),
        ("curl -u elastic:Summer123456 https://es:9200", "Summer123456"),  # a weak password is still one
    ],
)
def test_curl_user_credentials(text: str, secret: str) -> None:
    result = scrub(text)
    assert secret not in result.text, result.text


@pytest.mark.parametrize(
    "text",
    [
        "docker run -u 1000:1000 app",
        "docker exec -u www-data:www-data web php artisan",
        "curl -u 'test:test' https://x.example",
        'curl -u "alice:" https://x.example',  # a user name alone is not a key
        'curl --user "${username}":"${password}"',
        "curl -u admin:changeme https://x.example",
    ],
)
def test_cli_user_near_misses(text: str) -> None:
    assert find_secrets(text) == [], text


# --- ordinary log lines stay untouched ---------------------------------------------------------------

ORDINARY_LOGS = """\
2026-03-12T10:11:12.345Z INFO  [main] o.s.b.w.e.tomcat.TomcatWebServer : Tomcat started on port(s): 8080
commit 3b18e512dba79e4c8300dd08aeb37f8e728b8dad
Merge: 9f2c4e1 a7b3d5f
request_id=7c9e6679-7425-40de-944b-e07fc1f90ae7 trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span=00f067aa0ba902b7
pod/payments-api-7d9f8b6c5d-x2k9p   1/1   Running   0   3d
Normal  Pulled  kubelet  Container image "ghcr.io/acme/api@sha256:9f2c4e1a7b3d5f60a8c2e4b6d1f3a5c79f2c4e1a7b3d5f60a8c2e4b6d1f3a5c7" already present
image: registry.k8s.io/pause:3.9 imageID: docker-pullable://registry.k8s.io/pause@sha256:7031c1b283388d2c2e09b57badb803c05ebed362dc88d84b480cc47f72a21097
Exception in thread "main" java.lang.IllegalStateException: token store not initialised
\tat com.acme.auth.TokenService.refresh(TokenService.java:142)
\tat com.acme.auth.PasswordEncoderConfig$$EnhancerBySpringCGLIB$$5f1e7a2b.passwordEncoder(<generated>)
\tat java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)
Caused by: javax.crypto.BadPaddingException: Given final block not properly padded. Such issues can arise if a bad key is used during decryption.
WARN  secret "db-credentials" not found in namespace "payments"; mounting volume secret-volume failed
kubectl create secret generic app-secrets --from-file=./config.json
auth: login succeeded for user=deploy via key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8
npm notice package: @acme/ui@4.12.3 integrity: sha512-k4bq6vbR5yA7Xw1sDQcK8Ym3wq0J6pL+u9z8qj1m6TGVh1r2wN8m9o6k0Q4p2y7l5Z3a4b6c8d0e2f4g6h8j0k2m4==
password reset requested; token expires in 3600s (token_ttl=3600)
"""


def test_ordinary_log_lines_are_not_secrets() -> None:
    found = [(f.kind, ORDINARY_LOGS[f.start : f.end]) for f in find_secrets(ORDINARY_LOGS)]
    assert found == []


# --- passwords written in prose ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Connect to db01 using password Sup3rS3cretPw! then run the migration", "Sup3rS3cretPw!"),
        ("the password is Hunter2!x", "Hunter2!x"),
        ("The root password is: S3cr3t-Pa55", "S3cr3t-Pa55"),
        ("The password is Hunter2x.", "Hunter2x"),  # the sentence's full stop stays
        ("password was Passw0rd123 until the rotation", "Passw0rd123"),
        ("the password for user deploy is Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("password for admin: Adm1n!2024", "Adm1n!2024"),
        ("The password for the admin account is: N0tS0Secret#", "N0tS0Secret#"),
        ("log in with password Winter2024! and rotate it", "Winter2024!"),
        ("use the password Zq8x!K2mP to log in", "Zq8x!K2mP"),
        ("connect with password 'Sup3rS3cretPw!'", "Sup3rS3cretPw!"),
        ("PASSPHRASE IS Qm7x!vR2x-Lp9z", "Qm7x!vR2x-Lp9z"),
        ("the new password is Zq8xK2mPvLnBcTwRyHjDfG", "Zq8xK2mPvLnBcTwRyHjDfG"),  # letters only, random
    ],
)
def test_passwords_written_in_prose(text: str, secret: str) -> None:
    found = find_secrets(text)
    assert [(f.kind, text[f.start : f.end]) for f in found] == [("prose_password", secret)]
    assert scrub(text).text == text.replace(secret, REDACTED)


@pytest.mark.parametrize(
    "text",
    [
        "the password is incorrect",
        "password was changed",
        "password for user bob has expired",
        "password is required",
        "password is too short",
        "password reset link sent",
        "enter your password",
        "password: ********",
        "password: <redacted>",
        "password is stored in Vault",
        "the password is wrong!",
        "Your password is about to expire in 3 days",
        "password is 8 characters",
        "password is 12345678",  # digits alone: a PIN or a count, left
        "password must be 8-16 characters",
        "password is auto-generated",
        "The password is Base64-encoded",
        "The password is base64 encoded",
        "password is hunter2 hashed",
        "the password is SHA256",
        "password is sha256(salt+pw)",
        "password is **not** stored",
        "The password is (optional)",
        "password is ${DB_PASSWORD}",
        "password is in /run/secrets/db_password",
        "password is your_password_here",
        "password was reset by admin01 yesterday",
        "the password is [REDACTED_SECRET]",  # scrubbing twice changes nothing
        "Changing password for user bob.",
        "sudo passwd deploy01",
        "cd /srv && pwd && ls",
        "use password authentication instead of keys",
    ],
)
def test_prose_about_passwords_is_not_a_password(text: str) -> None:
    assert find_secrets(text) == [], text


PASSWORD_LOG_LINES = """\
Mar 12 10:11:12 web1 sshd[4242]: Failed password for invalid user admin from 10.0.0.1 port 22 ssh2
Mar 12 10:11:13 web1 sshd[4243]: Accepted password for bob from 10.0.0.2 port 51234 ssh2
Mar 12 10:11:14 web1 sshd[4244]: Failed password for deploy01 from 10.0.0.3 port 40022 ssh2
Mar 12 10:11:15 web1 sshd[4245]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=10.0.0.1  user=root
Mar 12 10:11:16 web1 sshd[4246]: password authentication disabled
Mar 12 10:11:17 mail postfix/smtpd[811]: warning: unknown[10.0.0.9]: SASL LOGIN authentication failed: UGFzc3dvcmQ6
(error) WRONGPASS invalid username-password pair or user is disabled.
Please use the following password to proceed to installation: see the docs
"""


def test_log_lines_about_passwords_are_not_secrets() -> None:
    found = [(f.kind, PASSWORD_LOG_LINES[f.start : f.end]) for f in find_secrets(PASSWORD_LOG_LINES)]
    assert found == []


def test_keywords_differing_only_in_case_index_their_own_lines() -> None:
    # "AUTH" (Redis, exact case) and "auth" (config keys, any case) share one automaton entry.
    from devops_agent.secrets.scrubber import LineIndex

    text = 'x auth y\nAUTH s3cr3tpw\n{"auth": "X3Rva2VuOjEyMzQuMThqZjg0MWZrbDQwYU90dTNr"}'
    index = LineIndex(text)
    assert [text[lo:hi] for lo, hi in index.lines("AUTH")] == ["AUTH s3cr3tpw"]
    assert len(index.lines("auth")) == 3
    assert [f.kind for f in find_secrets(text)] == ["redis_password", "config_secret"]


def test_prose_password_rule_stays_fast_on_adversarial_input() -> None:
    import time

    evil = [
        "password " * 20_000,
        "password for " * 20_000,
        "password is " + "A1!" * 50_000,
        "using password " + "a" * 100_000,
        "password for " + "x" * 100_000 + " is",
    ]
    for text in evil:
        t0 = time.perf_counter()
        find_secrets(text)
        assert time.perf_counter() - t0 < 2.0, text[:40]


# --- identifiers the guard masks (recognizers): buckets, public keys, PHP users --------------------


def _entities(text: str) -> list[tuple[str, str]]:
    from devops_agent.privacy import Anonymizer

    return [(e.type, e.original) for e in Anonymizer(b"k" * 32, "s").anonymize(text).entities]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("get https://acme-logs.s3.us-west-1.amazonaws.com/x", [("BUCKET", "acme-logs")]),
        (
            "host_bucket = dummy_bucket-9u3258hj.s3.us-west-1.amazonaws.com",
            [("BUCKET", "dummy_bucket-9u3258hj")],
        ),
        ("s3.amazonaws.com/acme-backups/db.sql.gz", [("BUCKET", "acme-backups")]),
        ("redirect=http%2F%2Facme-assets.s3.amazonaws.com", [("BUCKET", "acme-assets")]),
        ('"Resource": "arn:aws:s3:::acme_corporate_bucket/*"', [("BUCKET", "acme_corporate_bucket")]),
        ("https://storage.googleapis.com/acme-ml-models/v3.bin", [("BUCKET", "acme-ml-models")]),
        ("export S3_BUCKET=acme-reports-eu", [("BUCKET", "acme-reports-eu")]),
        ("define( 'DB_USER',     'wpadmin' );", [("USERNAME", "wpadmin")]),
    ],
)
def test_identifier_recognizers(text: str, expected: list[tuple[str, str]]) -> None:
    assert _entities(text) == expected


def test_ssh_public_keys_and_age_recipients_are_masked_as_public_keys() -> None:
    blob = "AAAAB3NzaC1yc2EAAAADAQABAAABAQCOiwy0NSpsTX/zPFlpzW3x+SHZLEa4xceT3LGeLIzabvp2idYZ"
    assert _entities(f"ssh-rsa {blob} deploy") == [("PUBLIC_KEY", blob)]
    age = "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"
    assert _entities(f"recipient: {age}") == [("PUBLIC_KEY", age)]
    assert _entities("ssh-rsa AAAA too short, and age1 is a word") == []


@pytest.mark.parametrize(
    "text",
    [
        "host_base = s3.us-west-1.amazonaws.com",  # public regional endpoints stay readable
        "queue https://sqs.eu-west-1.amazonaws.com/1/q",
        "GET https://storage.googleapis.com/storage/v1/b?project=x",  # the JSON API, not a bucket
        '"bucket_key": "SalesResults-1.2"',
        "bucket: ${BUCKET_NAME}",
        "expr: sum(rate(apiserver_request_sli_duration_seconds_bucket:increase1h[30d]))",
        'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{job="api"}[5m])))',
        'roles = ["user", "admin"]',
        "# off by default to not distract the user: the focus in a terminal window",
        "#hostname:port:database:username:password",
    ],
)
def test_identifier_near_misses(text: str) -> None:
    assert [t for t, _ in _entities(text) if t in ("BUCKET", "PUBLIC_KEY", "USERNAME", "HOST")] == []


def test_new_patterns_stay_fast_on_adversarial_input() -> None:
    import time

    from devops_agent.privacy import Anonymizer

    guard = Anonymizer(b"k" * 32, "s")
    evil = [
        ("x.s3-" + "-" * 95 + "x ") * 200 + " amazonaws.com",
        "bucket = " + "a" * 100_000,
        'variable "token" {' + " " * 100_000,
        "h:5432:d:u:" + "\\" * 100_000,
        " -u " + "a" * 100_000 + ":",
        "secret = '" + "ab" * 30_000 + "'",
        "ssh-rsa " + " " * 50_000 + "AAAA",
    ]
    for text in evil:
        t0 = time.perf_counter()
        guard.anonymize(text)
        assert time.perf_counter() - t0 < 2.0, text[:40]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('<property name="db.password" value="Pl8n-Tr33s!"/>', "Pl8n-Tr33s!"),  # Spring, Ant
        (
            '<add key="PaymentApiSecret" value="Zq8xK2mP9vL4nB7cT1wR5yH3" />',
            "Zq8xK2mP9vL4nB7cT1wR5yH3",
        ),  # .NET
        ('<entry key="smtp.password" type="string" value="Pl8nTr33s"/>', "Pl8nTr33s"),  # attributes between
        ('<input type="password" name="password" value="Pl8nTr33s">', "Pl8nTr33s"),  # a pre-filled form
    ],
)
def test_xml_name_value_pairs_with_a_secret_name(text: str, secret: str) -> None:
    assert [text[f.start : f.end] for f in find_secrets(text)] == [secret]


@pytest.mark.parametrize(
    "text",
    [
        '<add key="Timeout" value="30"/>',
        '<property name="passwordField" value="pw"/>',  # metadata about a password
        '<param name="password" value="${db.password}"/>',  # a reference
        '<input type="hidden" name="authenticity_token" value="' + R36 + '"/>',  # anti-forgery
        '<input type="hidden" name="__RequestVerificationToken" value="' + R36 + '"/>',
    ],
)
def test_xml_name_value_near_misses(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("    LDAP password            ----   K7#vQ2!mZp", "K7#vQ2!mZp"),  # a table laid out for reading
        ("Admin password .......... Wint3r-Harb0r!", "Wint3r-Harb0r!"),
        ("root pwd   ->   Pl8n-Tr33s9", "Pl8n-Tr33s9"),
    ],
)
def test_a_password_after_a_leader_in_a_table(text: str, secret: str) -> None:
    assert [text[f.start : f.end] for f in find_secrets(text)] == [secret]


@pytest.mark.parametrize(
    "text",
    [
        "Password   ----   see the vault",  # words, not one value
        "Reset password ........ https://id.example.org/reset",  # a URL
        "Password policy   ->   enforced",  # an English word
        "password --------------- 8 characters",
        "  --password-file   /etc/app/pw",  # a flag and a path
    ],
)
def test_leader_layout_near_misses(text: str) -> None:
    assert find_secrets(text) == []
