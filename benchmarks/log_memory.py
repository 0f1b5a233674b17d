"""Summarize a large log in bounded memory: error grouping and template mining over N GB.

Generates a realistic mixed log (syslog-style app lines with ids, IPs and durations; ~2% errors
of eight shapes; a burst of one error in the middle, at any size) of ``--gb`` gigabytes in a
temporary file, then streams it through the same code the ``logs_errors`` and ``logs_patterns``
tools use, in separate child processes, and reports each one's time, MB/s and peak RSS (from the
kernel's ru_maxrss of the child). The file is deleted afterwards.

    .venv/bin/python benchmarks/log_memory.py --gb 1
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ERRORS = [
    "payment {n} declined: card expired for customer {c}",
    "upstream 10.0.{a}.{b}:8080 timed out after {d}ms",
    "database connection pool exhausted (size={n})",
    "failed to write /var/lib/app/cache/{c}.bin: No space left on device",
    "user {c} login failed from 192.168.{a}.{b}",
    "OOMKilled container worker-{n}",
    "TLS handshake error from 10.{a}.{b}.7:{n}: EOF",
    "job {c} exceeded deadline of {d}s",
]
INFO = [
    "request GET /api/orders/{n} completed in {d}ms status=200",
    "user {c} logged in from 10.1.{a}.{b}",
    "cache hit ratio {a}.{b}% for shard {n}",
    "scheduled job {c} started",
    "health check ok latency={d}ms",
]


def generate(path: Path, gigabytes: float, seed: int = 7) -> int:
    rng = random.Random(seed)
    target = int(gigabytes * 1024**3)
    written = lines = 0
    t0 = 1_763_800_000  # fixed start: 2025-11-22
    with path.open("w") as fh:
        while written < target:
            chunk = []
            # the burst is placed by each line's own offset, not its chunk's: at a small --gb the
            # burst is narrower than a chunk, and no chunk would start inside it
            at = written
            for _ in range(10_000):
                lines += 1
                ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 + lines // 50))
                burst = target * 0.49 < at < target * 0.51 and rng.random() < 0.3
                pool = ERRORS if burst or rng.random() < 0.02 else INFO
                shape = ERRORS[2] if burst else rng.choice(pool)
                level = "ERROR" if pool is ERRORS else "INFO"
                msg = shape.format(
                    n=rng.randint(1, 99999),
                    c=f"c{rng.randint(1, 5000)}",
                    a=rng.randint(0, 255),
                    b=rng.randint(0, 255),
                    d=rng.randint(1, 30000),
                )
                chunk.append(f"{ts} web-{rng.randint(1, 40)} app[{rng.randint(100, 9999)}]: {level} {msg}\n")
                at += len(chunk[-1])
            block = "".join(chunk)
            fh.write(block)
            written += len(block)
    return lines


CHILD = """
import json, resource, sys, time
from pathlib import Path
from devops_agent.config import Settings
from devops_agent.tools import logs
path, what = sys.argv[1], sys.argv[2]
# the whole file is the point: no read budget (the tools stop at 3/4 of tools.timeout_s otherwise)
settings = Settings(files={"roots": [str(Path(path).parent)]}, tools={"timeout_s": 86400})
t0 = time.perf_counter()
if what == "errors":
    result = logs.build(settings).entries["logs_errors"].function(paths=[path], max_groups=10)
    summary = {"groups": result.data["groups_total"] if isinstance(result.data, dict) else None,
               "spikes": len(result.data.get("spikes", [])) if isinstance(result.data, dict) else None}
else:
    result = logs.build(settings).entries["logs_patterns"].function(paths=[path], max_templates=20)
    summary = {"templates": result.data["templates_total"]}
elapsed = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
partial = bool(isinstance(result.data, dict) and result.data.get("partial"))
out = {"seconds": elapsed, "peak_rss_mb": rss, "status": result.status, "partial": partial}
print(json.dumps({**out, **summary}))
"""


def measure(path: Path, what: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), what], capture_output=True, text=True)
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        sys.exit(f"log_memory.py: the {what} pass failed (exit {proc.returncode}): {last}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gb", type=float, default=1.0, help="size of the generated log")
    parser.add_argument("--data", type=Path, default=None, help="unused: the log is generated")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.log"
        t0 = time.perf_counter()
        lines = generate(path, args.gb)
        size_mb = path.stat().st_size / 1024**2
        print(f"generated {size_mb:.0f} MB, {lines} lines in {time.perf_counter() - t0:.0f}s")
        results = {}
        for what in ("errors", "patterns"):
            r = measure(path, what)
            r["mb_per_s"] = round(size_mb / r["seconds"], 1)
            results[what] = r
            print(
                f"{what}: {r['seconds']:.1f}s, {r['mb_per_s']} MB/s, peak RSS {r['peak_rss_mb']:.0f} MB ({r})"
            )
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "gb": args.gb,
                "size_mb": round(size_mb),
                "lines": lines,
                "parent_rss_mb": round(own),
                **{
                    f"{k}_{m}": round(v, 1) if isinstance(v, float) else v
                    for k, r in results.items()
                    for m, v in r.items()
                },
            }
        )
    )


if __name__ == "__main__":
    main()
