// REST client of the service (/v1, docs/api.md): the token goes in the Authorization header,
// never in a URL (no token: the server has auth off, or a trusted proxy names the user). Errors are the API's RFC 9457 problems, thrown as ApiProblem.

export class ApiProblem extends Error {
  constructor(status, body) {
    super(body && body.detail ? body.detail : `HTTP ${status}`);
    this.status = status;
    this.hint = body && body.hint ? body.hint : null;
    this.title = body && body.title ? body.title : null;
  }
}

export class Api {
  constructor(token) {
    this.token = token;
  }

  async request(method, path, body) {
    const headers = { Accept: "application/json" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let res;
    try {
      res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
    } catch (err) {
      throw new ApiProblem(0, { detail: "the service cannot be reached", hint: "check the network; the page retries" });
    }
    if (res.status === 204) return null;
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    if (!res.ok) throw new ApiProblem(res.status, data);
    return data;
  }

  get(path) {
    return this.request("GET", path);
  }
  post(path, body) {
    return this.request("POST", path, body ?? {});
  }
  patch(path, body) {
    return this.request("PATCH", path, body);
  }
  del(path) {
    return this.request("DELETE", path);
  }

  /** Every event of a session, oldest first (all pages). */
  async sessionEvents(sessionId) {
    const out = [];
    let offset = 0;
    for (;;) {
      const page = await this.get(`/v1/sessions/${encodeURIComponent(sessionId)}/events?limit=2000&offset=${offset}`);
      out.push(...page.events);
      if (page.next_offset === null || page.next_offset === undefined) return out;
      offset = page.next_offset;
    }
  }
}
