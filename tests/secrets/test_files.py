"""Files that are key material by name (``id_rsa``, ``master.key``) are redacted whole.

Their text may look like nothing (a Rails master key is 32 hex digits), so the content rules
cannot see them; the file's name can. Checked at every level: the name test, the scrubber, the
anonymizer, the guard's walk over a tool's output, a full scripted-model run with the real files
tools, and ``devops-agent privacy mask``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from devops_agent.agent.scripted import Script
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.privacy import REDACTED, Anonymizer, find_secrets, scrub
from devops_agent.privacy.guard import PrivacyGuard, anonymizer_for
from devops_agent.privacy.vault import Vault
from devops_agent.secrets.scrubber import is_secret_file
from devops_agent.store import Store
from fixtures_canary import RecordingModel

MASTER_KEY = "3ebf21f8e5d1ab86b27a720842c3bb56"
# A base64 line of a key body, without its armour. It holds "+" and "/", as most such lines do:
# a blob of base64, which the token-shape rules leave alone (a bare random run without them is
# masked as a token wherever it is: see tests/secrets/test_shapes.py).
SSH_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW/+Qx"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("id_rsa", True),
        ("/home/ops/.ssh/id_ed25519", True),
        ("/home/ops/.ssh/id_ed25519.pub", False),  # a public key is not a secret
        ("web/ruby/config/master.key", True),
        ("/etc/nginx/tls/server.key", True),
        (r"C:\Users\ops\keys\deploy.ppk", True),
        ("ansible/.vault_pass", True),
        ("config/master.key.example", False),
        ("/home/ops/.ssh/ID_RSA", True),  # case does not matter
        ("/home/ops/.ssh/id_rsa.bak", True),  # nor a backup suffix
        ("server.key~", True),
        ("id_rsa.pub.bak", False),
        ("keys/", False),
        ("README.md", False),
        ("server.crt", False),  # certificates are public; a PEM private key is found by content
    ],
)
def test_secret_file_names(path: str, expected: bool) -> None:
    assert is_secret_file(path) is expected


def test_extra_globs_from_settings() -> None:
    assert not is_secret_file("deploy/app.token")
    assert is_secret_file("deploy/app.token", ["*.token"])
    anon = Anonymizer(b"k", "s", secret_files=["*.token"])
    assert anon.holds_only_secrets("deploy/app.token")
    assert anon.holds_only_secrets("master.key")  # built-in names stay
    assert not Anonymizer(b"k", "s").holds_only_secrets("deploy/app.token")
    configured = Settings(privacy={"secret_files": ["*.token"]})
    assert anonymizer_for(configured, "s", b"k").holds_only_secrets("deploy/app.token")


def test_scrubber_redacts_a_secret_file_whole_unless_its_rules_find_the_secret() -> None:
    text = f"{MASTER_KEY}\n\n  {SSH_BODY}  \n"
    assert find_secrets(text) == []  # the content alone says nothing
    found = find_secrets(text, secret_file=True)
    assert [(f.kind, f.start, f.end) for f in found] == [("secret_file", 0, len(text.rstrip()))]
    assert scrub(text, secret_file=True).text == f"{REDACTED}  \n"
    assert find_secrets("  \n", secret_file=True) == []
    # where the rules know the format, their findings stand (a PEM block, not the comment above it)
    pem = (
        "# deploy key\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + SSH_BODY
        + "\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    assert [f.kind for f in find_secrets(pem, secret_file=True)] == [f.kind for f in find_secrets(pem)] != []
    assert scrub(pem, secret_file=True).text.startswith("# deploy key\n" + REDACTED)


def test_anonymizer_masks_no_entity_inside_a_secret_file() -> None:
    anon = Anonymizer(b"k", "s")
    out = anon.anonymize(f"ops@example.com {MASTER_KEY}", secret_file=True)
    assert out.text == REDACTED
    assert out.entities == []
    assert len(out.secrets) == 1


def test_guard_redacts_the_content_of_secret_files_in_tool_output(store_url: str) -> None:
    with Store(store_url) as store:
        session = store.create_session(title="t", mode="ask", model="scripted")
        guard = PrivacyGuard(Anonymizer(b"k", session.id), Vault(store, session.id))
        read = {
            "path": "/srv/app/config/master.key",
            "lines": [{"n": 1, "text": MASTER_KEY}],
            "total_lines": 1,
        }
        assert guard.mask_value(read, "tool_out") == {
            "path": "/srv/app/config/master.key",
            "lines": [{"n": 1, "text": REDACTED}],
            "total_lines": 1,
        }
        grep = {
            "path": "/home/ops",
            "matches": [
                {
                    "file": "/home/ops/.ssh/id_rsa",
                    "line_no": 2,
                    "line": SSH_BODY,
                    "before": ["x"],
                    "after": [],
                },
                {"file": "/home/ops/notes.txt", "line_no": 9, "line": SSH_BODY, "before": [], "after": []},
            ],
        }
        masked = guard.mask_value(grep, "tool_out")
        assert masked["matches"][0]["line"] == REDACTED
        assert masked["matches"][0]["before"] == [REDACTED]
        assert masked["matches"][0]["file"] == "/home/ops/.ssh/id_rsa"
        assert masked["matches"][1]["line"] == SSH_BODY  # an ordinary file: content rules only
        # a dict naming a directory and a key file: the key file decides
        both = {"path": "/home/ops", "file": "/home/ops/.ssh/id_rsa", "line": SSH_BODY}
        assert guard.mask_value(both, "tool_out")["line"] == REDACTED
        # a key file committed by mistake, in a commit's patch
        commit = {"path": "config/master.key", "status": "added", "patch": f"@@ -0,0 +1 @@\n+{MASTER_KEY}"}
        assert guard.mask_value(commit, "tool_out") == {**commit, "patch": REDACTED}
        # a knowledge-search hit keeps its citation and metadata; only the text goes
        hit = {
            "citation": "config/master.key:1-1",
            "path": "config/master.key",
            "kind": "text",
            "text": MASTER_KEY,
        }
        assert guard.mask_value(hit, "tool_out") == {**hit, "text": REDACTED}


def test_model_never_sees_a_key_file_read_with_the_files_tools(store_url: str, tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "master.key").write_text(MASTER_KEY + "\n")
    (tmp_path / "config" / "app.yml").write_text("log_level: info\n")
    settings = Settings(
        database_url=store_url,
        privacy={"enabled": "on", "hmac_key": "k", "ner": "off"},
        files={"roots": [tmp_path]},
    )
    script = Script.model_validate(
        {
            "turns": [
                {
                    "tool_calls": [
                        {"tool": "files_read", "args": {"path": str(tmp_path / "config" / "master.key")}},
                        {"tool": "files_grep", "args": {"path": str(tmp_path), "pattern": "[0-9a-f]{8}|log"}},
                    ]
                },
                {"text": "done\n{results}"},
            ]
        }
    )
    model = RecordingModel(script)
    with Store(store_url) as store:
        session = store.create_session(title="keys", mode="ask", model="scripted")
        service = SessionService(settings, store, model=model)
        _events, final = asyncio.run(service.run("what is in config?", session_id=session.id))
    assert final.status == "completed"
    sent = "\n".join(model.requests)
    assert "log_level: info" in sent, "the ordinary file reached the model"
    assert REDACTED in sent
    assert MASTER_KEY not in sent
    assert MASTER_KEY not in (final.output or "")


def test_privacy_mask_command_redacts_a_key_file(tmp_path: Path) -> None:
    key = tmp_path / "master.key"
    key.write_text(MASTER_KEY + "\n")
    env = dict(os.environ, DEVOPS_AGENT_DATA_DIR=str(tmp_path / "data"), DEVOPS_AGENT_PRIVACY__NER="off")
    done = subprocess.run(
        [sys.executable, "-m", "devops_agent", "privacy", "mask", str(key), "--json"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data[0]["text"] == REDACTED + "\n"
    assert [s["kind"] for s in data[0]["secrets"]] == ["secret_file"]


PEM_LINES = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
    "-----END RSA PRIVATE KEY-----",
]


def test_a_private_key_read_line_by_line_is_found_across_the_lines(store_url: str) -> None:
    """files_read returns one string per line; the PEM rule needs the block, so the lines of one
    text are scanned joined (the file name, tls.pem, says nothing)."""
    lines = ["# TLS key for the billing API", *PEM_LINES, "ops@example.com rotated it"]
    read = {"path": "/etc/billing/tls.pem", "lines": [{"n": i, "text": t} for i, t in enumerate(lines, 1)]}
    with Store(store_url) as store:
        session = store.create_session(title="t", mode="ask", model="scripted")
        for guard in (
            PrivacyGuard(Anonymizer(b"k", session.id), Vault(store, session.id)),
            PrivacyGuard.secrets_only(Settings(), store, session.id),
        ):
            masked = guard.mask_value(read, "tool_out")
            texts = [line["text"] for line in masked["lines"]]
            assert [line["n"] for line in masked["lines"]] == list(range(1, len(lines) + 1))
            assert texts[0] == lines[0]
            assert all(t == REDACTED for t in texts[1:-1]), texts
            if guard.anonymizer.secrets_only:
                assert texts[-1] == lines[-1]  # identifiers stay readable
            else:
                assert "ops@example.com" not in texts[-1]
        # plain string lists (a grep match's context) are lines of one text too
        context = guard.mask_value({"before": PEM_LINES[:3], "after": []}, "tool_out")
        assert context["before"][1:] == [REDACTED, REDACTED]


def test_lines_are_scanned_for_secrets_once(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from devops_agent.privacy import guard as guard_module

    calls: list[int] = []
    real = guard_module.find_secrets

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(guard_module, "find_secrets", counting)
    lines = [f"2026-11-25T10:00:{i % 60:02d}Z GET /api/orders/{i} 200" for i in range(2000)]
    with Store(store_url) as store:
        session = store.create_session(title="t", mode="ask", model="scripted")
        guard = PrivacyGuard.secrets_only(Settings(), store, session.id)
        assert guard.mask_value({"path": "/var/log/app.log", "lines": lines}, "tool_out")["lines"] == lines
    assert len(calls) == 1
