"""Evaluation results as Markdown: the per-case table, the tags, the summary; and a comparison.

Cells come from recorded text (case ids, a model's answer never appears here, but tags and
judge names are data): pipes and line breaks in them are escaped so a table stays a table. This
module formats; it computes nothing that :mod:`devops_agent.evals.results` does not already hold.
"""

from __future__ import annotations

from typing import Any

from devops_agent.evals.results import CaseResult, EvalResult


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _money(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


def _result_cell(case: CaseResult) -> str:
    unscored = f", {case.unscored} unscored" if case.unscored else ""
    flaky = " flaky" if case.flaky else ""
    return f"{case.passes}/{case.runs}{unscored}{flaky}"


def _literal_cell(case: CaseResult) -> str:
    verdicts = [a.literals.verdict for a in case.attempts]
    if all(v == "unscored" for v in verdicts):
        return "–"
    missing = sorted({m for a in case.attempts for m in a.literals.missing})
    passed = sum(1 for v in verdicts if v == "pass")
    tail = f" (missing {', '.join(f'`{m}`' for m in missing[:3])})" if missing else ""
    return f"{passed}/{len(verdicts)}{tail}"


def render(result: EvalResult) -> str:
    """The whole evaluation as Markdown."""
    s = result.summary
    judge = result.judge or "none (literal checks only)"
    lines = [
        f"# Evaluation {result.id[:12]}" + (f" — {_cell(result.label)}" if result.label else ""),
        "",
        f"- target: `{result.target}` · judge: `{judge}` · cases: {s.cases} · runs: {s.runs}"
        f" · {result.created_at:%Y-%m-%d %H:%M} UTC",
        f"- **pass rate: {_pct(s.pass_rate)}** ({s.passes}/{s.runs})"
        + (
            f" · per repeat {_pct(s.spread.min)}–{_pct(s.spread.max)}, sd {100 * s.spread.stdev:.1f} pts"
            if s.runs > s.cases
            else ""
        )
        + (f" · {s.unscored} unscored" if s.unscored else ""),
        f"- literal checks: {s.literal_runs.get('pass', 0)} pass, {s.literal_runs.get('fail', 0)} fail,"
        f" {s.literal_runs.get('unscored', 0)} nothing to check",
        f"- tool calls: {s.tool_calls} ({s.unmatched_calls} matched no recording) · recordings our tools"
        f" can reach: {s.reachable_recordings}/{s.recordings}",
        f"- tokens: {s.tokens:,} · cost: {_money(s.cost_usd)} (judge {_money(s.judge_cost_usd)})"
        f" · latency mean {s.latency_s_mean:.1f} s, max {s.latency_s_max:.1f} s",
    ]
    if s.flaky:
        lines.append(f"- flaky: {', '.join(s.flaky)}")
    if s.baseline:
        b = s.baseline
        lines.append(
            f"- published baseline `{b.column}` on the {len(b.cases)} cases both ran: theirs "
            f"{_pct(b.theirs)}, ours {_pct(b.ours)}"
        )
    if result.skipped:
        lines.append(f"- left out: {', '.join(result.skipped)}")
    header = ("case", "kind", "result", "literals", "unmatched", "tools", "steps", "tokens", "cost")
    lines += ["", "| " + " | ".join([*header, "latency", "baseline"]) + " |", "|---" * 11 + "|"]
    for c in result.cases:
        runs = max(1, c.runs)
        tokens = sum(a.tokens for a in c.attempts) // runs
        costs = [a.cost_usd for a in c.attempts]
        cost = None if any(v is None for v in costs) or not costs else sum(v or 0 for v in costs) / runs
        lines.append(
            "| "
            + " | ".join(
                [
                    _cell(c.id),
                    c.kind,
                    _result_cell(c),
                    _literal_cell(c),
                    str(sum(a.unmatched for a in c.attempts) // runs),
                    str(sum(len(a.tools_called) for a in c.attempts) // runs),
                    str(sum(a.steps for a in c.attempts) // runs),
                    f"{tokens:,}",
                    _money(cost),
                    f"{sum(a.latency_s for a in c.attempts) / runs:.1f} s",
                    c.baseline or "–",
                ]
            )
            + " |"
        )
    lines += ["", "| tag | cases | passes | pass rate |", "|---|---|---|---|"]
    for tag, score in s.by_tag.items():
        lines.append(
            f"| {_cell(tag)} | {score.cases} | {score.passes}/{score.runs} | {_pct(score.pass_rate)} |"
        )
    return "\n".join(lines) + "\n"


def compare(a: EvalResult, b: EvalResult) -> dict[str, Any]:
    """What changed from ``a`` to ``b``: headline figures, and each case whose pass rate moved."""
    before = {c.id: c for c in a.cases}
    after = {c.id: c for c in b.cases}
    changed = [
        {"case": cid, "before": before[cid].pass_rate, "after": after[cid].pass_rate}
        for cid in sorted(before.keys() & after.keys())
        if before[cid].pass_rate != after[cid].pass_rate
    ]
    return {
        "a": {
            "id": a.id,
            "target": a.target,
            "judge": a.judge,
            "pass_rate": a.summary.pass_rate,
            "cases": a.summary.cases,
        },
        "b": {
            "id": b.id,
            "target": b.target,
            "judge": b.judge,
            "pass_rate": b.summary.pass_rate,
            "cases": b.summary.cases,
        },
        "delta_pass_rate": round(b.summary.pass_rate - a.summary.pass_rate, 4),
        "changed": changed,
        "only_in_a": sorted(before.keys() - after.keys()),
        "only_in_b": sorted(after.keys() - before.keys()),
    }


def render_compare(diff: dict[str, Any]) -> str:
    a, b = diff["a"], diff["b"]
    lines = [
        f"# {a['id'][:12]} → {b['id'][:12]}",
        "",
        f"- A: `{a['target']}` (judge `{a['judge']}`): {_pct(a['pass_rate'])} on {a['cases']} cases",
        f"- B: `{b['target']}` (judge `{b['judge']}`): {_pct(b['pass_rate'])} on {b['cases']} cases",
        f"- change: {100 * diff['delta_pass_rate']:+.1f} points",
    ]
    if a["judge"] != b["judge"]:
        lines.append("- the judges differ: the pass rates are not measured the same way")
    if diff["only_in_a"] or diff["only_in_b"]:
        lines.append(f"- cases only in A: {len(diff['only_in_a'])}, only in B: {len(diff['only_in_b'])}")
    if diff["changed"]:
        lines += ["", "| case | A | B |", "|---|---|---|"]
        lines += [
            f"| {_cell(c['case'])} | {_pct(c['before'])} | {_pct(c['after'])} |" for c in diff["changed"]
        ]
    else:
        lines += ["", "No case changed."]
    return "\n".join(lines) + "\n"
