"""Purging the vault when a session service starts is housekeeping: a store that cannot purge
(here a real database whose ``vault`` table is gone) logs a warning, and the run goes on with the
guard failing closed: masked answer, the note, no identifier restored."""

from __future__ import annotations

import asyncio

import structlog
from sqlalchemy import text

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.privacy.guard import RESTORE_FAILED_NOTE
from devops_agent.store import Store
from devops_agent.store.engine import create_store_engine, normalize_url

EMAIL = "ops.lead@acme-corp.com"


def drop_vault_table(store_url: str) -> None:
    engine = create_store_engine(normalize_url(store_url))
    try:
        with engine.begin() as conn:
            conn.execute(text("ALTER TABLE vault RENAME TO vault_lost"))
    finally:
        engine.dispose()


def test_missing_vault_table_does_not_stop_the_run(store_url: str) -> None:
    settings = Settings(database_url=store_url, privacy={"enabled": "on", "hmac_key": "k" * 32, "ner": "off"})
    script = Script.model_validate({"turns": [{"text": "Answer: {prompt}"}]})
    with Store(store_url) as store:
        drop_vault_table(store_url)
        with structlog.testing.capture_logs() as logs:
            service = SessionService(settings, store, model=ScriptedModel(script))
            _events, final = asyncio.run(service.run(f"who is {EMAIL}?"))

    assert any(e["event"] == "vault_purge_failed" and e["log_level"] == "warning" for e in logs), logs
    assert final.status == "completed"
    output = final.output or ""
    assert output.endswith(RESTORE_FAILED_NOTE)
    assert "<<EMAIL_" in output
    assert EMAIL not in output
