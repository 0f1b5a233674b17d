// The sessions sidebar: your sessions newest first (GET /v1/sessions with q and status), open one,
// delete one (a second click confirms; the server refuses while a run is going).

import { clear, fmtTime, h } from "./dom.js";

export class Sidebar {
  /** onOpen(sessionId); onDeleted(sessionId); onError(problem). */
  constructor({ api, list, note, search, status, onOpen, onDeleted, onError }) {
    Object.assign(this, { api, list, note, search, status, onOpen, onDeleted, onError });
    this.current = null;
    this.seq = 0;
    let timer = null;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.refresh(), 200);
    });
    status.addEventListener("change", () => this.refresh());
  }

  select(sessionId) {
    this.current = sessionId;
    for (const li of this.list.children) li.classList.toggle("current", li.dataset.sessionId === sessionId);
    for (const b of this.list.querySelectorAll("button.open")) {
      if (b.closest("li").dataset.sessionId === sessionId) b.setAttribute("aria-current", "true");
      else b.removeAttribute("aria-current");
    }
  }

  async refresh() {
    const seq = ++this.seq;
    const params = new URLSearchParams({ limit: "100" });
    if (this.search.value.trim()) params.set("q", this.search.value.trim());
    if (this.status.value) params.set("status", this.status.value);
    let page;
    try {
      page = await this.api.get(`/v1/sessions?${params}`);
    } catch (err) {
      this.onError(err);
      return;
    }
    if (seq !== this.seq) return; // a newer search answered first
    clear(this.list);
    for (const s of page.items) this.list.append(this.item(s));
    this.note.textContent = page.total ? (page.total > page.items.length ? `${page.items.length} of ${page.total} shown` : "") : "No sessions.";
    this.select(this.current);
  }

  item(s) {
    const del = h("button", { type: "button", class: "ghost small del", "aria-label": `Delete session ${s.title}` }, "Delete");
    let armed = false;
    del.addEventListener("click", async () => {
      if (!armed) {
        armed = true;
        del.textContent = "Really delete?";
        del.classList.add("danger");
        setTimeout(() => {
          armed = false;
          del.textContent = "Delete";
          del.classList.remove("danger");
        }, 4000);
        return;
      }
      try {
        await this.api.del(`/v1/sessions/${encodeURIComponent(s.id)}`);
        this.onDeleted(s.id);
        this.refresh();
      } catch (err) {
        this.onError(err);
      }
    });
    const open = h(
      "button",
      { type: "button", class: "open" },
      h("span", { class: "title" }, s.title),
      h("span", { class: "sub" }, h("span", { class: `badge st-${s.status}` }, s.status), " ", s.mode,
        s.pending_approvals ? h("span", { class: "badge warn" }, `${s.pending_approvals} to approve`) : null,
        h("time", { datetime: s.updated_at }, fmtTime(s.updated_at))),
    );
    open.addEventListener("click", () => this.onOpen(s.id));
    return h("li", { dataset: { sessionId: s.id, status: s.status } }, open, del);
  }
}
