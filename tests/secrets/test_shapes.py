"""Token shapes (``secrets/shapes.py``): secrets of providers no rule names, by how they look.

Token bodies are generated from a hash at test time, so this file holds no literal a push-protection
scanner would take for a token, and no provider's real format: the prefixes are made up.
"""

from __future__ import annotations

import base64
import json
import string
import time

import pytest

from devops_agent.privacy import find_secrets
from devops_agent.secrets.shapes import random_body
from fixtures_canary import random_text

AN = string.ascii_letters + string.digits
LOWAN = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"


def body(alphabet: str, n: int, seed: str) -> str:
    """``n`` characters of ``alphabet``, pseudo-random and stable for ``seed`` (with a digit early)."""
    text = random_text(alphabet, n, seed)
    return "7" + text[1:] if any(c.isdigit() for c in alphabet) else text


def spans(text: str) -> list[str]:
    return [text[f.start : f.end] for f in find_secrets(text)]


def test_provider_and_format_rules_off_leave_the_shapes_on() -> None:
    token = "zqx_" + body(AN, 36, "zqx")
    text = f"export ZQX={token}"
    assert spans(text) == [token]
    assert [f.kind for f in find_secrets(text, provider_rules=False)] == ["prefixed_token"]


@pytest.mark.parametrize(
    "token",
    [
        "zqx_" + body(AN, 32, "a"),  # prefix_ + base62
        "qwk-live-" + body(AN, 40, "b"),  # two prefix parts
        "mnb.pt." + body(AN, 43, "c"),  # dotted, judged by its longest part
        "vrt_" + body(HEX, 40, "d"),  # a hexadecimal body after a prefix
        "plk-" + body(string.digits, 12, "e") + "-" + body(HEX, 32, "f"),  # groups, one long
        "10-" + body(AN, 64, "g"),  # "<id>-<random>" (a TrueNAS key's shape)
        body(AN, 48, "h"),  # a bare run of both cases and digits, 32+ long
    ],
)
def test_unfamiliar_prefixes_are_found_by_shape(token: str) -> None:
    for text in (f"the job failed with {token} in its env", f'cfg = {{"k": "{token}"}}', f"--flag={token}."):
        assert token in spans(text), text


@pytest.mark.parametrize(
    "text",
    [
        "pod/payments-api-7d9f8b6c5d-x2k9p   1/1   Running",  # Kubernetes names: lower-case, short parts
        "nova.compute.claims [req-d82fab16-60f8-4c9f-bde5-3b4f8a2c1e9d admin] Claim successful",  # UUID
        "blk_-1608999687919862906 terminating",  # an HDFS block id: digits
        "container_1445144423722_0020_01_000002 exited",  # a YARN container: numbers
        "at org.slf4j.impl.Log4jLoggerAdapter.info(Log4jLoggerAdapter.java:304)",  # a dotted name
        "key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",  # a labelled digest
        "integrity sha512-" + body(AN, 60, "sri"),  # a digest named by its algorithm
        "GET /static/app-" + body(HEX, 20, "js") + ".js 200",  # a fingerprinted file name
        "def test_parse_rfc2822_date_with_timezone_offset_2(self):",  # an identifier
        "tryToReloadTodayBasicSteps1514044800223",  # camelCase words and a timestamp
        "recipient: age1" + body("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 58, "age"),  # lower-case bech32: public
        "commit " + body(HEX, 40, "sha") + " (HEAD -> main)",  # a git hash
        "traceID=" + body(HEX, 32, "trace"),  # a trace id after "=", hexadecimal
    ],
)
def test_ordinary_machine_text_is_not_a_token(text: str) -> None:
    assert [f for f in find_secrets(text) if f.kind == "prefixed_token"] == [], text


def test_random_body_tells_generated_from_written() -> None:
    assert random_body(body(AN, 24, "r"))
    assert random_body(body(LOWAN, 32, "r2"))
    assert not random_body("ResourceFromNamespaceTest01")  # words
    assert not random_body("aaaaaaaaaaaaaaaaaaaa12")  # one symbol
    assert not random_body(body(string.ascii_letters, 30, "letters"))  # no digit: a word-like run
    assert not random_body("short7x9")
    assert not random_body("a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6")  # letters and digits counting up
    assert not random_body("X9y8Z7a6B5c4D3e2F1g0H9i8J7k6L5m4")  # and down: typed, not generated


def _jwt(header: dict[str, str], payload: dict[str, str], pretty: bool = False) -> str:
    def seg(obj: dict[str, str]) -> str:
        raw = json.dumps(obj, indent=2 if pretty else None).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    return f"{seg(header)}.{seg(payload)}.{body(AN, 43, 'sig')}"


@pytest.mark.parametrize("pretty", [False, True])
@pytest.mark.parametrize("template", ["token = {}", "token={}", "Cookie: session={}", "?access_token={}&x=1"])
def test_jwt_after_token_equals_and_anywhere(template: str, pretty: bool) -> None:
    jwt = _jwt({"alg": "RS256", "typ": "JWT"}, {"sub": "1234", "iss": "kubernetes"}, pretty)
    text = template.format(jwt)
    at = text.index(jwt)
    assert any(f.start <= at and at + len(jwt) <= f.end for f in find_secrets(text)), text


def test_base64_json_holding_a_random_key_is_a_secret() -> None:
    key = base64.b64encode(json.dumps({"k": body(AN, 32, "gk"), "n": "admin", "id": 1}).encode()).decode()
    assert spans(f'client = Client("{key}", host=h)') == [key]
    cursor = base64.b64encode(json.dumps({"offset": 10, "page": "next"}).encode()).decode()
    assert find_secrets(f"next_cursor: {cursor}") == []  # a pagination cursor holds nothing random


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.chatapp.example/services/T0"
        + body(AN, 8, "t")
        + "/B0"
        + body(AN, 8, "u")
        + "/"
        + body(AN, 24, "v"),
        "https://notify.example.com/api/webhooks/123456789/" + body(AN, 40, "w"),
    ],
)
def test_webhook_urls_lose_their_random_path_parts(url: str) -> None:
    text = f"curl -X POST {url}"
    masked = "".join(spans(text))
    assert url.rsplit("/", 1)[1] in masked


