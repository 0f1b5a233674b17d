// Evidence a tool call showed (devops_agent/evidence.py's Evidence as JSON, on tool_result events)
// and a report's timeline, drawn: a metric series as a hand-written SVG chart with its anomaly
// windows shaded, a log template table sortable by count, an incident timeline. The page computes
// nothing: the points, windows, rows and entries come from the server as they are drawn. Every
// string is a text node (or an attribute set one by one); colours come from app.css classes.

import { h, visible } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const W = 640;
const H = 200;
const PAD = { left: 56, right: 12, top: 12, bottom: 28 };
const KIND_WORDS = {
  alert_start: "alert",
  anomaly: "anomaly",
  error_onset: "errors",
  deploy: "deploy",
  commit: "commit",
  finding: "finding",
  tool_call: "tool call",
};

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") el.setAttribute("class", value);
    else if (key === "text") el.textContent = visible(value);
    else el.setAttribute(key, String(value));
  }
  for (const child of children) if (child) el.append(child);
  return el;
}

/** "2026-11-27 14:05:00 UTC" from an ISO text or unix seconds: the timeline's clock is UTC. */
export function fmtUtc(when) {
  const d = typeof when === "number" ? new Date(when * 1000) : new Date(when);
  return isNaN(d) ? String(when) : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC").replace(/Z$/, " UTC");
}

function hhmm(seconds) {
  return new Date(seconds * 1000).toISOString().slice(11, 16);
}

function num(v) {
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(2);
  return String(Number(v.toPrecision(4)));
}

function seriesTitle(series) {
  const labels = Object.entries(series.labels || {}).map(([k, v]) => `${k}=${v}`).join(",");
  return labels ? `${series.name}{${labels}}` : series.name;
}

