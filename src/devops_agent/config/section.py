"""The base of every configuration table (``[tools]``, ``[server]``, ...)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A table of the config: a key it does not define is an error (a typo must not pass silently)."""

    model_config = ConfigDict(extra="forbid")
