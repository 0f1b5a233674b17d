"""Running the ``devops-agent`` command line from a test (a plugin module: ``tests/conftest.py``
lists it in ``pytest_plugins``; test modules import its functions, ``from fixtures_cli import cli``).

* :func:`cli` runs a command **in this process** through Typer's test runner, as the console
  script would run it: the same root command (help text reflowed), logging configured for the
  command's own stderr, the working directory, environment, standard input and terminal width of
  the call. It returns a :class:`subprocess.CompletedProcess`, so a test reads it as it would read
  a real process. It is ~50x faster than starting an interpreter, which is what most CLI tests
  need: the command's output, exit code and effects on the store.
* :func:`cli_process` starts a real interpreter (``python -m devops_agent``). Keep it for what
  only a separate process shows: the console script itself, signals, a terminal, start-up cost
  and imports, process substitution, stdin that is a pipe.
* :func:`assert_one_line_error` checks the CLI's error contract on either.

Neither may be used from an ``async`` test: the commands run their own event loop.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import typer.main
from typer.testing import CliRunner

DEFAULT_COLUMNS = "200"
"""The terminal width both runners give a command unless ``env`` sets ``COLUMNS``: wide enough
that tables do not fold the values tests look for."""


@contextlib.contextmanager
def _console_width(columns: str) -> Iterator[None]:
    """The CLI's consoles as a process started with ``COLUMNS=columns`` has them: rich reads the
    variable when a console is made, which is once per process (at the first import)."""
    from devops_agent.cli.context import err, out

    saved = out._width, err._width
    out.width = err.width = int(columns)
    try:
        yield
    finally:
        out._width, err._width = saved


@contextlib.contextmanager
def _command_logging(args: tuple[str, ...]) -> Iterator[None]:
    """Logging as ``cli.app.main`` sets it up, bound to the runner's stderr for the command and
    back to the suite's set-up (``tests/conftest.py``) afterwards."""
    from devops_agent.telemetry import configure_logging

    configure_logging("debug" if "--debug" in args else "warning")
    try:
        yield
    finally:
        configure_logging("warning")


def cli(
    *args: str,
    env: Mapping[str, str | None] | None = None,
    stdin: str | bytes | None = None,
    cwd: Path | None = None,
    text: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """Run ``devops-agent ARGS`` in this process; stdout and stderr apart, as text (bytes with
    ``text=False``). ``env`` adds to (``None`` removes from) the current environment for the call.

    An exception the command's error handler lets through (not an ``Exception``: an interpreter
    signal) propagates, as it would end a real process with a traceback."""
    from devops_agent.cli.app import _reflow_tree, app

    command = _reflow_tree(typer.main.get_command(app))  # what main() runs, help reflowed
    runner = CliRunner()
    code = 0
    chdir = contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext()
    call_env = {"COLUMNS": DEFAULT_COLUMNS, **(env or {})}
    columns = call_env["COLUMNS"] or DEFAULT_COLUMNS
    with chdir, runner.isolation(input=stdin, env=call_env) as streams:
        with _console_width(columns), _command_logging(args):
            try:
                command.main(args=list(args), prog_name="devops-agent")
            except SystemExit as exc:  # AgentGroup.main ends every invocation with sys.exit
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
        out, err = streams[0].getvalue(), streams[1].getvalue()
    if text:
        return subprocess.CompletedProcess(["devops-agent", *args], code, _text(out), _text(err))
    return subprocess.CompletedProcess(["devops-agent", *args], code, out, err)


def _text(data: bytes) -> str:
    # What subprocess.run(text=True) gives: universal newlines.
    return data.decode("utf-8", "replace").replace("\r\n", "\n")


def cli_process(
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: str | bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m devops_agent ARGS`` as a separate process (the smoke set: see the module
    docstring for when a test needs one)."""
    return subprocess.run(
        [sys.executable, "-m", "devops_agent", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": DEFAULT_COLUMNS, **(env or {})},
        input=stdin,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    """The CLI's error contract: exit ``code``, no traceback, each needle on stderr."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def invoke(*args: str, env: Mapping[str, str | None] | None = None) -> tuple[int, str, str]:
    """:func:`cli` as ``(exit code, stdout, stderr)``."""
    proc = cli(*args, env=env)
    return proc.returncode, proc.stdout, proc.stderr