/** One series as an SVG line chart with axis labels and each anomaly window shaded. */
export function renderChart(series) {
  const pts = (series.points || []).filter((p) => Array.isArray(p) && Number.isFinite(p[0]) && Number.isFinite(p[1]));
  const title = seriesTitle(series);
  const windows = series.anomalies || [];
  if (!pts.length) return h("p", { class: "muted" }, `${title}: no points to draw`);
  const t0 = pts[0][0];
  const t1 = Math.max(pts[pts.length - 1][0], t0 + 1);
  let lo = Math.min(...pts.map((p) => p[1]));
  let hi = Math.max(...pts.map((p) => p[1]));
  if (lo === hi) { lo -= 1; hi += 1; }
  const x = (t) => PAD.left + ((t - t0) / (t1 - t0)) * (W - PAD.left - PAD.right);
  const y = (v) => PAD.top + (1 - (v - lo) / (hi - lo)) * (H - PAD.top - PAD.bottom);
  const desc = `${pts.length} points from ${fmtUtc(t0)} to ${fmtUtc(t1)}, between ${num(lo)} and ${num(hi)}` +
    (windows.length ? `; ${windows.length} anomaly window${windows.length > 1 ? "s" : ""} shaded, the first from ${fmtUtc(windows[0].start)}` : "; no anomaly window");
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": visible(`Chart of ${title}: ${desc}`) },
    s("title", { text: title }), s("desc", { text: desc }));
  // anomaly windows under the line: a window of one step still gets a visible band
  for (const w of windows) {
    const a = Date.parse(w.start) / 1000;
    const b = Date.parse(w.end) / 1000;
    if (!Number.isFinite(a) || !Number.isFinite(b)) continue;
    const left = x(Math.max(t0, Math.min(a, t1)));
    const right = x(Math.max(t0, Math.min(b, t1)));
    svg.append(s("rect", {
      class: "anomaly", x: left.toFixed(1), y: PAD.top, width: Math.max(2, right - left).toFixed(1), height: H - PAD.top - PAD.bottom,
      "data-start": w.start, "data-end": w.end, "data-score": w.score,
    }, s("title", { text: `${w.kind || "anomaly"} ${fmtUtc(w.start)} – ${fmtUtc(w.end)}, score ${w.score}${w.explanation ? `: ${w.explanation}` : ""}` })));
  }
  // axes: three value ticks on the left, the range's start, middle and end below
  const axis = s("g", { class: "axis" });
  for (const v of [lo, (lo + hi) / 2, hi]) {
    axis.append(s("line", { class: "grid", x1: PAD.left, x2: W - PAD.right, y1: y(v).toFixed(1), y2: y(v).toFixed(1) }));
    axis.append(s("text", { x: PAD.left - 6, y: (y(v) + 4).toFixed(1), "text-anchor": "end", text: num(v) }));
  }
  for (const t of [t0, (t0 + t1) / 2, t1]) {
    const anchor = t === t0 ? "start" : t === t1 ? "end" : "middle";
    axis.append(s("text", { x: x(t).toFixed(1), y: H - 8, "text-anchor": anchor, text: `${hhmm(t)} UTC` }));
  }
  svg.append(axis);
  const d = pts.map((p, i) => `${i ? "L" : "M"}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join("");
  svg.append(s("path", { class: "line", d }));
  const last = pts[pts.length - 1][1];
  const rows = windows.map((w) =>
    h("tr", {}, h("td", {}, fmtUtc(w.start)), h("td", {}, fmtUtc(w.end)), h("td", {}, w.kind || ""), h("td", {}, String(w.score)), h("td", {}, w.explanation || "")));
  const table = h("details", { class: "chart-data" },
    h("summary", {}, "Data"),
    h("p", { class: "muted" }, `${pts.length} of ${series.points_total || pts.length} points drawn; min ${num(Math.min(...pts.map((p) => p[1])))}, max ${num(Math.max(...pts.map((p) => p[1])))}, last ${num(last)}`),
    rows.length
      ? h("div", { class: "table-wrap" }, h("table", { class: "anomalies" },
          h("caption", {}, "Anomaly windows"),
          h("thead", {}, h("tr", {}, ["Start", "End", "Kind", "Score", "Explanation"].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", {}, rows)))
      : null);
  return h("figure", { class: "evidence-chart", dataset: { series: title } }, h("figcaption", {}, h("code", {}, title)), svg, table);
}

/** A log template table, by count; the Count header sorts it either way. */
export function renderTemplates(table) {
  const rows = (table.rows || []).map((r) => ({
    r,
    tr: h("tr", { dataset: { count: String(r.count) } },
      h("td", {}, h("code", {}, r.template), r.sample ? h("div", { class: "muted sample" }, r.sample) : null),
      h("td", { class: "num" }, String(r.count)),
      h("td", {}, r.first_seen ? fmtUtc(r.first_seen) : ""),
      h("td", {}, r.last_seen ? fmtUtc(r.last_seen) : "")),
  }));
  const tbody = h("tbody", {}, rows.map((x) => x.tr));
  const countTh = h("th", { scope: "col", "aria-sort": "descending" });
  let descending = true;
  const sort = h("button", { type: "button", class: "ghost small sort" }, "Count ↓");
  sort.addEventListener("click", () => {
    descending = !descending;
    rows.sort((a, b) => (descending ? b.r.count - a.r.count : a.r.count - b.r.count));
    for (const x of rows) tbody.append(x.tr);
    countTh.setAttribute("aria-sort", descending ? "descending" : "ascending");
    sort.textContent = descending ? "Count ↓" : "Count ↑";
  });
  countTh.append(sort);
  const what = table.errors_only ? "Error templates" : "Log templates";
  const caption = `${what}: ${rows.length} of ${table.total} from ${table.lines} ${table.errors_only ? "error records" : "lines"}`;
  return h("div", { class: "table-wrap evidence-templates" },
    h("table", { class: "templates" }, h("caption", {}, caption),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Template"), countTh, h("th", { scope: "col" }, "First seen"), h("th", { scope: "col" }, "Last seen"))),
      tbody));
}

/** Everything one tool call's evidence holds: its charts, its template table, its dated moments. */
export function renderEvidence(evidence) {
  const parts = [];
  for (const series of evidence.series || []) parts.push(renderChart(series));
  if (evidence.templates) parts.push(renderTemplates(evidence.templates));
  const moments = (evidence.timeline || []).filter((e) => e.kind !== "tool_call");
  if (moments.length) parts.push(renderTimeline(moments, null, "Dated in this output"));
  return parts.length ? h("div", { class: "evidence" }, h("h4", {}, "Evidence"), parts) : null;
}

/** A button that opens the tool card ``card`` and moves to it; null without a card. */
export function showCardButton(card) {
  if (!card) return null;
  return h("button", { type: "button", class: "ghost small", onclick: () => {
    card.open = true;
    card.scrollIntoView({ block: "center" });
    card.querySelector("summary").focus();
  } }, "Show the tool call");
}

/** A timeline, oldest first; findCardById(id) → the tool card an entry came from, or null. */
export function renderTimeline(entries, findCardById, heading = "Timeline", level = "h4") {
  const ol = h("ol", { class: "timeline" });
  for (const e of entries) {
    const goto = showCardButton(findCardById && e.tool_call_id ? findCardById(e.tool_call_id) : null);
    ol.append(h("li", { class: `tl tl-${e.kind}`, dataset: { kind: e.kind, at: e.at, toolCallId: e.tool_call_id || "" } },
      h("time", { datetime: e.at }, fmtUtc(e.at)), " ",
      h("span", { class: `badge tl-kind tl-kind-${e.kind}` }, KIND_WORDS[e.kind] || e.kind), " ",
      h("span", { class: "tl-label" }, e.label), goto ? " " : "", goto));
  }
  return h("div", { class: "timeline-wrap" }, h(level, {}, heading), ol);
}
