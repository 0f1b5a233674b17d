"""Where a benchmark's data lies: the ``--data`` folder every script takes, and the one-line error
when the data is not there.

``--data DIR`` names the folder of all benchmark data (default ``../shared/benchmarks`` beside the
checkout: one folder per data set, each with a SOURCE.md) or one data set's folder itself. This
module only finds folders; it must not read or score data.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"


def add_data_option(parser: argparse.ArgumentParser, folder: str) -> None:
    """The ``--data`` option of a script that reads the data set ``folder``."""
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT,
        help=f"benchmark data folder, or its {folder} (default: %(default)s)",
    )


def data_dir(given: Path, folder: str, *required: str) -> Path:
    """``given/folder``, or ``given`` itself, whichever holds every path in ``required``.

    Otherwise the script exits (status 1) with one line on stderr naming the folder or the first
    file that is missing, instead of a traceback half-way through a run.
    """
    prog = Path(sys.argv[0]).name or "benchmark"
    if not given.is_dir():
        raise SystemExit(f"{prog}: --data {given}: no such folder")
    for base in (given / folder, given):
        if all((base / name).exists() for name in required):
            return base
    inner = given / folder
    base = inner if inner.is_dir() else given
    missing = next(name for name in required if not (base / name).exists())
    if base is inner or given.name == folder:
        what = f"{base / missing} is missing"
    else:
        what = f"neither {inner}/ nor {given / missing} exists"
    raise SystemExit(f"{prog}: --data {given}: {what} (see {folder}/SOURCE.md in the benchmark data)")
