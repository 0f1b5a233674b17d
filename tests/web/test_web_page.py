"""The web page in a real headless Chromium against the real service (scripted model): sign-in,
streaming, tool cards, approvals, cancel, reload and reconnect without duplicates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from api_harness import PROBE_TURNS, running_service, scripted
from devops_agent.config import Settings
from fixtures_db import sqlite_url

from .web_helpers import (
    ask,
    screenshot,
    session_id,
    sign_in,
    wait_connected,
    wait_run,
    web_registry,
    web_service,
)

# Records, at every change of the conversation, how many tool cards and streamed tokens it shows.
WATCH = """() => {
  window.__seen = [];
  const conv = document.getElementById('conversation');
  new MutationObserver(() => {
    const cards = [...conv.querySelectorAll('details.tool')].map(d => d.dataset.tool);
    const answer = conv.querySelector('.msg.answer');
    window.__seen.push({cards: cards.join(','), tokens: answer ? Number(answer.dataset.tokens) : 0});
  }).observe(conv, {childList: true, subtree: true, characterData: true, attributes: true});
}"""


def test_sign_in_keeps_the_token_out_of_urls_and_local_storage(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, turns=PROBE_TURNS) as svc:
        page.goto(svc.url + "/")
        page.fill("#token", "dat_not-a-token")
        page.click("#signin-form button[type=submit]")
        page.wait_for_selector("#signin-error:text('refused')")
        assert page.is_visible("#signin")
        assert not page.is_visible("#app")
        screenshot(page, "web-signin")

        sign_in(page, svc, "alice")
        assert page.inner_text("#who") == "alice (operator)"
        token = svc.tokens["alice"]
        assert page.evaluate("sessionStorage.getItem('devops-agent.token')") == token
        assert page.evaluate("localStorage.length") == 0
        assert token not in page.url
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        ask(page, "are the probes fine?")
        wait_run(page, "completed")
        assert requests
        assert all(token not in u for u in requests)

        # A reload signs in again from this tab's session storage and reopens the session.
        page.reload()
        wait_connected(page)
        assert page.locator("article.run").count() == 1

        page.click("#signout")
        page.wait_for_selector("#signin:not([hidden])")
        assert page.evaluate("sessionStorage.getItem('devops-agent.token')") is None


def test_tokens_stream_after_the_tool_cards_in_order(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, turns=PROBE_TURNS) as svc:
        sign_in(page, svc, "alice")
        page.evaluate(WATCH)
        ask(page, "are the probes fine?")
        run = wait_run(page, "completed")

        cards = run.locator("details.tool")
        assert cards.count() == 2
        assert [cards.nth(i).get_attribute("data-tool") for i in range(2)] == ["probe", "probe"]
        assert [cards.nth(i).get_attribute("data-status") for i in range(2)] == ["success", "success"]
        assert '"name": "a"' in cards.nth(0).locator("pre.args").text_content()
        assert '"name": "b"' in cards.nth(1).locator("pre.args").text_content()
        answer = run.locator(".msg.answer")
        assert answer.inner_text().strip() == "Looked at 2 probes and found nothing wrong with them."
        words = len(answer.inner_text().split())
        assert answer.get_attribute("data-tokens") == str(words)  # one token event per word

        seen = page.evaluate("window.__seen")
        # The cards came first (a, then b), then the answer grew token by token.
        firsts = [s["cards"] for s in seen]
        assert firsts.index("probe") < firsts.index("probe,probe")
        token_counts = [s["tokens"] for s in seen if s["tokens"]]
        assert token_counts[0] == 1
        assert token_counts[-1] == words
        assert sorted(set(token_counts)) == list(range(1, words + 1))  # every step shown
        assert all(s["cards"] == "probe,probe" for s in seen if s["tokens"])

        # A card opens to show its arguments and output; the session is in the sidebar.
        cards.nth(0).locator("summary").click()
        assert cards.nth(0).locator("pre.args").is_visible()
        assert cards.nth(0).locator(".badge.status-ok").inner_text() == "success"
        assert cards.nth(0).locator(".duration").inner_text().endswith("ms")
        assert page.locator("#sessions li").count() == 1
        assert page.locator("#sessions li").first.get_attribute("data-status") == "completed"
        screenshot(page, "web-conversation")


APPROVAL_RUNS = [
    [
        {"tool_calls": [{"tool": "restart", "args": {"service": "api"}}]},
        {"text": "After approval: {results}"},
    ],
]


def test_approving_a_mutating_call_continues_the_run(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, runs=[*APPROVAL_RUNS, *APPROVAL_RUNS]) as svc:
        sign_in(page, svc, "alice")
        ask(page, "restart the api", mode="agent")
        wait_run(page, "paused")
        panel = page.locator("#approvals")
        page.locator("#approve").wait_for()
        assert "restart" in panel.inner_text()
        assert page.locator("#confirm-input").count() == 0  # not destructive: no CONFIRM field
        screenshot(page, "web-approval")
        page.click("#approve")

        run = wait_run(page, "completed")
        assert page.locator("#approvals").is_hidden()
        assert "Approved by alice" in page.locator(".msg.notice.ok").inner_text()
        held = page.locator("article.run").nth(0).locator("details.tool")
        assert held.get_attribute("data-status") == "held"
        card = run.locator("details.tool")
        assert card.get_attribute("data-tool") == "restart"
        assert card.get_attribute("data-status") == "success"
        assert '"service": "api"' in card.locator("pre.args").text_content()
        assert "restarted" in run.locator(".msg.answer").inner_text()
        assert svc.store.list_audit(session_id=session_id(page))  # the approval was audited


WIPE_RUNS = [[{"tool_calls": [{"tool": "wipe", "args": {"path": "/tmp/x"}}]}, {"text": "{results}"}]] * 2


def test_a_destructive_call_needs_an_admin_and_confirm(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, runs=WIPE_RUNS) as svc:
        # An operator is told at once that only an admin may approve it.
        sign_in(page, svc, "alice")
        ask(page, "wipe it", mode="agent")
        wait_run(page, "paused")
        page.locator("#approve").wait_for()
        assert page.is_disabled("#approve")
        assert "Only an admin" in page.inner_text("#approve-note")
        page.click("#signout")

        sign_in(page, svc, "carol")
        ask(page, "wipe it", mode="agent")
        wait_run(page, "paused")
        page.locator("#approve").wait_for()
        assert page.locator("article.run").count() == 1  # carol's own new session
        assert "destructive" in page.inner_text("#approvals")
        assert "What could be lost" in page.inner_text("#approvals") or page.locator(".impact").count() == 0
        assert page.is_disabled("#approve")
        page.fill("#confirm-input", "confirm")
        assert page.is_disabled("#approve")
        screenshot(page, "web-destructive-approval")

        # The server refuses it without CONFIRM too, whatever the page's button says.
        page.fill("#confirm-input", "CONFIRM")
        page.fill("#approval-reason", "disk is full")
        assert page.is_enabled("#approve")
        page.evaluate("() => { window.__before = document.getElementById('confirm-input'); }")
        page.evaluate(
            """() => { const s = window.__devopsAgent.state;
                 s.socket.send({type: 'approve', session_id: s.sessionId}); }"""
        )
        page.wait_for_selector("#banner:not([hidden])")
        assert "CONFIRM" in page.inner_text("#banner")
        assert page.locator("article.run").count() == 1  # nothing ran

        # The refusal draws the approval card again; what the user typed survives it.
        page.wait_for_function("() => !window.__before.isConnected")
        assert page.input_value("#confirm-input") == "CONFIRM"
        assert page.input_value("#approval-reason") == "disk is full"
        assert page.is_enabled("#approve")
        page.click("#approve")
        run = wait_run(page, "completed")
        assert run.locator("details.tool").get_attribute("data-status") == "success"
        assert "wiped" in run.locator(".msg.answer").inner_text()


def test_cancel_stops_the_run(page: Any, tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"tool": "wait_sleep", "args": {}}]}, {"text": "not reached"}]
    with web_service(tmp_path, turns=turns) as svc:
        sign_in(page, svc, "alice")
        ask(page, "wait a while")
        page.wait_for_selector('details.tool[data-tool="wait_sleep"]')
        assert page.is_visible("#cancel")
        page.click("#cancel")
        run = wait_run(page, "cancelled")
        assert "cancelled" in run.locator(".run-status").inner_text()
        assert page.is_hidden("#cancel")
        assert "not reached" not in page.inner_text("#conversation")
        assert (
            svc.wait_run("alice", page.evaluate("window.__devopsAgent.state.runId"))["status"] == "cancelled"
        )


SLOW_TURNS = [
    {"tool_calls": [{"tool": "probe", "args": {"name": "a"}}]},
    {"tool_calls": [{"tool": "short_sleep", "args": {}}]},
    {"tool_calls": [{"tool": "short_sleep", "args": {}}]},
    {"tool_calls": [{"tool": "probe", "args": {"name": "b"}}]},
    {"text": "Looked at {tool_count} results; all done."},
]


def _assert_whole_and_once(page: Any, svc: Any) -> None:
    """The page shows each event of the session exactly once, as the store has them."""
    with svc.client("alice") as c:
        events = c.get(f"/v1/sessions/{session_id(page)}/events").json()["events"]
    calls = [e["tool_call_id"] for e in events if e["type"] == "tool_call"]
    shown = page.locator("details.tool").evaluate_all("els => els.map(e => e.dataset.toolCallId)")
    assert shown == calls
    assert page.locator(".msg.answer").count() == 1
    text = "".join(e["text"] for e in events if e["type"] == "token")
    assert page.locator(".msg.answer").inner_text().strip() == text.strip()
    assert page.locator("article.run").get_attribute("data-last-seq") == str(events[-1]["seq"])


def test_reload_mid_run_resumes_without_duplicates(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, turns=SLOW_TURNS) as svc:
        sign_in(page, svc, "alice")
        ask(page, "look slowly")
        page.wait_for_selector('details.tool[data-tool="short_sleep"]')
        page.reload()
        wait_connected(page)
        assert page.locator("article.run").count() == 1
        wait_run(page, "completed")
        _assert_whole_and_once(page, svc)


def test_a_dropped_connection_reconnects_from_the_last_seq(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, turns=SLOW_TURNS) as svc:
        sign_in(page, svc, "alice")
        states: list[str] = []
        page.expose_function("__connState", lambda s: states.append(s))
        page.evaluate(
            """() => new MutationObserver(() => window.__connState(
                 document.getElementById('conn').dataset.state)).observe(
                 document.getElementById('conn'), {attributes: true})"""
        )
        ask(page, "look slowly")
        page.wait_for_selector('details.tool[data-tool="short_sleep"]')
        page.evaluate("window.__devopsAgent.dropConnection()")
        wait_run(page, "completed")
        assert "reconnecting" in states
        assert states[-1] == "connected"
        _assert_whole_and_once(page, svc)


def test_sidebar_searches_filters_resumes_and_deletes(page: Any, tmp_path: Path) -> None:
    runs = [[{"text": "first answer"}], [{"text": "second answer"}]]
    with web_service(tmp_path, runs=runs) as svc:
        sign_in(page, svc, "alice")
        ask(page, "checkout latency")
        wait_run(page, "completed")
        page.click("#new-session")
        ask(page, "disk usage on db-1")
        wait_run(page, "completed")
        items = page.locator("#sessions li")
        page.wait_for_function("() => document.querySelectorAll('#sessions li').length === 2")
        # Newest first; the open session is marked.
        assert items.nth(0).inner_text().startswith("disk usage on db-1")
        assert "current" in (items.nth(0).get_attribute("class") or "")

        page.fill("#search", "checkout")
        page.wait_for_function("() => document.querySelectorAll('#sessions li').length === 1")
        assert items.first.inner_text().startswith("checkout latency")
        page.fill("#search", "")
        page.wait_for_function("() => document.querySelectorAll('#sessions li').length === 2")
        page.select_option("#status-filter", "paused")
        page.wait_for_function("() => document.querySelectorAll('#sessions li').length === 0")
        assert page.inner_text("#sessions-note") == "No sessions."
        page.select_option("#status-filter", "completed")
        page.wait_for_function("() => document.querySelectorAll('#sessions li').length === 2")

        # Resume the older session: its history is shown, and a new question continues it.
        items.nth(1).locator("button.open").click()
        page.wait_for_function(
            "() => document.getElementById('session-title').textContent === 'checkout latency'"
        )
        wait_run(page, "completed")
        assert page.locator("article.run .prompt").inner_text() == "checkout latency"
        older = session_id(page)
        assert page.url.endswith(f"#/s/{older}")
        ask(page, "and now?")
        wait_run(page, "completed", nth=2)
        assert "second answer" in page.locator("article.run").nth(1).inner_text()  # the session's 2nd run

        # Delete asks twice; deleting the open session leaves an empty new one.
        delete = page.locator(f'#sessions li[data-session-id="{older}"] button.del')
        delete.click()
        assert delete.inner_text() == "Really delete?"
        delete.click()
        page.wait_for_function("() => document.querySelectorAll('#sessions li').length === 1")
        assert page.inner_text("#session-title") == "New investigation"
        assert svc.store.find_sessions(user_id=None, limit=10)[1] == 1


def test_the_mode_switch_follows_the_role_and_the_session(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, runs=[[{"text": "one"}], [{"text": "two"}]]) as svc:
        sign_in(page, svc, "vic")  # a viewer: ask mode only
        assert page.is_disabled("#mode")
        assert page.input_value("#mode") == "ask"
        page.click("#signout")

        sign_in(page, svc, "alice")
        assert page.is_enabled("#mode")
        ask(page, "first", mode="ask")
        run = wait_run(page, "completed")
        assert "ask · model" in run.locator(".meta").inner_text()
        sid = session_id(page)
        page.select_option("#mode", "agent")  # changes the open session's mode (PATCH)
        page.wait_for_function(
            "() => document.querySelector('#sessions li .sub').textContent.includes('agent')"
        )
        assert svc.store.get_session(sid).mode == "agent"
        ask(page, "second")
        second = wait_run(page, "completed", nth=2)
        assert "agent · model" in second.locator(".meta").inner_text()


def test_no_sign_in_form_when_the_service_names_the_caller(page: Any, tmp_path: Path) -> None:
    # server.auth = false: every caller is the local admin; the page opens at once, and its
    # requests carry no token at all.
    with web_service(tmp_path, turns=PROBE_TURNS, server={"auth": False}) as svc:
        headers: list[str | None] = []
        page.on("request", lambda r: headers.append(r.headers.get("authorization")))
        page.goto(svc.url + "/")
        wait_connected(page)
        assert page.inner_text("#who") == "local (admin)"
        assert page.is_hidden("#signin")
        ask(page, "are the probes fine?")
        wait_run(page, "completed")
        assert headers
        assert set(headers) == {None}
    with web_service(tmp_path / "auth", turns=PROBE_TURNS) as svc:
        page.goto(svc.url + "/")
        page.wait_for_selector("#signin:not([hidden])")  # auth on: the form, nothing else
        assert page.is_hidden("#app")


def test_a_run_a_shutdown_interrupted_is_shown_and_resumed(page: Any, tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"tool": "short_sleep"}]},
        {"tool_calls": [{"tool": "probe", "args": {"name": "second step"}}]},
        {"text": "did {tool_count} steps"},
    ]
    url = sqlite_url(tmp_path)
    settings = Settings(database_url=url, server={"shutdown_grace_s": 15})  # type: ignore[arg-type]
    with running_service(
        url, model=scripted(turns=turns), settings=settings, registry_=web_registry()
    ) as svc:
        tokens = svc.tokens
        sign_in(page, svc, "alice")
        ask(page, "two steps")
        page.wait_for_selector('details.tool[data-tool="short_sleep"]')
    # The service shut down: the page got the run's end before the connection closed.
    run = wait_run(page, "interrupted")
    assert "interrupted" in run.locator(".run-status").inner_text()
    page.wait_for_selector('#conn[data-state="reconnecting"]')
    sid = session_id(page)

    # Another instance on the same store (another origin here: sign in again) continues it.
    with running_service(url, model=scripted(turns=PROBE_TURNS), users={}, tokens=tokens) as svc2:
        page.goto(f"{svc2.url}/#/s/{sid}")
        page.fill("#token", tokens["alice"])
        page.click("#signin-form button[type=submit]")
        wait_connected(page)
        wait_run(page, "interrupted").locator("button.resume").click()
        resumed = wait_run(page, "completed")
        assert resumed.locator(".prompt").inner_text() == "two steps"
        assert page.locator("button.resume").count() == 0
        assert page.locator("article.run").count() == 2
