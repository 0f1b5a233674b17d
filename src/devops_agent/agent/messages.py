"""A session's conversation as the store keeps it: pydantic-ai messages, one JSON text each."""

from __future__ import annotations

from typing import Annotated

from pydantic import Discriminator, TypeAdapter
from pydantic_ai.messages import ModelMessage

_MESSAGE: TypeAdapter[ModelMessage] = TypeAdapter(Annotated[ModelMessage, Discriminator("kind")])


def dump_message(message: ModelMessage) -> str:
    """One pydantic-ai message as the JSON text the store keeps."""
    return _MESSAGE.dump_json(message).decode()


def load_message(payload: str) -> ModelMessage:
    """A stored message back as a pydantic-ai message."""
    return _MESSAGE.validate_json(payload)
