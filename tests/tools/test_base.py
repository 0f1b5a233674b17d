"""Tool declarations: a tool's spec read back from its pydantic-ai metadata."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from devops_agent.tools.base import SPEC_KEY, ToolSpec, spec_from_metadata


def test_a_spec_is_read_once_per_content_and_a_changed_one_is_read_again() -> None:
    """Every wrapper of every call reads the spec: one frozen instance serves each content."""
    spec = ToolSpec(category="logs", read_only=True, risk="sensitive")
    first = spec_from_metadata({SPEC_KEY: spec.model_dump()})
    again = spec_from_metadata({SPEC_KEY: spec.model_dump()})  # another dict, the same content
    assert first == spec
    assert again is first
    changed = spec_from_metadata({SPEC_KEY: {**spec.model_dump(), "read_only": False}})
    assert changed is not None
    assert changed.read_only is False
    assert changed.category == "logs"
    with pytest.raises(ValidationError):  # a spec that is not one still says so
        spec_from_metadata({SPEC_KEY: {"category": "logs"}})
    assert spec_from_metadata({"other": 1}) is None
    assert spec_from_metadata(None) is None


def test_a_spec_with_unhashable_values_or_given_as_a_model_is_still_read() -> None:
    spec = ToolSpec(category="x", read_only=True)
    assert spec_from_metadata({SPEC_KEY: spec}) == spec
    weird = {**spec.model_dump(), "category": "x"}
    weird["extra"] = ["unhashable"]
    assert spec_from_metadata({SPEC_KEY: weird}) == spec