def test_secret_word_then_a_value_in_prose() -> None:
    value = body(HEX, 32, "prose")
    assert spans(f"the api key is {value}") == [value]
    grouped = "7Hq2-vLx9-Pm4K-r8Zt"
    assert spans(f"client secret {grouped}") == [grouped]
    assert find_secrets("kubectl get secret my-app-token-7k2px9qz3abc -o yaml") == []
    assert find_secrets("the key is missing") == []


def test_shapes_stay_fast_on_long_runs() -> None:
    evil = [
        "a" * 200_000,
        ("zqx_" + "A1b2" * 100 + " ") * 2_000,
        "-" * 200_000,
        ("x." * 100_000),
        "eyJ" + "A" * 200_000,
        "https://hooks.example/" + "a/" * 50_000,
    ]
    for text in evil:
        t0 = time.perf_counter()
        find_secrets(text)
        assert time.perf_counter() - t0 < 2.0, text[:40]


UPPER36 = string.ascii_uppercase + string.digits


def test_a_long_run_of_capitals_and_digits_is_a_key_a_short_one_an_id() -> None:
    key = body(UPPER36, 64, "upper")  # base36 in capitals, as some generators write keys
    assert spans(f"value {key}") == [key]
    for text in (
        "order " + body(UPPER36, 26, "ulid"),  # a ULID or an order number: an id
        "id " + body(UPPER36, 40, "mid"),  # under 48 characters
        "sum " + body("0123456789ABCDEF", 64, "hexup"),  # upper-case hex: a digest
    ):
        assert [f for f in find_secrets(text) if f.kind == "prefixed_token"] == [], text


def test_fast_scans_answer_as_the_plain_regexes_do() -> None:
    """``_runs`` (candidate starts, then ``_RUN_RX.match``) and the byte reading of
    ``_typed_sequence`` are speed-ups: each must give what the plain regex gives, also at the edges
    (a run starting right after ``lo`` with ``://`` before it, runs over 400, ``=`` padding, a
    counting run that wraps from z to a, non-ASCII letters that lower-case to ASCII)."""
    import random

    from devops_agent.secrets import shapes

    def typed_by_regex(core: str) -> bool:
        letters, digits = core.translate(shapes._NOT_LETTERS).lower(), core.translate(shapes._NOT_DIGITS)
        return shapes._SEQ6_RX.search(letters) is not None or shapes._SEQ6_RX.search(digits) is not None

    rng = random.Random(30)
    pieces = ["a", "B", "7", "_", ".", "~", "-", "+", "/", "=", "==", ":", "://", " ", "\n", '"', "é"]
    texts = [
        "x://" + "k" * 30, "://" + "A1" * 15 + "==", "a" * 401 + " " + "b7" * 12, "=" + "c3" * 12 + "=+",
    ]  # fmt: skip
    for _ in range(3000):
        texts.append(
            "".join(rng.choice(pieces) if rng.random() < 0.2 else rng.choice(AN) for _ in range(120))
        )
    for text in texts:
        for lo in {0, 1, 2, 3, 4, rng.randrange(len(text) + 1)}:
            want = [m.span() for m in shapes._RUN_RX.finditer(text, lo, len(text))]
            assert [m.span() for m in shapes._runs(text, lo, len(text))] == want, (text, lo)

    cores = ["yzAbcd", "a1B2c3D4e5F6", "X9y8Z7a6B5c4", "edcbaZ", "78901-2", "\u212aLMNOP", "ghi\u0130jkl"]
    for _ in range(3000):
        start, step = rng.randrange(36), rng.choice((1, -1))
        run = "".join(LOWAN[(start + step * i) % 36] for i in range(rng.randrange(3, 9)))
        noise = "".join(rng.choice(AN + "_-.é\u212a") for _ in range(rng.randrange(12)))
        cores.append("".join(c.upper() if rng.random() < 0.3 else c for c in noise + run + noise[::-1]))
    for core in cores:
        assert shapes._typed_sequence(core) == typed_by_regex(core), core
