// The WebSocket connection (/v1/ws) with reconnection. After a drop it reconnects with backoff and
// sends init with the session, the run and the last seq the page rendered, so the server sends
// exactly what was missed; the conversation skips anything at or below that seq in any case.
// States shown to the user: connecting, connected, reconnecting, offline.

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];
const PING_MS = 20000;

export class Socket {
  /** resume() → {session_id, run_id, last_seq} to put in init; onMessage(msg); onState(state, detail). */
  constructor({ token, resume, onMessage, onState, onAuthFailed }) {
    this.token = token;
    this.resume = resume;
    this.onMessage = onMessage;
    this.onState = onState;
    this.onAuthFailed = onAuthFailed;
    this.ws = null;
    this.attempt = 0;
    this.closedByUs = false;
    this.outbox = [];
    this.timer = null;
    this.ping = null;
    this.ready = false;
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/v1/ws`;
  }

  connect() {
    this.closedByUs = false;
    this.ready = false;
    this.onState(this.attempt ? "reconnecting" : "connecting", this.attempt ? `try ${this.attempt}` : "");
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.addEventListener("open", () => {
      const init = { type: "init" };
      if (this.token) init.token = this.token;
      const r = this.resume();
      if (r.session_id) init.session_id = r.session_id;
      if (r.run_id) {
        init.run_id = r.run_id;
        init.last_seq = r.last_seq || 0;
      }
      ws.send(JSON.stringify(init));
    });
    ws.addEventListener("message", (e) => {
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      if (msg.type === "ready") {
        this.ready = true;
        this.attempt = 0;
        this.onState("connected", "");
        for (const m of this.outbox.splice(0)) ws.send(JSON.stringify(m));
        clearInterval(this.ping);
        this.ping = setInterval(() => this.send({ type: "ping" }), PING_MS);
      }
      this.onMessage(msg);
    });
    ws.addEventListener("close", (e) => {
      clearInterval(this.ping);
      if (ws !== this.ws) return;
      this.ready = false;
      if (this.closedByUs) {
        this.onState("offline", "signed out");
        return;
      }
      if (e.code === 1008) {
        this.onState("offline", "the token was refused");
        this.onAuthFailed();
        return;
      }
      const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
      this.attempt += 1;
      this.onState("reconnecting", `in ${Math.round(delay / 100) / 10} s`);
      this.timer = setTimeout(() => this.connect(), delay);
    });
  }

  /** Send now, or after the next ready when the connection is down. */
  send(msg) {
    if (this.ws && this.ready && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
    else if (msg.type !== "ping") this.outbox.push(msg);
  }

  /** Drop the connection as a network failure would (the page reconnects); used by the tests. */
  drop() {
    if (this.ws) this.ws.close(4000, "dropped");
  }

  close() {
    this.closedByUs = true;
    clearTimeout(this.timer);
    clearInterval(this.ping);
    if (this.ws) this.ws.close(1000, "signed out");
  }
}
