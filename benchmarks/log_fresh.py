"""Log grouping on logs made now, by real programs, with a ground truth from their source code.

Usage: ``python benchmarks/log_fresh.py [--data DIR] [--keep DIR] [--no-peer]``

Loghub's ground truth was labelled by people, and its systems are the ones the miner was
validated on (leave-one-system-out). This check uses logs nobody tuned on: it runs programs the
project's test scripts install (Chromium headless at three verbosity levels, Prometheus scraping
node-exporter, both at debug level, on free ports) for about 25 seconds and groups their
messages. The ground truth is the *call site* each record names: Chromium prints
``file.cc:LINE`` in its prefix, Go's logfmt ``caller=file.go:LINE``; one call site is one format
string, so one template.

The call site is a strict truth: two call sites that print the same words (``Skipping unset
preference: …`` at two lines of one file) cannot be told apart by any parser, and a call site
that streams a different constant (``Failed to connect to the bus: <reason>``) reads as two
templates. So no parser reaches 1.0 here; compare ours with drain3 (defaults: similarity 0.4,
depth 4, no masking, as a user would start it) on the same lines, in the same run.

``--data DIR`` reads ``*.tsv`` files (``call site<TAB>message`` per line, as ``--keep`` writes
them) from ``DIR/fresh_logs`` or ``DIR`` instead of running the programs, so a corpus can be
scored again; without such files (the default folder has none) the logs are made now. Prints one
line per figure and, last, one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_data import add_data_option  # noqa: E402
from bench_procs import free_port, stop  # noqa: E402
from devops_agent.analysis.evaluation import grouping_accuracy  # noqa: E402
from log_parsing import DEFAULT_CONFIG, ours  # noqa: E402
from log_parsing_peers import drain3_runner  # noqa: E402

# [pid:tid:MMDD/HHMMSS.micro:LEVEL:file.cc(LINE)] message  (Chromium's LOG/VLOG prefix)
_CHROMIUM_RX = re.compile(r"^\[\d+:\d+:[\d/.]+:[A-Z0-9_]+:([^\]\s]+?[:(]\d+\)?)\] (.*)$")
# ts=… caller=file.go:LINE level=… msg=…  (go-kit logfmt, Prometheus and its exporters)
_LOGFMT_RX = re.compile(r"^ts=\S+ caller=(\S+:\d+) (.*)$")
PAGES = 3  # Chromium runs, at --v=1..3


def chromium_records(text: str) -> list[tuple[str, str]]:
    """``(call site, message)`` of each Chromium log record in ``text``."""
    return [(m.group(1), m.group(2)) for m in map(_CHROMIUM_RX.match, text.splitlines()) if m]


def logfmt_records(text: str) -> list[tuple[str, str]]:
    """``(caller, the rest of the record)`` of each go-kit logfmt line in ``text``."""
    return [(m.group(1), m.group(2)) for m in map(_LOGFMT_RX.match, text.splitlines()) if m]


def _run(cmd: Sequence[str], seconds: float, out: Path) -> None:
    with out.open("w") as fh, contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=fh, timeout=seconds, check=False)


def make_corpus(work: Path) -> dict[str, list[tuple[str, str]]]:
    """Run the programs that are installed; ``{corpus name: records}``."""
    corpora: dict[str, list[tuple[str, str]]] = {}
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        records: list[tuple[str, str]] = []
        for v in range(1, PAGES + 1):
            page = f"data:text/html,<title>p{v}</title><script>console.log({v})</script><p>page {v}</p>"
            cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                   f"--v={v}", f"--user-data-dir={work / f'profile{v}'}", "--dump-dom", page]  # fmt: skip
            _run(cmd, 25, work / f"chromium{v}.log")
            records += chromium_records((work / f"chromium{v}.log").read_text(errors="replace"))
        corpora["chromium"] = records
    exporter, prometheus = shutil.which("prometheus-node-exporter"), shutil.which("prometheus")
    if exporter and prometheus:
        node_port, self_port = free_port(), free_port()
        config = work / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s}\nscrape_configs:\n"
            f"  - {{job_name: node, static_configs: [{{targets: ['127.0.0.1:{node_port}']}}]}}\n"
            f"  - {{job_name: self, static_configs: [{{targets: ['127.0.0.1:{self_port}']}}]}}\n"
        )
        with (work / "exporter.log").open("w") as fh:
            node = subprocess.Popen(
                [exporter, f"--web.listen-address=127.0.0.1:{node_port}", "--log.level=debug"], stderr=fh
            )
            try:
                time.sleep(1)
                cmd = [prometheus, f"--config.file={config}", f"--storage.tsdb.path={work / 'tsdb'}",
                       f"--web.listen-address=127.0.0.1:{self_port}", "--log.level=debug"]  # fmt: skip
                _run(cmd, 20, work / "prometheus.log")
            finally:
                stop(node, 10)
        text = (work / "exporter.log").read_text(errors="replace") + (work / "prometheus.log").read_text(
            errors="replace"
        )
        corpora["go_logfmt"] = logfmt_records(text)
    return {name: records for name, records in corpora.items() if records}


def read_corpus(folder: Path) -> dict[str, list[tuple[str, str]]]:
    """The ``*.tsv`` corpora of ``folder`` (``call site<TAB>message`` per line)."""
    out = {}
    for path in sorted(folder.glob("*.tsv")):
        rows = [line.split("\t", 1) for line in path.read_text().splitlines() if "\t" in line]
        out[path.stem] = [(site, message) for site, message in rows]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    add_data_option(ap, "fresh_logs")
    ap.add_argument("--keep", type=Path, help="write the corpora made here to DIR as .tsv files")
    ap.add_argument("--no-peer", action="store_true", help="skip drain3")
    args = ap.parse_args()
    given = next(
        (d for d in (args.data / "fresh_logs", args.data) if d.is_dir() and any(d.glob("*.tsv"))), None
    )
    if given is not None:
        corpora, source = read_corpus(given), str(given)
    else:
        with tempfile.TemporaryDirectory(prefix="log-fresh-") as tmp:
            corpora, source = make_corpus(Path(tmp)), "made now"
    if not corpora:
        raise SystemExit(
            "log_fresh.py: no corpus: neither Chromium nor Prometheus with node-exporter is installed "
            "(scripts/chromium.sh, scripts/prometheus.sh), and --data holds no .tsv"
        )
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        for name, records in corpora.items():
            (args.keep / f"{name}.tsv").write_text("".join(f"{s}\t{m}\n" for s, m in records))
    drain = None if args.no_peer else drain3_runner({"drain_regex": [], "drain_st": 0.4, "drain_depth": 4})
    report: dict[str, Any] = {"source": source, "corpora": {}}
    for name, records in corpora.items():
        truth, messages = [s for s, _ in records], [m for _, m in records]
        row: dict[str, Any] = {"lines": len(records), "call_sites": len(set(truth))}
        row["ga"] = round(grouping_accuracy(truth, ours(DEFAULT_CONFIG)(messages)[0]), 3)
        row["drain3_ga"] = round(grouping_accuracy(truth, drain(messages)[0]), 3) if drain else None
        report["corpora"][name] = row
        print(f"{name}: {row['lines']} lines, {row['call_sites']} call sites")
        print(f"{name}: grouping accuracy, ours: {row['ga']}")
        why = (
            "" if drain else " (--no-peer)" if args.no_peer else " (not installed: pip install -e '.[bench]')"
        )
        print(f"{name}: grouping accuracy, drain3: {row['drain3_ga']}{why}")
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
