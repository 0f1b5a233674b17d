// The final report (devops_agent/report.py's Report as JSON): verdict, summary, findings with
// severity badges and evidence quotes (each linked to the tool call it came from), next steps,
// what could not be gathered and what each check read. All text goes in as text nodes.

import { h } from "./dom.js";
import { renderTimeline, showCardButton } from "./evidence.js";
import { renderMarkdown } from "./markdown.js";

const VERDICTS = {
  problems_found: "Problems found",
  all_clear: "All clear: every check read its source in the window and found nothing wrong",
  inconclusive: "Inconclusive: some checks read no data (see what could not be gathered)",
};
const SEVERITIES = ["critical", "high", "medium", "low", "info"];

function list(items, render) {
  return items && items.length ? h("ul", {}, items.map((x) => h("li", {}, render(x)))) : null;
}

/** findCard(source) → the tool card element behind a finding, or null; findCardById(id) → the
 * card of a tool call id (the timeline's links), or null. */
export function renderReport(report, findCard, findCardById = () => null) {
  const findings = [...(report.findings || [])].sort(
    (a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity),
  );
  const verdict = report.verdict || "inconclusive";
  const section = h(
    "section",
    { class: "report", "aria-label": "Report" },
    h("h2", {}, report.title || "Report"),
    h("p", { class: `verdict verdict-${verdict}` }, VERDICTS[verdict] || verdict),
    report.window || report.host
      ? h("p", { class: "muted" }, [report.host && `host ${report.host}`, report.window && `window ${report.window}`].filter(Boolean).join(" · "))
      : null,
    report.summary ? h("div", { class: "md" }, renderMarkdown(report.summary)) : null,
  );
  section.append(h("h3", {}, `Findings (${findings.length})`));
  if (!findings.length) section.append(h("p", { class: "muted" }, "No findings."));
  const ol = h("ol", { class: "findings" });
  for (const f of findings) {
    const goto = showCardButton(findCard(f.source));
    ol.append(
      h(
        "li",
        { class: `finding sev-${f.severity}` },
        h("div", { class: "finding-head" }, h("span", { class: `badge sev sev-${f.severity}` }, f.severity), h("strong", {}, f.title)),
        f.detail ? h("p", {}, f.detail) : null,
        f.evidence && f.evidence.length
          ? h("blockquote", { class: "evidence" }, f.evidence.map((line) => h("pre", {}, line)))
          : null,
        f.source ? h("p", { class: "source muted" }, "from ", h("code", {}, f.source), " ", goto) : null,
        f.next_steps && f.next_steps.length ? h("div", {}, h("h4", {}, "Next steps"), list(f.next_steps, (s) => s)) : null,
      ),
    );
  }
  if (findings.length) section.append(ol);
  if (report.timeline && report.timeline.length) {
    const timeline = renderTimeline(report.timeline, findCardById, "Incident timeline", "h3");
    timeline.classList.add("report-timeline");
    section.append(timeline);
  }
  if (report.next_steps && report.next_steps.length) {
    section.append(h("h3", {}, "Next steps"), list(report.next_steps, (s) => s));
  }
  if (report.gaps && report.gaps.length) {
    section.append(
      h("h3", {}, "What could not be gathered"),
      list(report.gaps, (g) => [h("code", {}, g.tool), ` (${g.step}): ${g.reason}`, g.hint ? ` — ${g.hint}` : ""]),
    );
  }
  if (report.checks && report.checks.length) {
    section.append(
      h("h3", {}, "What was checked"),
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          {},
          h("thead", {}, h("tr", {}, ["Step", "Tool", "Read", "Detail"].map((c) => h("th", { scope: "col" }, c)))),
          h(
            "tbody",
            {},
            report.checks.map((c) =>
              h("tr", {}, h("td", {}, c.step), h("td", {}, h("code", {}, c.tool)), h("td", {}, `${c.read} ${c.unit}`), h("td", {}, c.detail || "")),
            ),
          ),
        ),
      ),
    );
  }
  return section;
}
