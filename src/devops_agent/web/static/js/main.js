// The page's wiring: sign-in, the sessions sidebar, the conversation, approvals, cancel, the mode
// switch, keyboard shortcuts. It only calls the public API (REST /v1 and the WebSocket /v1/ws,
// docs/api.md); every decision (roles, CONFIRM, ownership) is the server's, the page only
// mirrors it so that a person is not offered what will be refused.
//
// The token lives in sessionStorage (this tab, until it closes) and travels in the Authorization
// header or the WebSocket's init message, never in a URL. The open session's id is in the URL
// fragment (#/s/ID) so that a reload or a link reopens it; an id alone grants nothing.

import { Api, ApiProblem } from "./api.js";
import { renderApprovals } from "./approvals.js";
import { clear, h, visible } from "./dom.js";
import { Conversation, HANDLED_EVENT_TYPES } from "./events.js";
import { planActions } from "./plans.js";
import { Sidebar } from "./sessions.js";
import { Socket } from "./socket.js";

const TOKEN_KEY = "devops-agent.token";
const $ = (id) => document.getElementById(id);

const state = {
  api: null,
  socket: null,
  user: null,
  sessionId: null,
  runId: null,
  running: false,
  loading: false,
  buffered: [],
};

const conv = new Conversation($("conversation"), {
  fullOutput,
  resume: resumeRun,
  decidePlan: (el, ev) => planActions(el, ev, { role: state.user ? state.user.role : "viewer", decide: decidePlan }),
});
let sidebar = null;

// -- banner ------------------------------------------------------------------------------------

function showProblem(err) {
  const banner = $("banner");
  clear(banner);
  const detail = err instanceof ApiProblem || err.detail ? err.message || err.detail : String(err.message || err);
  banner.append(h("strong", {}, err.title || "Problem"), ": ", detail);
  if (err.hint) banner.append(h("span", { class: "hint" }, ` Hint: ${err.hint}`));
  banner.append(h("button", { type: "button", class: "ghost small", "aria-label": "Dismiss", onclick: hideProblem }, "×"));
  banner.hidden = false;
}

function hideProblem() {
  $("banner").hidden = true;
}

// -- sign-in -----------------------------------------------------------------------------------

function showSignin(message) {
  $("app").hidden = true;
  $("signin").hidden = false;
  $("signin-error").textContent = message ? visible(message) : "";
  $("token").focus();
}

async function signIn(token) {
  const api = new Api(token);
  let me;
  try {
    me = await api.get("/v1/me");
  } catch (err) {
    sessionStorage.removeItem(TOKEN_KEY);
    showSignin(err.status === 401 ? "That token was refused: check it, or ask an admin for a new one." : err.message);
    return;
  }
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  state.api = api;
  state.user = me;
  $("token").value = "";
  $("signin").hidden = true;
  $("app").hidden = false;
  $("who").textContent = visible(`${me.name} (${me.role})`);
  const mode = $("mode");
  mode.disabled = me.role === "viewer";
  mode.title = me.role === "viewer" ? "a viewer may run in ask mode only" : "ask: read-only tools; agent: changes need approval";
  if (me.role === "viewer") mode.value = "ask";
  sidebar = new Sidebar({
    api,
    list: $("sessions"),
    note: $("sessions-note"),
    search: $("search"),
    status: $("status-filter"),
    onOpen: (id) => {
      closeSidebar();
      location.hash = `#/s/${id}`;
    },
    onDeleted: (id) => {
      if (id === state.sessionId) newSession();
    },
    onError: showProblem,
  });
  sidebar.refresh();
  loadRunbooks();
  const wanted = sessionFromHash();
  if (wanted) await openSession(wanted);
  else newSession();
  state.socket = new Socket({
    token,
    resume: () => ({ session_id: state.sessionId, run_id: state.runId, last_seq: conv.seqOf(state.runId) }),
    onMessage,
    onState: setConnection,
    onAuthFailed: () => signOut("The service refused the token (revoked?). Sign in again."),
  });
  state.socket.connect();
}

function signOut(message) {
  if (state.socket) state.socket.close();
  state.socket = null;
  sessionStorage.removeItem(TOKEN_KEY);
  state.api = null;
  state.sessionId = state.runId = null;
  conv.reset();
  renderApprovals($("approvals"), [], {});
  if (location.hash) history.replaceState(null, "", location.pathname);
  showSignin(message || "");
}

function setConnection(kind, detail) {
  const el = $("conn");
  el.dataset.state = kind;
  el.textContent = detail ? `${kind} (${detail})` : kind;
}

// -- sessions ----------------------------------------------------------------------------------

