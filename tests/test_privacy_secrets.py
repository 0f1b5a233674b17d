"""The secret scrubber: every family is found, near misses are not, and redaction keeps text usable.

Token values below are synthetic: right shape and length, random-looking, valid for no service.
"""

from __future__ import annotations

import pytest

from devops_agent.privacy import REDACTED, find_secrets, scrub

R36 = "Zq8xK2mP9vL4nB7cT1wR5yH3jD6fG0sA8eUq"  # 36 mixed-case alphanumerics
HEX32 = "9f2c4e1a7b3d5f60a8c2e4b6d1f3a5c7"

POSITIVES: list[tuple[str, str, str]] = [
    ("github_token", f"GITHUB_TOKEN ghp_{R36}", f"ghp_{R36}"),
    ("github_token", f"using gho_{R36} for oauth", f"gho_{R36}"),
    ("github_pat", f"pat github_pat_11ABCDEFG0{R36}_{R36}", f"github_pat_11ABCDEFG0{R36}_{R36}"),
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
    (
        "vault_token",
        "VAULT hvs.CAESIXk9m2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY",
        "hvs.CAESIXk9m2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY",
    ),
    (
        "atlassian_token",
        "ATATT3xFfGF0" + "Xk9m2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY9uI3oP7aS2dF6gH0jK4lZ8xC1vB5nM9qE=F7E2D9C4",
        None,
    ),
    (
        "telegram_bot_token",
        "bot 7261948305:AAHx9Km2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY",
        "7261948305:AAHx9Km2Pq7LvB4nRt8wYz3Jd6FqW1eR5tY",
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
        assert any(text[f.start : f.end] == secret for f in result.findings)


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
