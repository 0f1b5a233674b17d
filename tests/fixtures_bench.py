"""Import a script of ``benchmarks/`` as a module, so tests can check its scoring helpers.

A plugin module (``tests/conftest.py``, ``pytest_plugins``): ``from fixtures_bench import load``
works from any test module; the scripts are not a package.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(script: str) -> ModuleType:
    """``benchmarks/<script>.py``, imported once and registered under ``bench_<script>``."""
    name = f"bench_{script}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{script}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
