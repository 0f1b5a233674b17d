"""The vault: which original each placeholder stands for, per session and namespace.

Backed by the project store (``vault`` table; SQLite or PostgreSQL). Namespaces record where a
value was first seen: ``user_in`` (the user's words), ``tool_args``, ``tool_out``, ``final_out``.
Secrets never reach it — the anonymizer redacts them irreversibly before entities are stored.

It fails closed: when the store cannot be read, :meth:`Vault.lookup` raises
:class:`VaultUnavailable` and callers de-anonymize nothing (the user sees masked text and a
note); when it cannot be written, masking still happens, only restoring is lost (and the user
gets a note when an answer keeps placeholders that were never stored).
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import structlog

from devops_agent.config import Settings
from devops_agent.errors import ConfigError, DevOpsAgentError, RuntimeFailure
from devops_agent.privacy.anonymizer import Entity, deanonymize
from devops_agent.privacy.recognizers import PLACEHOLDER_RX
from devops_agent.store import VAULT_NAMESPACES, Store, VaultEntry

LOOKUP_ORDER = ("tool_args", "user_in", "tool_out", "final_out")

log = structlog.get_logger(__name__)


class VaultUnavailable(RuntimeFailure):
    """The vault could not be read; nothing may be de-anonymized."""


@dataclass
class Vault:
    store: Store
    session_id: str
    write_failed: bool = False  # some placeholders were never stored: they cannot be restored

    def remember(self, namespace: str, entities: Iterable[Entity]) -> None:
        entries = [
            VaultEntry(self.session_id, namespace, e.type, e.placeholder, e.original) for e in entities
        ]
        if not entries:
            return
        try:
            self.store.vault_put(entries)
        except DevOpsAgentError as exc:
            # Masking already happened; only the way back is lost (the guard tells the user).
            self.write_failed = True
            log.warning("vault_write_failed", error=exc.message)

    def lookup(self, placeholders: Sequence[str], namespaces: Sequence[str] = LOOKUP_ORDER) -> dict[str, str]:
        try:
            return self.store.vault_lookup(self.session_id, placeholders, namespaces)
        except DevOpsAgentError as exc:
            raise VaultUnavailable(
                f"the privacy vault cannot be read: {exc.message}", hint="identifiers stay masked"
            ) from exc


def restore_text(store: Store, session_id: str, texts: Sequence[str]) -> tuple[list[str], bool]:
    """``texts`` of a stored session with their placeholders restored from the vault, for showing
    the session to its user (``sessions show``), and whether that worked. Secrets never come back:
    they were redacted, never stored. When the vault cannot be read the texts stay masked."""
    found = sorted({p for t in texts for p in PLACEHOLDER_RX.findall(t)})
    if not found:
        return list(texts), True
    try:
        mapping = Vault(store, session_id).lookup(found)
    except VaultUnavailable as exc:
        log.warning("vault_read_failed", error=exc.message)
        return list(texts), False
    return [deanonymize(t, mapping) for t in texts], True


def purge_expired(store: Store, ttl_hours: dict[str, float], now: datetime | None = None) -> int:
    """Delete vault entries older than their namespace's TTL; return how many went."""
    moment = now or datetime.now(UTC)
    return sum(
        store.vault_purge(namespace=ns, older_than=moment - timedelta(hours=ttl_hours[ns]))
        for ns in VAULT_NAMESPACES
        if ns in ttl_hours
    )


def hmac_key(settings: Settings) -> bytes:
    """The placeholder key: from config, else a random key created once in the data dir (mode 0600).

    The key file appears with its content or not at all (written aside, then linked into place), so
    a second process starting at the same moment never reads it half made. A configured key that is
    blank, and a key file that is empty, unreadable or not text, are a :class:`ConfigError` naming
    what to do, never a traceback.
    """
    if settings.privacy.hmac_key is not None:
        key = settings.privacy.hmac_key.get_secret_value()
        if not key.strip():
            raise ConfigError(
                "privacy.hmac_key is blank",
                hint="set it to a long random string (e.g. `openssl rand -hex 32`), or remove it to use "
                "the key kept in the data dir",
            )
        return key.encode()
    path = Path(settings.data_dir) / "privacy.key"
    remedy = (
        f"delete {path} to have a new key made (placeholders stored by earlier sessions are then "
        "no longer recognised), or set privacy.hmac_key"
    )
    try:
        if not path.exists():
            _create_key_file(path)
        key = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a text key"
        raise ConfigError(f"cannot read the privacy key {path}: {reason}", hint=remedy) from exc
    if not key:
        raise ConfigError(f"the privacy key {path} is empty", hint=remedy)
    return key.encode()


def _create_key_file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    fd, tmp = tempfile.mkstemp(prefix=".privacy.key.", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(key)
        try:
            os.link(tmp, path)  # atomic, and fails if another process made it first: theirs is kept
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: create it in place
            with open(path, "x", opener=lambda p, flags: os.open(p, flags, 0o600)) as fh:
                fh.write(key)
    finally:
        os.unlink(tmp)
