"""Defects found by reviewing the privacy guard as a user runs it: the placeholder key file, a vault
that cannot be written, the preview command's standard input, its note when the guard is off, its
help, and the history processor's bookkeeping. Real files, real SQLite, real subprocesses."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelRequest, UserPromptPart

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.errors import ConfigError
from devops_agent.privacy.anonymizer import Anonymizer
from devops_agent.privacy.guard import PrivacyGuard
from devops_agent.privacy.vault import Vault, hmac_key
from devops_agent.store import Store
from fixtures_cli import cli

EMAIL = "ops.lead@acme-corp.com"
HOST = "db01.prod.acme.internal"


def mask_cli(
    *args: str, data_dir: Path, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    full_env = {"DEVOPS_AGENT_DATA_DIR": str(data_dir), "DEVOPS_AGENT_PRIVACY__NER": "off", **(env or {})}
    return cli(*args, stdin=stdin, env=full_env, text=False)


# -- the placeholder key ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"", "is empty"), (b"\xff\xfe\x00k\x00e\x00y", "not a text key"), (None, "Is a directory")],
)
def test_a_bad_key_file_is_a_one_line_error_naming_it(
    tmp_path: Path, content: bytes | None, reason: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    key = data / "privacy.key"
    if content is None:
        key.mkdir()
    else:
        key.write_bytes(content)
    done = mask_cli("privacy", "mask", data_dir=data, stdin=f"mail {EMAIL}\n".encode())
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert "Traceback" not in stderr
    assert str(key) in stderr, stderr
    assert reason in stderr, stderr
    assert "privacy.hmac_key" in stderr  # what to do instead
    assert EMAIL.encode() not in done.stdout


def test_concurrent_first_starts_all_read_the_one_whole_key(tmp_path: Path) -> None:
    """Several processes starting on a fresh data dir: none may read the key file before it is
    written (an empty key stopped them), and all must get the same key."""
    for attempt in range(30):
        settings = Settings(data_dir=tmp_path / f"d{attempt}")
        barrier = threading.Barrier(8)
        keys: list[object] = []

        def start(
            settings: Settings = settings, barrier: threading.Barrier = barrier, keys: list[object] = keys
        ) -> None:
            barrier.wait()
            try:
                keys.append(hmac_key(settings))
            except Exception as exc:  # noqa: BLE001 - recorded, asserted below
                keys.append(exc)

        threads = [threading.Thread(target=start) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(map(repr, keys))) == 1, keys
        assert isinstance(keys[0], bytes), keys[0]
        assert len(keys[0]) == 64
        left = sorted(p.name for p in (tmp_path / f"d{attempt}").iterdir())
        assert left == ["privacy.key"], left  # no temporary file left behind
        assert (tmp_path / f"d{attempt}" / "privacy.key").stat().st_mode & 0o777 == 0o600


def test_a_blank_configured_key_names_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"privacy\.hmac_key is blank"):
        hmac_key(Settings(privacy={"hmac_key": "   "}))


# -- a vault that cannot be written ---------------------------------------------------------------


def test_unstored_placeholders_in_the_answer_come_with_a_note(tmp_path: Path) -> None:
    """The vault refuses writes (disk full, a lock held too long): masking goes on, and the answer
    keeps placeholders it cannot restore; the user is told why instead of seeing them unexplained."""
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    settings = Settings(database_url=url, privacy={"enabled": "on", "hmac_key": "k" * 32, "ner": "off"})
    script = Script.model_validate({"turns": [{"text": "Answer: {prompt}"}]})
    with Store(url) as store:
        with sqlite3.connect(tmp_path / "agent.db") as db:
            db.execute(
                "CREATE TRIGGER full BEFORE INSERT ON vault BEGIN SELECT RAISE(ABORT, 'disk full'); END"
            )
        service = SessionService(settings, store, model=ScriptedModel(script))
        _events, final = asyncio.run(service.run(f"why is {HOST} slow for {EMAIL}?"))

    assert final.status == "completed"
    output = final.output or ""
    assert output.rstrip().endswith("the privacy vault could not store them.)_"), output
    assert HOST not in output  # still masked: nothing to restore from
    assert EMAIL not in output


def test_no_note_when_the_vault_stored_everything(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'agent.db'}") as store:
        session = store.create_session(title="t", mode="ask", model=None)
        guard = PrivacyGuard(Anonymizer(b"k" * 32, session.id), Vault(store, session.id))
        masked = guard.mask(f"ping {HOST}", "user_in")
        assert guard.final_output(masked, restore=True) == f"ping {HOST}"


# -- history processor ----------------------------------------------------------------------------


def test_a_new_message_reusing_a_freed_message_id_is_still_masked(tmp_path: Path) -> None:
    """The guard skipped messages it had masked by ``id()``; once a masked message was freed, a new
    unmasked one could get its id and reach the model as it was."""
    with Store(f"sqlite:///{tmp_path / 'agent.db'}") as store:
        session = store.create_session(title="t", mode="ask", model=None)
        guard = PrivacyGuard(Anonymizer(b"k" * 32, session.id), Vault(store, session.id))
        for i in range(50):
            first = guard.process_history([ModelRequest(parts=[UserPromptPart(f"mail bob{i}@acme.com")])])
            del first  # e.g. dropped from the history by another processor
            sent = guard.process_history([ModelRequest(parts=[UserPromptPart(f"mail al{i}@acme.com")])])
            content = sent[0].parts[0].content
            assert isinstance(content, str)
            assert f"al{i}@acme.com" not in content, content


def test_the_guard_prints_no_original_and_costs_nothing_to_print(tmp_path: Path) -> None:
    """pydantic-ai formats a history processor's str() before every model request: the generated
    dataclass repr walked every masked message (a cost growing with the run) and printed the
    originals the guard had learnt, where a log line or a traceback would show them."""
    with Store(f"sqlite:///{tmp_path / 'agent.db'}") as store:
        session = store.create_session(title="t", mode="ask", model=None)
        guard = PrivacyGuard(Anonymizer(b"k" * 32, session.id), Vault(store, session.id))
        history = [ModelRequest(parts=[UserPromptPart(f"mail bob{i}@acme.com on {HOST}")]) for i in range(30)]
        masked = asyncio.run(guard.process_history_async(history))
        assert all("acme.com" not in str(m.parts[0].content) for m in masked)
        for shown in (repr(guard), str(guard.process_history_async)):
            assert "acme.com" not in shown
            assert HOST not in shown
            assert len(shown) < 200, shown
        # the next request's history: the masked messages and one new one, masked in the loop
        again = asyncio.run(
            guard.process_history_async([*masked, ModelRequest(parts=[UserPromptPart("ask ann@acme.com")])])
        )
        assert again[:30] == masked
        assert "ann@acme.com" not in str(again[30].parts[0].content)


def test_multi_part_prompts_and_output_retry_feedback_are_masked(tmp_path: Path) -> None:
    """A prompt given as a list (text and an attachment) and pydantic-ai's feedback on an unusable
    response (its validation errors echo the rejected input) enter the model's context too."""
    from pydantic_ai.messages import BinaryContent, ModelMessagesTypeAdapter, RetryFeedbackPart, RetryInfo

    secret = "S3cr3t-Pa55w0rd!"
    with Store(f"sqlite:///{tmp_path / 'agent.db'}") as store:
        session = store.create_session(title="t", mode="ask", model=None)
        guard = PrivacyGuard(Anonymizer(b"k" * 32, session.id), Vault(store, session.id))
        attachment = BinaryContent(
            f"deploy with password={secret} on {HOST}".encode(), media_type="text/plain"
        )
        feedback = RetryFeedbackPart(
            content=[
                {
                    "type": "value_error",
                    "loc": ("host",),
                    "msg": "bad host",
                    "input": f"{HOST} password={secret}",
                }
            ],
            retry=RetryInfo("validation_error"),
        )
        request = ModelRequest(parts=[UserPromptPart([f"why is {HOST} slow?", attachment]), feedback])
        sent = ModelMessagesTypeAdapter.dump_json(guard.process_history([request])).decode()
        assert HOST not in sent
        assert secret not in sent
        assert "<<HOST_" in sent


