// The approvals panel: the session's pending tool calls (GET /v1/sessions/{id}/approvals) with their
// classification and impact analysis. A destructive call (decision approve_detailed) can only be
// approved once CONFIRM is typed; the server checks it again (and the approver's role).

import { clear, h, pretty } from "./dom.js";

const IMPACT_WORDS = { what_changes: "What changes", what_could_be_lost: "What could be lost", how_to_undo: "How to undo" };

/** role: the signed-in user's role; onAnswer(decision, {call_ids, confirm, reason}). */
export function renderApprovals(container, pending, { role, onAnswer }) {
  // Drawn again for the same calls (a refused answer reloads them): what was typed stays.
  const ids = pending.map((p) => p.tool_call_id);
  const same = container.dataset.callIds === ids.join(" ");
  const typed = same ? { confirm: container.querySelector("#confirm-input")?.value, reason: container.querySelector("#approval-reason")?.value } : {};
  container.dataset.callIds = ids.join(" ");
  clear(container);
  container.hidden = !pending.length;
  if (!pending.length) return;
  const destructive = pending.some((p) => p.decision === "approve_detailed");
  const mayAnswer = role === "operator" || role === "admin";
  const mayDestroy = role === "admin";
  container.append(h("h2", {}, pending.length === 1 ? "A call waits for your approval" : `${pending.length} calls wait for your approval`));
  for (const call of pending) {
    const detailed = call.decision === "approve_detailed";
    const impact = call.impact
      ? h("dl", { class: "impact" }, Object.entries(call.impact).flatMap(([k, v]) => [h("dt", {}, IMPACT_WORDS[k] || k), h("dd", {}, v)]))
      : null;
    container.append(
      h(
        "div",
        { class: `approval${detailed ? " destructive" : ""}`, dataset: { toolCallId: call.tool_call_id } },
        h("div", { class: "approval-head" }, h("code", { class: "tool-name" }, call.tool),
          call.classification ? h("span", { class: `badge cls-${call.classification}` }, call.classification) : null,
          detailed ? h("span", { class: "badge sev-critical" }, "destructive") : null),
        call.reason ? h("p", {}, call.reason) : null,
        call.command ? h("pre", { class: "cmd" }, call.command) : h("pre", { class: "args" }, pretty(call.args)),
        impact,
      ),
    );
  }
  const confirm = destructive
    ? h("input", { id: "confirm-input", type: "text", autocomplete: "off", spellcheck: "false", placeholder: "CONFIRM", "aria-describedby": "confirm-help" })
    : null;
  const reason = h("input", { id: "approval-reason", type: "text", autocomplete: "off", placeholder: "optional; the model sees it on a denial" });
  const approve = h("button", { type: "button", class: destructive ? "danger" : "primary", id: "approve" }, destructive ? "Approve destructive call" : "Approve");
  const deny = h("button", { type: "button", class: "ghost", id: "deny" }, "Deny");
  const note = h("p", { class: "muted", id: "approve-note" });
  const update = () => {
    let why = "";
    if (!mayAnswer) why = "A viewer may not answer approvals: an operator or an admin must.";
    else if (destructive && !mayDestroy) why = "Only an admin may approve a destructive call.";
    else if (destructive && confirm.value !== "CONFIRM") why = "Type CONFIRM (capitals) to approve the destructive call.";
    approve.disabled = Boolean(why);
    deny.disabled = !mayAnswer;
    note.textContent = why;
  };
  if (confirm) confirm.addEventListener("input", update);
  if (confirm && typed.confirm) confirm.value = typed.confirm;
  if (typed.reason) reason.value = typed.reason;
  approve.addEventListener("click", () => {
    approve.disabled = deny.disabled = true;
    onAnswer("approve", { call_ids: ids, confirm: confirm ? confirm.value : undefined, reason: reason.value });
  });
  deny.addEventListener("click", () => {
    approve.disabled = deny.disabled = true;
    onAnswer("deny", { call_ids: ids, reason: reason.value });
  });
  container.append(
    h(
      "div",
      { class: "approval-form" },
      confirm
        ? h("div", { class: "field" }, h("label", { for: "confirm-input" }, "Type CONFIRM to approve"), confirm,
          h("p", { id: "confirm-help", class: "muted" }, "A destructive call: read what could be lost and how to undo it first."))
        : null,
      h("div", { class: "field" }, h("label", { for: "approval-reason" }, "Reason"), reason),
      h("div", { class: "buttons" }, approve, deny),
      note,
    ),
  );
  update();
}
