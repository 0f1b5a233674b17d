"""API tokens and what each role may do; no web framework here (the CLI's ``users`` command uses it).

A token is ``dat_`` and 43 URL-safe characters from :func:`secrets.token_urlsafe` (256 random
bits). The store keeps only its SHA-256: with that much entropy a fast hash cannot be brute-forced
or looked up in a dictionary (slow hashes such as bcrypt protect low-entropy passwords), and a
deterministic hash lets each request find its user with one indexed lookup.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

TOKEN_PREFIX = "dat_"
PERSON_ROLES = ("viewer", "operator", "admin")
"""Roles of people; ``alerts`` (an alerting system's token) may only post alerts."""


def new_token() -> str:
    """A fresh API token (shown once; only its hash is stored)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """The SHA-256 hex of ``token``, as the store keeps it."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Principal:
    """Who is calling: a user of the service (``id`` None when auth is off: the local admin)."""

    id: str | None
    name: str
    role: str

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    @property
    def may_use_agent_mode(self) -> bool:
        """Viewers run in ask mode only."""
        return self.role in ("operator", "admin")

    def may_approve(self, decision: str) -> bool:
        """``approve`` (a mutating call): operators and admins; ``approve_detailed`` (destructive):
        admins only."""
        if decision == "approve_detailed":
            return self.role == "admin"
        return self.role in ("operator", "admin")

    def owns(self, user_id: str | None) -> bool:
        """Whether a row of ``user_id`` is this caller's to see: their own, or anyone's for an admin."""
        return self.is_admin or (self.id is not None and user_id == self.id)


LOCAL_ADMIN = Principal(id=None, name="local", role="admin")
"""The caller when ``server.auth`` is off: every request acts as an admin."""
