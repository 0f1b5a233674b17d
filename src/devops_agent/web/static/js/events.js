// The conversation view: renders the RunEvent stream (docs/api.md) of one session, event by event.
//
// EVENT_RENDERERS has one entry per RunEvent type of devops_agent/events.py; a test checks that
// every member of the union has one, so a new event type fails CI until the page renders it. An event
// of a type missing here is still shown (as "unrecognised event"), never dropped silently.
// Events are applied at most once: each run remembers the last seq it rendered, and an event at
// or below it (a replay after a reconnect or a reload) is skipped.

import { clear, fmtDuration, h, pretty, visible } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { renderEvidence } from "./evidence.js";
import { renderReport } from "./report.js";

const STATUS_WORDS = {
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  paused: "paused: waiting for approval",
  interrupted: "interrupted by a service shutdown (resumable)",
};

function oneLine(value, max = 90) {
  const s = visible(typeof value === "string" ? value : JSON.stringify(value)).replace(/\s+/g, " ");
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

export const EVENT_RENDERERS = {
  run_started(view, run, ev) {
    run.prompt.textContent = visible(ev.prompt);
    const parts = [ev.mode, ev.path === "runbook" ? "runbooks" : "model"];
    if (ev.model) parts.push(ev.model);
    if (ev.runbooks && ev.runbooks.length) parts.push(ev.runbooks.join(", "));
    run.meta.textContent = visible(parts.join(" · "));
    run.started = Date.parse(ev.ts) || null;
    view.setRunStatus(run, "running");
  },

  token(view, run, ev) {
    if (!run.text) {
      const md = h("div", { class: "md streaming" });
      const el = h("div", { class: "msg answer", dataset: { tokens: "0" } }, md);
      run.items.append(el);
      run.text = { el, md, raw: "" };
    }
    run.text.raw += ev.text;
    run.text.md.append(document.createTextNode(visible(ev.text)));
    run.text.el.dataset.tokens = String(Number(run.text.el.dataset.tokens) + 1);
    run.streamed = true;
  },

  plan_proposed(view, run, ev) {
    view.closeText(run);
    view.showPlan(run, ev);
  },

  plan_resolved(view, run, ev) {
    view.closeText(run);
    const words = { approved: "Plan approved", edited: "Changes asked to the plan", rejected: "Plan rejected" };
    view.planDecided(ev.revision);
    run.items.append(
      h("div", { class: `msg notice plan-resolved ${ev.decision === "rejected" ? "bad" : "ok"}`, dataset: { decision: ev.decision } },
        `${words[ev.decision] || ev.decision} by ${ev.approver}`, ev.revision ? ` (revision ${ev.revision})` : "",
        ev.feedback ? h("p", { class: "muted" }, "Feedback: ", ev.feedback) : null),
    );
  },

  plan_step(view, run, ev) {
    view.closeText(run);
    if (!view.markStep(ev)) {
      run.items.append(h("div", { class: "msg notice plan-step" }, `Step ${ev.index + 1} (${ev.title}): ${ev.status}`,
        ev.note ? ` — ${ev.note}` : ""));
    }
  },

  plan_deviation(view, run, ev) {
    view.closeText(run);
    const words = {
      unplanned_call: "A call the plan did not name",
      skipped_step: "A step was skipped",
      out_of_order: "A step ran out of order",
      replan: "Re-planned",
    };
    run.items.append(
      h("div", { class: "msg notice deviation", dataset: { kind: ev.kind } }, h("strong", {}, "Deviation from the plan: "),
        `${words[ev.kind] || ev.kind}`, ev.step !== null && ev.step !== undefined ? ` (step ${ev.step + 1})` : "",
        ": ", ev.detail, ev.tool_call_id ? h("span", { class: "muted" }, ` (${ev.tool_call_id})`) : null),
    );
  },

  delegation(view, run, ev) {
    view.closeText(run);
    const done = ev.phase === "finished";
    const status = done ? (ev.status || "finished") : "started";
    run.items.append(
      h("div", { class: "msg notice delegation", dataset: { specialist: ev.specialist, phase: ev.phase } },
        h("span", { class: "badge agent" }, ev.specialist), done ? " finished: " : " was asked: ", oneLine(ev.task, 200),
        " ", h("span", { class: `badge ${done ? (status === "failed" || status === "error" ? "status-bad" : "status-ok") : "status-running"}` }, status),
        done && ev.duration_ms !== null && ev.duration_ms !== undefined ? h("span", { class: "duration" }, " ", fmtDuration(ev.duration_ms)) : null,
        done && ev.usage && ev.usage.total_tokens ? h("span", { class: "muted" }, ` · ${ev.usage.total_tokens} tokens`) : null),
    );
  },

  critic_review(view, run, ev) {
    view.closeText(run);
    const verdicts = { accepted: "accepted the answer", applied: "changed the answer", replan: "sent it back for evidence" };
    const issues = (ev.issues || []).map((i) =>
      h("li", {}, i.check ? h("span", { class: "badge warn" }, i.check) : null, " ",
        i.title ? h("strong", {}, i.title) : null, i.title && i.detail ? ": " : "", i.detail || ""));
    const missing = (ev.missing_evidence || []).map((m) => h("li", {}, "missing evidence: ", m));
    run.items.append(
      h("div", { class: `msg notice critic ${ev.action === "accepted" ? "ok" : "bad"}`, dataset: { action: ev.action } },
        h("strong", {}, `Critic (${ev.stage}, round ${ev.round}) `), verdicts[ev.action] || ev.action,
        issues.length || missing.length ? h("ul", {}, issues, missing) : h("span", { class: "muted" }, ": no issue found")),
    );
  },

  replan(view, run, ev) {
    view.closeText(run);
    run.items.append(
      h("div", { class: "msg notice replan" }, h("strong", {}, `Re-plan ${ev.number} of ${ev.budget}: `), ev.reason),
    );
  },

  council(view, run, ev) {
    view.closeText(run);
    // A disagreement (agent/reasoning/council.py): topic, each member's position, resolution.
    const rows = (ev.disagreements || []).map((d) => {
      const positions = d && typeof d.positions === "object" && d.positions ? Object.entries(d.positions) : [];
      return h("li", {}, h("strong", {}, oneLine(d.topic || "disagreement", 200)),
        positions.length ? h("ul", {}, positions.map(([who, said]) => h("li", {}, h("span", { class: "badge agent" }, who), " ", oneLine(said, 300)))) : null,
        d.resolution ? h("p", { class: "muted" }, "Resolution: ", d.resolution) : null);
    });
    run.items.append(
      h("div", { class: "msg notice council" }, h("strong", {}, "Council: "), ev.members.map((m) => h("span", { class: "badge agent" }, m)),
        rows.length ? [h("p", {}, `${rows.length} disagreement${rows.length > 1 ? "s" : ""}:`), h("ul", {}, rows)] : h("p", {}, "The members agree.")),
    );
  },

  tool_call(view, run, ev) {
    view.closeText(run);
    view.toolCard(run, ev.tool_call_id, ev.tool, ev.args);
  },

  tool_result(view, run, ev) {
    view.closeText(run);
    const card = view.toolCard(run, ev.tool_call_id, ev.tool, null);
    card.el.dataset.status = ev.status;
    card.status.textContent = visible(ev.status);
    card.status.className = `badge status-${ev.status === "success" ? "ok" : "bad"}`;
    card.duration.textContent = fmtDuration(ev.duration_ms);
    const result = clear(card.result);
    if (ev.truncated) {
      result.append(
        h("p", { class: "truncated" }, h("span", { class: "badge warn" }, "truncated"),
          " the model saw a shortened output; the full output is below on demand"),
      );
    }
    if (ev.error) result.append(h("p", { class: "error" }, ev.error));
    if (ev.summary) result.append(h("h4", {}, "Output"), h("pre", { class: "output" }, ev.summary));
    if (ev.evidence) {
      const drawn = renderEvidence(ev.evidence);
      if (drawn) result.append(drawn);
    }
    const full = h("pre", { class: "output full-output", hidden: true });
    // Shown once the service says it kept this call's full output (view.markKept), or at once
    // for a truncated one; the model path's events carry no output of their own.
    const button = h("button", { type: "button", class: "ghost small show-full", hidden: !ev.truncated }, "Show full output");
    button.addEventListener("click", async () => {
      button.disabled = true;
      full.hidden = false;
      full.textContent = "loading…";
      full.textContent = visible(await view.fullOutput(ev.tool_call_id));
      button.hidden = true;
    });
    result.append(h("div", { class: "full" }, button, full));
  },

  approval_requested(view, run, ev) {
    view.closeText(run);
    const destructive = ev.decision === "approve_detailed";
    run.items.append(
      h(
        "div",
        { class: `msg notice approval-notice${destructive ? " destructive" : ""}`, dataset: { toolCallId: ev.tool_call_id } },
        h("strong", {}, destructive ? "Destructive call needs approval: " : "Approval needed: "),
        h("code", {}, ev.tool),
        ev.classification ? h("span", { class: "badge" }, ev.classification) : null,
        ev.command ? h("code", { class: "cmd" }, oneLine(ev.command, 200)) : h("code", { class: "cmd" }, oneLine(ev.args, 200)),
        ev.reason ? h("p", { class: "muted" }, ev.reason) : null,
      ),
    );
  },

  approval_resolved(view, run, ev) {
    view.closeText(run);
    run.items.append(
      h(
        "div",
        { class: `msg notice ${ev.approved ? "ok" : "bad"}`, dataset: { toolCallId: ev.tool_call_id } },
        ev.approved ? `Approved by ${ev.approver}` : `Denied by ${ev.approver}`,
        ev.reason ? `: ${ev.reason}` : "",
        h("span", { class: "muted" }, ` (${ev.tool_call_id})`),
      ),
    );
  },

  error(view, run, ev) {
    view.closeText(run);
    run.items.append(
      h("div", { class: "msg error-msg" }, h("strong", {}, ev.error_type || "Error"), ": ", ev.message,
        ev.hint ? h("p", { class: "hint" }, "Hint: ", ev.hint) : null),
    );
  },

  context_compacted(view, run, ev) {
    view.closeText(run);
    const parts = [];
    if (ev.replaced && ev.replaced.length) parts.push(`${ev.replaced.length} results sent as summaries`);
    if (ev.folded && ev.folded.length) parts.push(`${ev.folded.length} older calls folded`);
    if (ev.cut && ev.cut.length) parts.push(`${ev.cut.length} results cut`);
    run.items.append(
      h("div", { class: "msg notice compacted" },
        `Context fitted to the model's window (request ${ev.request}): ${ev.tokens_before} → ${ev.tokens_after} tokens`,
        ` of ${ev.limit}`, parts.length ? `; ${parts.join(", ")}` : "",
        h("span", { class: "muted" }, " (full results stay in the session)")),
    );
  },

  limit_reached(view, run, ev) {
    view.closeText(run);
    run.items.append(
      h("div", { class: "msg notice bad limit" }, h("strong", {}, "Usage limit reached: "),
        `${ev.limit} per ${ev.scope}, ${ev.used} of ${ev.ceiling}; the run ends with what it has.`),
    );
  },

  run_resumed(view, run, ev) {
    view.closeText(run);
    run.items.append(
      h("div", { class: "msg notice resumed" }, h("strong", {}, "Resumed by worker "), h("code", {}, ev.worker),
        ` after event ${ev.after_seq}; ${ev.completed_steps} completed steps are not done again`,
        h("span", { class: "muted" }, " (the step that was in flight runs again)")),
    );
  },

  notification(view, run, ev) {
    view.closeText(run);
    run.items.append(
      h("div", { class: `msg notice notification ${ev.ok ? "ok" : "bad"}`, dataset: { sink: ev.sink } },
        ev.ok ? "Sent " : "Could not send ", `${ev.kind} to `, h("code", {}, ev.sink),
        ev.attempts > 1 ? ` after ${ev.attempts} attempts` : "", ev.error ? `: ${ev.error}` : ""),
    );
  },

  run_finished(view, run, ev) {
    view.closeText(run);
    // Paused on its plan (the proposal is a call that waits too) rather than on a call's approval.
    const planWaits = ev.status === "paused" && view.plan && view.plan.runId === run.id && view.plan.el.dataset.awaiting === "true";
    for (const card of run.cards.values()) {
      if (card.el.dataset.status !== "running") continue;
      // A paused run's call waits for a person; it runs (or not) in the run that continues it.
      const held = ev.status === "paused";
      card.el.dataset.status = held ? "held" : "unfinished";
      card.status.textContent = held ? (planWaits ? "waiting for a decision on the plan" : "held for approval") : "no result";
      card.status.className = held ? "badge warn" : "badge status-bad";
    }
    if (ev.report) {
      run.items.append(renderReport(ev.report, (tool) => view.findCard(run, tool), (id) => view.cardById(id)));
    } else if (ev.output && !run.streamed) {
      run.items.append(h("div", { class: "msg answer" }, h("div", { class: "md" }, renderMarkdown(ev.output))));
    }
    const usage = ev.usage && ev.usage.total_tokens ? ` · ${ev.usage.total_tokens} tokens` : "";
    const took = run.started && Date.parse(ev.ts) ? ` · ${fmtDuration(Date.parse(ev.ts) - run.started)}` : "";
    const words = planWaits ? "paused: the plan waits for your decision" : STATUS_WORDS[ev.status] || ev.status;
    run.footer.textContent = visible(words + took + usage);
    if (ev.status === "interrupted") {
      // The service stopped at a step boundary; any instance on the same store can continue it.
      const button = h("button", { type: "button", class: "small resume" }, "Resume");
      button.addEventListener("click", async () => {
        button.disabled = true;
        if (await view.resume(run.id)) button.remove();
        else button.disabled = false;
      });
      run.footer.append(" ", button);
    }
    view.setRunStatus(run, ev.status);
  },
};

export const HANDLED_EVENT_TYPES = Object.freeze(Object.keys(EVENT_RENDERERS));

export class Conversation {
  /** container: the log element; fullOutput(toolCallId) → Promise<string>;
   * resume(runId) → Promise<boolean> (an interrupted run continued). */
  constructor(container, { fullOutput, resume, decidePlan }) {
    this.container = container;
    this.decidePlan = decidePlan;
    this.fullOutput = fullOutput;
    this.resume = resume;
    this.reset();
  }

  reset() {
    clear(this.container);
    this.runs = new Map();
    this.lastSeq = new Map();
    this.plan = null;
  }

  /** The last seq rendered of a run (0: none). */
  seqOf(runId) {
    return this.lastSeq.get(runId) || 0;
  }

  /** Apply one event; false when it was already applied (a replay). */
  apply(ev) {
    if (typeof ev.seq === "number" && ev.seq <= this.seqOf(ev.run_id)) return false;
    const run = this.run(ev.run_id);
    const render = EVENT_RENDERERS[ev.type];
    if (render) render(this, run, ev);
    else run.items.append(h("div", { class: "msg notice" }, `unrecognised event ${ev.type}: `, h("code", {}, oneLine(ev, 300))));
    this.lastSeq.set(ev.run_id, ev.seq);
    run.el.dataset.lastSeq = String(ev.seq);
    return true;
  }

  run(runId) {
    let run = this.runs.get(runId);
    if (run) return run;
    const prompt = h("p", { class: "prompt" });
    const meta = h("span", { class: "meta" });
    const items = h("div", { class: "items" });
    const footer = h("footer", { class: "run-status", role: "status" });
    const el = h(
      "article",
      { class: "run", dataset: { runId, status: "running" }, "aria-label": `Run ${runId.slice(0, 8)}` },
      h("div", { class: "msg user" }, prompt, meta),
      items,
      footer,
    );
    this.container.append(el);
    run = { id: runId, el, prompt, meta, items, footer, cards: new Map(), text: null, streamed: false, started: null };
    this.runs.set(runId, run);
    return run;
  }

  setRunStatus(run, status) {
    run.el.dataset.status = status;
    if (status === "running") run.footer.textContent = "running…";
  }

  /** End the streaming text block: render what was streamed as Markdown. */
  closeText(run) {
    if (!run.text) return;
    const { md, raw } = run.text;
    clear(md).append(renderMarkdown(raw));
    md.classList.remove("streaming");
    run.text = null;
  }

  toolCard(run, id, tool, args) {
    let card = run.cards.get(id);
    if (!card) {
      const status = h("span", { class: "badge status-running" }, "running…");
      const duration = h("span", { class: "duration" });
      const brief = h("span", { class: "args-brief" });
      const argsPre = h("pre", { class: "args" });
      const result = h("div", { class: "result" });
      const el = h(
        "details",
        { class: "tool", dataset: { toolCallId: id, tool, status: "running" } },
        h("summary", {}, h("span", { class: "tool-name" }, tool), status, duration, brief),
        h("div", { class: "tool-body" }, h("h4", {}, "Arguments"), argsPre, result),
      );
      run.items.append(el);
      card = { el, status, duration, brief, argsPre, result, tool, args: null };
      run.cards.set(id, card);
    }
    if (!args) {
      // An approved call runs in the run that continues the paused one: its arguments are on
      // the card of the run that asked.
      for (const other of this.runs.values()) {
        const earlier = other !== run && other.cards.get(id);
        if (earlier && earlier.args) args = earlier.args;
      }
    }
    if (args && !card.args) {
      card.args = args;
      card.argsPre.textContent = visible(pretty(args));
      card.brief.textContent = oneLine(args);
    }
    return card;
  }

  /** Draw a proposed plan as a numbered list of steps, each with its status; a plan that waits
   * for a person gets the decision buttons (when the page gave a decide callback). */
  showPlan(run, ev) {
    const structured = ev.plan && Array.isArray(ev.plan.steps) ? ev.plan.steps : null;
    const rows = [];
    const list = h("ol", { class: "plan-steps" });
    const titles = structured ? structured.map((s) => s.title) : ev.steps;
    titles.forEach((title, i) => {
      const step = structured ? structured[i] : {};
      // Only a model's plan reports its steps' progress (plan_step); a runbook's is a list.
      const badge = structured ? h("span", { class: "badge step-status" }, "pending") : null;
      const detail = [];
      if (step.specialist) detail.push(h("span", { class: "badge agent" }, step.specialist));
      if (step.tools && step.tools.length) detail.push(h("code", {}, step.tools.join(", ")));
      if (step.mutating) detail.push(h("span", { class: "badge warn" }, "changes things"));
      const note = h("span", { class: "muted step-note" });
      const li = h("li", { dataset: structured ? { status: "pending" } : {} }, badge, badge ? " " : "", title, detail.length ? " " : "", detail,
        step.intent ? h("div", { class: "muted" }, step.intent) : null, note);
      rows.push({ li, badge, note });
      list.append(li);
    });
    const head = ev.revision > 1 ? `Plan (revision ${ev.revision})` : "Plan";
    const el = h("div", { class: "msg plan", dataset: { revision: String(ev.revision || 0), awaiting: ev.awaiting_decision ? "true" : "false" } },
      h("h3", {}, head), ev.plan && ev.plan.goal ? h("p", {}, h("strong", {}, "Goal: "), ev.plan.goal) : null,
      ev.feedback ? h("p", { class: "muted" }, "Revised after: ", ev.feedback) : null, list);
    run.items.append(el);
    this.plan = { el, rows, revision: ev.revision || 0, actions: null, runId: run.id };
    if (ev.awaiting_decision && this.decidePlan) {
      this.plan.actions = this.decidePlan(el, ev);
    }
  }

  /** A decision on the plan: its buttons go away (the decision is shown as its own line). */
  planDecided(revision) {
    if (!this.plan || (revision && this.plan.revision && revision !== this.plan.revision)) return;
    if (this.plan.actions) this.plan.actions.remove();
    this.plan.actions = null;
    this.plan.el.dataset.awaiting = "false";
  }

  /** A step's status on the plan it belongs to (the latest one drawn); false if none. */
  markStep(ev) {
    const row = this.plan && this.plan.rows[ev.index];
    if (!row || !row.badge) return false;
    row.li.dataset.status = ev.status;
    row.badge.textContent = ev.status;
    const cls = { done: "status-ok", failed: "status-bad", running: "status-running", skipped: "warn" }[ev.status] || "";
    row.badge.className = `badge step-status ${cls}`;
    row.note.textContent = ev.note ? ` — ${visible(ev.note)}` : "";
    return true;
  }

  /** Offer "Show full output" on the cards of calls whose full output the service kept. */
  markKept(toolCallIds) {
    for (const id of toolCallIds) {
      for (const run of this.runs.values()) {
        const card = run.cards.get(id);
        const button = card && card.result.querySelector("button.show-full");
        if (button && !card.result.querySelector(".full-output:not([hidden])")) button.hidden = false;
      }
    }
  }

  /** The tool card of a call id, in whichever run drew it; null if none. */
  cardById(id) {
    for (const run of this.runs.values()) {
      const card = run.cards.get(id);
      if (card) return card.el;
    }
    return null;
  }

  /** The first tool card of a run whose tool a finding names ("tool" or "tool (step)"). */
  findCard(run, source) {
    const name = String(source || "").split(/[\s(:]/)[0];
    for (const card of run.cards.values()) if (card.tool === name) return card.el;
    return null;
  }
}
