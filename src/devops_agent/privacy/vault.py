"""The vault: which original each placeholder stands for, per session and namespace.

Backed by the project store (``vault`` table; SQLite or PostgreSQL). Namespaces record where a
value was first seen: ``user_in`` (the user's words), ``tool_args``, ``tool_out``, ``final_out``.
Secrets never reach it — the anonymizer redacts them irreversibly before entities are stored.

It fails closed: when the store cannot be read, :meth:`Vault.lookup` raises
:class:`VaultUnavailable` and callers de-anonymize nothing (the user sees masked text and a
note); when it cannot be written, masking still happens, only restoring is lost.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import structlog

from devops_agent.config import Settings
from devops_agent.errors import DevOpsAgentError, RuntimeFailure
from devops_agent.privacy.anonymizer import Entity
from devops_agent.store import VAULT_NAMESPACES, Store, VaultEntry

LOOKUP_ORDER = ("tool_args", "user_in", "tool_out", "final_out")

log = structlog.get_logger(__name__)


class VaultUnavailable(RuntimeFailure):
    """The vault could not be read; nothing may be de-anonymized."""


@dataclass
class Vault:
    store: Store
    session_id: str

    def remember(self, namespace: str, entities: Iterable[Entity]) -> None:
        entries = [
            VaultEntry(self.session_id, namespace, e.type, e.placeholder, e.original) for e in entities
        ]
        if not entries:
            return
        try:
            self.store.vault_put(entries)
        except DevOpsAgentError as exc:
            # Masking already happened; only the way back is lost.
            log.warning("vault_write_failed", error=exc.message)

    def lookup(self, placeholders: Sequence[str], namespaces: Sequence[str] = LOOKUP_ORDER) -> dict[str, str]:
        try:
            return self.store.vault_lookup(self.session_id, placeholders, namespaces)
        except DevOpsAgentError as exc:
            raise VaultUnavailable(
                f"the privacy vault cannot be read: {exc.message}", hint="identifiers stay masked"
            ) from exc


def purge_expired(store: Store, ttl_hours: dict[str, float], now: datetime | None = None) -> int:
    """Delete vault entries older than their namespace's TTL; return how many went."""
    moment = now or datetime.now(UTC)
    return sum(
        store.vault_purge(namespace=ns, older_than=moment - timedelta(hours=ttl_hours[ns]))
        for ns in VAULT_NAMESPACES
        if ns in ttl_hours
    )


def hmac_key(settings: Settings) -> bytes:
    """The placeholder key: from config, else a random key created once in the data dir (mode 0600)."""
    if settings.privacy.hmac_key is not None:
        return settings.privacy.hmac_key.get_secret_value().encode()
    path = Path(settings.data_dir) / "privacy.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first
            pass
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32))
    return path.read_text().strip().encode()
