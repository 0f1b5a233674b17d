"""Cost of the read-only sandbox: the safety corpus's read-only commands run with and without it.

Takes the commands of ``safety_corpus.yaml`` (default ``tests/data/``; ``--data DIR`` for another
folder holding one) that are labelled read-only, that the classifier allows as read-only, and
whose every program is a local tool that needs no network or cluster (ls, cat, grep, ps, df,
git, journalctl …): those can be executed here. Each is first run **in the sandbox only**; one
the sandbox catches writing is reported and never run unconfined. The rest run through the
agent's own runner (``tools.shell.run_command``) ``--rounds`` times each way, interleaved (which
way goes first alternates), in the same process: the peer is the same runner without the sandbox.
``true`` alone measures the bare spawn cost both ways.

Prints one line per figure, then (last line) one JSON object with ``per_command_ms_plain``,
``per_command_ms_sandbox``, ``overhead_ms`` (difference of the means), ``overhead_ms_median``
(median of the paired differences), ``spawn_ms_plain``/``spawn_ms_sandbox`` (``true``), the
throughput both ways, and ``same_exit_code_rate``: how many commands exit the same way inside
the sandbox (the ones that do not are listed: what confinement costs in fidelity).

    .venv/bin/python benchmarks/sandbox_overhead.py [--data DIR] [--rounds 3] [--spawns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from devops_agent.config import Settings
from devops_agent.safety import classify, decide
from devops_agent.tools.sandbox import Sandbox
from devops_agent.tools.shell import run_command

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 10.0
# Programs that read local state only: a corpus command built solely from these can run here.
_LOCAL_NAMES = """
    ls cat head tail grep egrep fgrep zgrep wc ps df du free uptime uname hostname id whoami date
    stat file find echo printf sort uniq cut awk sed tr env printenv ss ip lsblk findmnt mount git
    journalctl which test true nproc lscpu getent readlink realpath basename dirname jq diff cmp
    md5sum sha256sum xxd od tree column tac rev nl strings vmstat w who last lsof dmesg timedatectl
    hostnamectl zcat less more netstat sysctl pgrep
