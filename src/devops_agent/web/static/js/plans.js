// The decision on a plan that waits for a person: approve it, ask for changes (the model proposes
// a revised plan, which waits again) or reject it (nothing runs). The buttons call
// POST /v1/sessions/{id}/plan (docs/api.md); the server decides who may (a viewer: only a
// read-only plan of an ask-mode session) and the page only mirrors that rule.

import { h } from "./dom.js";

/** The decision controls for the plan element `el` of event `ev`; appended to `el` and returned.
 * role: the signed-in user's role; decide(decision, text) → Promise<boolean> (true: accepted). */
export function planActions(el, ev, { role, decide }) {
  const steps = ev.plan && Array.isArray(ev.plan.steps) ? ev.plan.steps : [];
  const mutating = steps.some((s) => s && s.mutating);
  const text = h("textarea", { class: "plan-text", rows: 2, placeholder: "edit: what should change; reject: why (optional)" });
  const label = h("label", { class: "field" }, h("span", {}, "Feedback"), text);
  const approve = h("button", { type: "button", class: "primary plan-approve" }, "Approve plan");
  const edit = h("button", { type: "button", class: "plan-edit" }, "Ask for changes");
  const reject = h("button", { type: "button", class: "ghost plan-reject" }, "Reject plan");
  const note = h("p", { class: "muted plan-note", role: "status" });
  const buttons = [approve, edit, reject];
  const refused = role === "viewer" && mutating ? "A step of this plan changes things: an operator or an admin must decide it." : "";
  const settle = (busy) => {
    for (const b of buttons) b.disabled = busy || Boolean(refused);
  };
  const send = async (decision) => {
    const said = text.value.trim();
    if (decision === "edit" && !said) {
      note.textContent = "Say what should change, then ask for changes.";
      text.focus();
      return;
    }
    note.textContent = "";
    settle(true);
    if (!(await decide(decision, said))) settle(false);
  };
  approve.addEventListener("click", () => send("approve"));
  edit.addEventListener("click", () => send("edit"));
  reject.addEventListener("click", () => send("reject"));
  note.textContent = refused;
  settle(false);
  const actions = h("div", { class: "plan-actions", role: "group", "aria-label": "Decide on the plan" }, label, approve, edit, reject, note);
  el.append(actions);
  return actions;
}