# -- devops-agent privacy mask -------------------------------------------------------------------


def test_standard_input_gets_the_files_binary_check(tmp_path: Path) -> None:
    utf16 = "password=hunter2x\n".encode("utf-16")  # PowerShell's `>` writes this
    done = mask_cli("privacy", "mask", data_dir=tmp_path / "data", stdin=utf16)
    assert done.returncode == 2, done.stderr
    assert b"skipped standard input: binary" in done.stderr
    assert done.stdout == b""


def test_standard_input_keeps_line_endings_as_a_file_does(tmp_path: Path) -> None:
    text = f"host={HOST}\r\npassword=hunter2x\r\n".encode()
    source = tmp_path / "crlf.log"
    source.write_bytes(text)
    piped = mask_cli("privacy", "mask", data_dir=tmp_path / "data", stdin=text)
    read = mask_cli("privacy", "mask", str(source), data_dir=tmp_path / "data")
    assert piped.returncode == read.returncode == 0, (piped.stderr, read.stderr)
    assert piped.stdout == read.stdout
    assert piped.stdout.count(b"\r\n") == 2
    assert b"hunter2x" not in piped.stdout


@pytest.mark.parametrize(
    ("env", "note"),
    [
        ({"DEVOPS_AGENT_MODEL__NAME": "ollama:llama3.1"}, "the model ollama:llama3.1 is local"),
        (
            {"DEVOPS_AGENT_MODEL__NAME": "openai:gpt-4o", "DEVOPS_AGENT_PRIVACY__ENABLED": "off"},
            'privacy.enabled = "off"',
        ),
        ({"DEVOPS_AGENT_MODEL__NAME": "openai:gpt-4o"}, None),  # hosted: the guard is on
        ({}, None),  # no model: nothing is sent anywhere
    ],
)
def test_preview_says_when_the_guard_is_off_for_the_configured_model(
    tmp_path: Path, env: dict[str, str], note: str | None
) -> None:
    for args in ((), ("--json",)):
        done = mask_cli(
            "privacy", "mask", *args, data_dir=tmp_path / "data", stdin=f"{EMAIL}\n".encode(), env=env
        )
        assert done.returncode == 0, done.stderr
        shown = json.loads(done.stdout)[0]["text"] if args else done.stdout.decode()
        assert EMAIL not in shown  # the preview itself is unchanged
        stderr = done.stderr.decode()
        if note is None:
            assert "privacy guard is off" not in stderr, stderr
        else:
            assert "privacy guard is off" in stderr, stderr
            assert note in stderr, stderr


def test_mask_help_keeps_each_sentence_on_one_line(tmp_path: Path) -> None:
    done = mask_cli("privacy", "mask", "--help", data_dir=tmp_path / "data")
    assert done.returncode == 0
    lines = [line.strip() for line in done.stdout.decode().splitlines()]
    assert (
        "A preview: nothing is stored. Entities become <<TYPE_tag>> placeholders, secrets [REDACTED_SECRET]."
        in lines
    )
    assert not any(line.endswith("(the same") for line in lines)
