"""Value tests of the secret scrubber: what reads as typed by hand, and what does not.

Values are built here (runs, units, hashes); none is taken from a benchmark or a real credential.
"""

from __future__ import annotations

import base64
import hashlib
import string

import pytest

from devops_agent.secrets.values import is_dummy
from fixtures_canary import random_text

B62 = string.ascii_letters + string.digits


def _random(n: int, seed: str) -> str:
    return random_text(B62, n, seed)


@pytest.mark.parametrize(
    "value",
    [
        "Zk" + "mnopqr" + "Xw92",  # six letters counting up, any case
        "tok9" + "345678" + "Qz",  # six digits
        "K" + "RSTUVW".lower() + "1",
        "q9Zx" + "ghi" + "789",  # three letters then three digits, both counting up
        "Wt2" + "234" + "lmn" + "R",  # and the other way round
        "1234-1234-1234-1234",  # a unit repeated
        "zzzzzzzzzzzz",
        _random(20, "m") + "EXAMPLE",
    ],
)
def test_typed_values(value: str) -> None:
    assert is_dummy(value), value


@pytest.mark.parametrize(
    "value",
    [
        "Zk" + "mnopq" + "Xw92",  # five counting up is chance often enough in a long token
        "q9Zx" + "ghi" + "780",  # the digits do not count
        "q9Zx" + "gik" + "789",  # the letters do not
        "Qt" + "xyz01" + "Lp",  # z then 0 does not continue a run of six
        "hunter22",
    ],
)
def test_values_that_are_not_typed(value: str) -> None:
    assert not is_dummy(value), value


def test_random_tokens_are_not_typed() -> None:
    tokens = [_random(n, f"t{i}") for i, n in enumerate([20, 32, 40, 64, 100] * 200)]
    assert [t for t in tokens if is_dummy(t)] == []


def test_zero_bytes_in_base64_are_binary_not_a_repeat() -> None:
    blob = base64.b64encode(bytes(12) + hashlib.sha256(b"x").digest()).decode()
    assert blob.startswith("AAAAAAAAAAAAAAAA")
    assert not is_dummy(blob)
    assert is_dummy("A" * 40)  # all of one letter is still a filler


def test_expression_test_reads_as_its_regex() -> None:
    """``is_expression`` reads the value's ends before its regex (a speed-up): over short strings
    built of every piece a branch looks at, it must answer as the regex alone does."""
    import itertools
    import random

    from devops_agent.secrets.values import _EXPRESSION_RX, is_expression

    pieces = [*"ab_-v.1\n$@,;)+(:{\\", "arn:", "\u0663", "\u00b2", "1.2", "-v1.2.3", " "]
    rng = random.Random(30)
    values = ["".join(p) for p in itertools.product(pieces, repeat=2)]
    values += ["".join(rng.choice(pieces) for _ in range(rng.randrange(3, 8))) for _ in range(5_000)]
    for value in values:
        assert is_expression(value) == (_EXPRESSION_RX.search(value) is not None), repr(value)


def test_one_scan_remembers_answers_inside_the_block_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside ``one_scan`` a value is tested once, each test keeps its own answers, and nothing is
    kept after the block (a value may be a secret), also when the block ends by an error."""
    from devops_agent.secrets import values

    tested: list[str] = []
    real = values._dummy
    monkeypatch.setattr(values, "_dummy", lambda v: tested.append(v) or real(v))
    wordy, typed = "DOC_Vector_5_32", "tok_" + "x" * 36  # an identifier; a documentation value
    with values.one_scan():
        answers = [
            values.is_dummy(wordy),
            values.is_wordy(wordy),
            values.is_dummy(wordy),
            values.is_wordy(wordy),
        ]
        assert answers == [False, True, False, True]
        assert values.is_dummy(typed)
        assert values.is_dummy(typed)
    assert tested == [wordy, typed]
    assert values._SCAN_MEMO.get() is None
    values.is_dummy(wordy)
    assert tested == [wordy, typed, wordy]  # outside a block every call tests again

    def failing_scan() -> None:
        with values.one_scan():
            values.is_dummy(typed)
            raise RuntimeError

    with pytest.raises(RuntimeError):
        failing_scan()
    assert values._SCAN_MEMO.get() is None


def test_a_scan_tests_a_repeated_value_once_and_keeps_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from devops_agent.secrets import values
    from devops_agent.secrets.scrubber import find_secrets

    tested: list[str] = []
    real = values._dummy
    monkeypatch.setattr(values, "_dummy", lambda v: tested.append(v) or real(v))
    token = _random(40, "memo")
    text = f"API_TOKEN={token}\nother_token: {token}\n"
    found = find_secrets(text)
    assert [text[f.start : f.end] for f in found] == [token, token]
    assert tested.count(token) == 1
    assert values._SCAN_MEMO.get() is None