"""
LOCAL = frozenset(_LOCAL_NAMES.split())


def load(data_dir: Path) -> list[str]:
    items = yaml.safe_load((data_dir / "safety_corpus.yaml").read_text(encoding="utf-8"))
    return [i["cmd"] for i in items if isinstance(i, dict) and i.get("label") == "read_only" and "cmd" in i]


def runnable(command: str) -> bool:
    """Allowed as read-only, and every program in it is a local one (no network, no cluster)."""
    c = classify(command)
    if c.level != "read_only" or decide(c, "ask").decision != "allow" or not c.commands:
        return False
    return all(r.argv and os.path.basename(r.argv[0]) in LOCAL for r in c.commands)


async def timed(command: str, sandbox: Sandbox | None, cwd: Path) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = await run_command(command, cwd=cwd, timeout_s=TIMEOUT_S, max_bytes=200_000, sandbox=sandbox)
    return (time.perf_counter() - t0) * 1000, result


async def measure(
    commands: list[str], sandbox: Sandbox, rounds: int, spawns: int, cwd: Path
) -> dict[str, Any]:
    # Safety first: a command runs unconfined only after the sandbox showed it does not write.
    vetted, denied, slow = [], [], []
    for command in commands:
        _ms, result = await timed(command, sandbox, cwd)
        if result.metadata.get("sandbox_denied"):
            denied.append(command)
        elif result.metadata.get("timed_out"):
            slow.append(command)
        else:
            vetted.append(command)
    plain: dict[str, list[float]] = {c: [] for c in vetted}
    boxed: dict[str, list[float]] = {c: [] for c in vetted}
    exits: dict[str, tuple[set[Any], set[Any]]] = {c: (set(), set()) for c in vetted}
    for r in range(rounds):
        for i, command in enumerate(vetted):
            order = (None, sandbox) if (i + r) % 2 == 0 else (sandbox, None)
            for box in order:
                ms, result = await timed(command, box, cwd)
                data = result.data if isinstance(result.data, dict) else {}
                code = data.get("exit_code", result.metadata.get("exit_code"))
                (boxed if box else plain)[command].append(ms)
                exits[command][1 if box else 0].add(code)
    spawn_plain, spawn_boxed = [], []
    for i in range(spawns):
        for box in (None, sandbox) if i % 2 == 0 else (sandbox, None):
            ms, _result = await timed("true", box, cwd)
            (spawn_boxed if box else spawn_plain).append(ms)
    all_plain = [ms for c in vetted for ms in plain[c]]
    all_boxed = [ms for c in vetted for ms in boxed[c]]
    paired = [b - p for c in vetted for p, b in zip(plain[c], boxed[c], strict=True)]
    differs = sorted(c for c in vetted if exits[c][0] != exits[c][1])
    mean_plain, mean_boxed = statistics.fmean(all_plain), statistics.fmean(all_boxed)
    return {
        "n_corpus_read_only": len(commands),
        "n_commands": len(vetted),
        "rounds": rounds,
        "per_command_ms_plain": round(mean_plain, 2),
        "per_command_ms_sandbox": round(mean_boxed, 2),
        "overhead_ms": round(mean_boxed - mean_plain, 2),
        "overhead_ms_median": round(statistics.median(paired), 2),
        "overhead_ratio": round(mean_boxed / mean_plain, 3),
        "throughput_cmds_per_s_plain": round(1000 / mean_plain, 1),
        "throughput_cmds_per_s_sandbox": round(1000 / mean_boxed, 1),
        "spawn_ms_plain": round(statistics.median(spawn_plain), 2),
        "spawn_ms_sandbox": round(statistics.median(spawn_boxed), 2),
        "same_exit_code_rate": round(1 - len(differs) / len(vetted), 4) if vetted else 0.0,
        "exit_code_differs": differs,
        "sandbox_denied": denied,
        "timed_out": slow,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, default=ROOT / "tests" / "data", help="folder with safety_corpus.yaml"
    )
    parser.add_argument("--rounds", type=int, default=3, help="runs of each command each way")
    parser.add_argument("--spawns", type=int, default=200, help="runs of `true` each way")
    args = parser.parse_args()
    if not (args.data / "safety_corpus.yaml").is_file():
        sys.exit(f"sandbox_overhead.py: --data {args.data}: {args.data / 'safety_corpus.yaml'} is missing")
    if args.rounds < 1 or args.spawns < 1:
        sys.exit("sandbox_overhead.py: --rounds and --spawns must be at least 1")
    with tempfile.TemporaryDirectory() as home:
        os.environ["DEVOPS_AGENT_HOME"] = home  # hide a throwaway data dir, not the user's
        sandbox = Sandbox.from_settings(Settings())
        if not sandbox.active:
            sys.exit(f"sandbox_overhead.py: the sandbox cannot run here: {sandbox.available.detail}")
        commands = [c for c in load(args.data) if runnable(c)]
        result = asyncio.run(measure(commands, sandbox, args.rounds, args.spawns, ROOT))
    print(f"commands: {result['n_commands']} runnable here of {result['n_corpus_read_only']} read-only")
    plain, boxed = result["per_command_ms_plain"], result["per_command_ms_sandbox"]
    print(f"per command: plain {plain} ms, sandbox {boxed} ms")
    print(f"overhead: {result['overhead_ms']} ms mean, {result['overhead_ms_median']} ms median (paired)")
    spawn_plain, spawn_boxed = result["spawn_ms_plain"], result["spawn_ms_sandbox"]
    print(f"spawn (`true`, median): plain {spawn_plain} ms, sandbox {spawn_boxed} ms")
    print(
        f"throughput: plain {result['throughput_cmds_per_s_plain']}/s, "
        f"sandbox {result['throughput_cmds_per_s_sandbox']}/s"
    )
    print(f"same exit code in the sandbox: {result['same_exit_code_rate']}")
    for command in result["exit_code_differs"]:
        print(f"  differs: {command}")
    for command in result["sandbox_denied"]:
        print(f"  sandbox refused a write: {command}")
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