function sessionFromHash() {
  const m = location.hash.match(/^#\/s\/([\w-]+)$/);
  return m ? m[1] : null;
}

function setRunning(running) {
  state.running = running;
  // Screen readers hold the log's announcements while a run streams, then read the result.
  $("conversation").setAttribute("aria-busy", String(running));
  $("cancel").hidden = !running;
  $("send").disabled = running;
}

function newSession() {
  state.sessionId = null;
  state.runId = null;
  conv.reset();
  renderApprovals($("approvals"), [], {});
  $("session-title").textContent = "New investigation";
  if (location.hash) history.replaceState(null, "", location.pathname);
  setRunning(false);
  if (sidebar) sidebar.select(null);
  $("question").focus();
}

async function openSession(id) {
  hideProblem();
  state.loading = true;
  state.buffered = [];
  conv.reset();
  renderApprovals($("approvals"), [], {});
  try {
    const session = await state.api.get(`/v1/sessions/${encodeURIComponent(id)}`);
    state.sessionId = session.id;
    $("session-title").textContent = visible(session.title);
    if (!$("mode").disabled) $("mode").value = session.mode;
    const events = await state.api.sessionEvents(id);
    for (const ev of events) conv.apply(ev);
    state.runId = events.length ? events[events.length - 1].run_id : null;
    setRunning(session.status === "running");
    if (session.status === "paused") await loadApprovals();
    loadKept();
  } catch (err) {
    state.loading = false;
    newSession();
    showProblem(err);
    return;
  }
  state.loading = false;
  for (const ev of state.buffered.splice(0)) onEvent(ev);
  sidebar.select(id);
  if (state.running && state.socket) {
    state.socket.send({ type: "subscribe", run_id: state.runId, last_seq: conv.seqOf(state.runId) });
  }
}

async function loadApprovals() {
  if (!state.sessionId) return;
  let pending = [];
  try {
    pending = await state.api.get(`/v1/sessions/${encodeURIComponent(state.sessionId)}/approvals`);
  } catch (err) {
    showProblem(err);
  }
  renderApprovals($("approvals"), pending, { role: state.user.role, onAnswer: answer });
}

function answer(decision, { call_ids, confirm, reason }) {
  hideProblem();
  const msg = { type: decision, session_id: state.sessionId, call_ids };
  if (confirm) msg.confirm = confirm;
  if (reason) msg.reason = reason;
  state.socket.send(msg);
}

async function loadKept() {
  const sid = state.sessionId;
  if (!sid) return;
  try {
    const kept = await state.api.get(`/v1/sessions/${encodeURIComponent(sid)}/outputs`);
    if (sid === state.sessionId) conv.markKept(kept.map((k) => k.tool_call_id));
  } catch {
    // Only an offer of more detail: the cards stand without it.
  }
}

async function fullOutput(toolCallId) {
  try {
    const out = await state.api.get(`/v1/sessions/${encodeURIComponent(state.sessionId)}/outputs/${encodeURIComponent(toolCallId)}`);
    return out.output;
  } catch (err) {
    if (err.status === 404) return "The service kept no full output for this call: the output above is all there is.";
    return `Could not load the full output: ${err.message}`;
  }
}

// -- the WebSocket's messages ------------------------------------------------------------------

function onMessage(msg) {
  switch (msg.type) {
    case "ready":
      return;
    case "accepted":
      if (msg.session_id === state.sessionId) {
        state.runId = msg.run_id;
        setRunning(true);
        renderApprovals($("approvals"), [], {});
      }
      sidebar.refresh();
      return;
    case "cancel_requested":
      if (!msg.ok) showProblem({ title: "Cancel", message: "the run had already finished" });
      return;
    case "lagged":
      state.socket.send({ type: "subscribe", run_id: msg.run_id, last_seq: conv.seqOf(msg.run_id) });
      return;
    case "problem":
      showProblem({ title: msg.title, message: `${msg.detail}${msg.request ? ` (${msg.request})` : ""}`, hint: msg.hint });
      if (msg.request === "approve" || msg.request === "deny") loadApprovals();
      return;
    case "pong":
      return;
    default:
      if (msg.run_id && typeof msg.seq === "number") onEvent(msg);
  }
}

function onEvent(ev) {
  if (state.loading) {
    state.buffered.push(ev);
    return;
  }
  if (ev.session_id !== state.sessionId) {
    if (ev.type === "run_finished") sidebar.refresh();
    return;
  }
  if (!conv.apply(ev)) return;
  if (ev.type === "run_started") {
    state.runId = ev.run_id;
    setRunning(true);
  } else if (ev.type === "run_finished" && ev.run_id === state.runId) {
    setRunning(false);
    sidebar.refresh();
    loadKept();
    if (ev.status === "paused") loadApprovals();
  }
}

// -- asking, cancelling, the mode ---------------------------------------------------------------

async function ask(event) {
  if (event) event.preventDefault();
  const box = $("question");
  const question = box.value.trim();
  if (!question || state.running) return;
  hideProblem();
  const mode = $("mode").value;
  if (!state.sessionId) {
    try {
      const title = question.length > 80 ? question.slice(0, 79) + "…" : question;
      const session = await state.api.post("/v1/sessions", { title, mode });
      state.sessionId = session.id;
      $("session-title").textContent = visible(session.title);
      history.replaceState(null, "", `#/s/${session.id}`);
      sidebar.select(session.id);
    } catch (err) {
      showProblem(err);
      return;
    }
  }
  box.value = "";
  setRunning(true);
  state.socket.send({ type: "query", question, mode, session_id: state.sessionId, ...options() });
}

/** The composer's options as query fields: a runbook, log files (paths on the server), since. */
function options() {
  const out = {};
  const inputs = {};
  const runbook = $("opt-runbook").value;
  if (runbook) out.runbooks = [runbook];
  const logs = $("opt-logs").value.split(",").map((p) => p.trim()).filter(Boolean);
  if (logs.length) inputs.logs = logs;
  const since = $("opt-since").value.trim();
  if (since) inputs.since = since;
  if (Object.keys(inputs).length) out.inputs = inputs;
  return out;
}

async function loadRunbooks() {
  try {
    const books = await state.api.get("/v1/runbooks");
    const select = $("opt-runbook");
    while (select.options.length > 1) select.remove(1);
    for (const b of books) select.append(h("option", { value: b.name }, `${b.name}: ${b.title}`));
  } catch {
    // The options stay "let the agent choose".
  }
}

/** Continue a run a service shutdown interrupted (same question, same session); the new run is followed. */
function resumeRun(runId) {
  return followAccepted(() => state.api.post(`/v1/runs/${encodeURIComponent(runId)}/resume`));
}

/** Decide on the plan the open session waits for; the run that continues is followed. */
function decidePlan(decision, text) {
  const sid = state.sessionId;
  return followAccepted(() => state.api.post(`/v1/sessions/${encodeURIComponent(sid)}/plan`, { decision, text }));
}

/** POST something that starts a run (202 with its ids) and follow that run if it is this session's. */
async function followAccepted(post) {
  hideProblem();
  try {
    const accepted = await post();
    if (accepted.session_id === state.sessionId) {
      state.runId = accepted.run_id;
      setRunning(true);
      state.socket.send({ type: "subscribe", run_id: accepted.run_id, last_seq: 0 });
    }
    sidebar.refresh();
    return true;
  } catch (err) {
    showProblem(err);
    return false;
  }
}

function cancelRun() {
  if (state.running && state.runId) state.socket.send({ type: "cancel", run_id: state.runId });
}

async function changeMode() {
  if (!state.sessionId) return;
  try {
    await state.api.patch(`/v1/sessions/${encodeURIComponent(state.sessionId)}`, { mode: $("mode").value });
    sidebar.refresh();
  } catch (err) {
    showProblem(err);
  }
}

// -- layout and keys ----------------------------------------------------------------------------

function closeSidebar() {
  $("app").classList.remove("sidebar-open");
  $("toggle-sidebar").setAttribute("aria-expanded", "false");
}

function toggleSidebar() {
  const open = $("app").classList.toggle("sidebar-open");
  $("toggle-sidebar").setAttribute("aria-expanded", String(open));
}

function onKey(e) {
  const help = $("help");
  if (help.open) return;
  const target = e.target;
  if (target === $("question")) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) ask(e);
    else if (e.key === "Escape") cancelRun();
    return;
  }
  if (["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName) || e.ctrlKey || e.metaKey || e.altKey) return;
  if ($("app").hidden) return;
  if (e.key === "/") {
    e.preventDefault();
    $("search").focus();
  } else if (e.key === "n") {
    e.preventDefault();
    newSession();
  } else if (e.key === "?") {
    help.showModal();
  }
}

function boot() {
  $("signin-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const token = $("token").value.trim();
    if (token) signIn(token);
    else showSignin("Paste your API token.");
  });
  $("composer").addEventListener("submit", ask);
  $("cancel").addEventListener("click", cancelRun);
  $("mode").addEventListener("change", changeMode);
  $("new-session").addEventListener("click", () => {
    closeSidebar();
    newSession();
  });
  $("signout").addEventListener("click", () => signOut(""));
  $("toggle-sidebar").addEventListener("click", toggleSidebar);
  $("close-sidebar").addEventListener("click", () => {
    closeSidebar();
    $("toggle-sidebar").focus();
  });
  $("show-help").addEventListener("click", () => $("help").showModal());
  $("help-close").addEventListener("click", () => $("help").close());
  document.addEventListener("keydown", onKey);
  window.addEventListener("hashchange", () => {
    const id = sessionFromHash();
    if (id && id !== state.sessionId && state.api) openSession(id);
  });
  // For the browser tests: what the page renders, and a way to cut the connection as a network would.
  window.__devopsAgent = {
    handledEventTypes: HANDLED_EVENT_TYPES,
    conversation: conv,
    state,
    dropConnection: () => state.socket && state.socket.drop(),
  };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) signIn(token);
  else signInWithoutToken();
}

/** With auth off (a single user on loopback) or behind a proxy that names the user
 * (server.trusted_user_header), /v1/me answers without a token: no sign-in form then. */
async function signInWithoutToken() {
  try {
    const res = await fetch("/v1/me", { headers: { Accept: "application/json" }, cache: "no-store" });
    if (res.ok) {
      await signIn(null);
      return;
    }
  } catch {
    // The service is unreachable: the form says so when the token is tried.
  }
  showSignin("");
}

boot();
