"""Findings memory: stored per project in the real store (SQLite and PostgreSQL), recalled by BM25,
through the Store API, the knowledge tools and the ``memory`` CLI commands."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import inspect
from typer.testing import CliRunner

from devops_agent.cli.context import AppState
from devops_agent.cli.memory_cmd import memory_app
from devops_agent.config import Settings
from devops_agent.errors import NotFoundError, UserError
from devops_agent.knowledge.memory import (
    CURRENT_SESSION,
    add_finding,
    project_name,
    rank_findings,
    search_memory,
)
from devops_agent.privacy import REDACTED
from devops_agent.store import Store
from devops_agent.store.engine import create_store_engine, normalize_url
from devops_agent.store.records import FindingRecord
from fixtures_db import raw_engine

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
PASSWORD = "hunter2hunter2"
TOKEN = "ghp_R8kq2LmZ7vT1xW9pN4sB6yH3cJ5dF0gA2eUo"

FINDINGS = [
    FindingRecord(
        project="payments",
        title="Checkout 502s after payments 2.14 deploy",
        summary="The 2.14 image lowered the DB pool to 5 connections; pool exhaustion under load. "
        "Rolled back to 2.13; fix is DB_POOL_SIZE=40.",
        evidence=("jenkins deploy #412 console: HikariPool-1 - Connection is not available",),
        tags=("payments-api", "database", "deploy"),
        source="triage OPS-123",
        created_at=T0,
    ),
    FindingRecord(
        project="payments",
        title="Kafka consumer lag on ledger-writer",
        summary="A poison message blocked partition 3; skipped it with kafka-consumer-groups --reset-offsets.",
        tags=("kafka", "ledger"),
        created_at=T0 + timedelta(days=1),
    ),
    FindingRecord(
        project="search",
        title="Elasticsearch pool exhaustion",
        summary="Search cluster rejected bulk requests: thread pool queue full.",
        tags=("elasticsearch",),
        created_at=T0 + timedelta(days=2),
    ),
]


# -- store (SQLite and PostgreSQL) --------------------------------------------------------------


def test_findings_round_trip_per_project_newest_first(store: Store) -> None:
    saved = [store.add_finding(f) for f in FINDINGS]
    assert all(s.id is not None for s in saved)
    assert saved[0].evidence == FINDINGS[0].evidence
    assert saved[0].tags == ("payments-api", "database", "deploy")
    assert saved[0].created_at == T0
    assert saved[0].created_at.tzinfo is not None

    payments = store.list_findings("payments")
    assert [f.title for f in payments] == [FINDINGS[1].title, FINDINGS[0].title]
    assert [f.project for f in store.list_findings(limit=10)] == ["search", "payments", "payments"]
    assert len(store.list_findings("payments", limit=1)) == 1
    assert store.list_findings("nobody") == []

    got = store.get_finding(saved[0].id or 0)
    assert got == saved[0]
    assert got.source == "triage OPS-123"

    store.delete_finding(saved[0].id or 0)
    assert [f.title for f in store.list_findings("payments")] == [FINDINGS[1].title]
    with pytest.raises(NotFoundError):
        store.delete_finding(saved[0].id or 0)
    with pytest.raises(NotFoundError):
        store.get_finding(10_000)


def test_a_delete_scoped_to_a_project_leaves_other_projects_alone(store: Store) -> None:
    payments, _kafka, search = [store.add_finding(f) for f in FINDINGS]
    with pytest.raises(NotFoundError, match="belongs to project 'search', not project 'payments'") as info:
        store.delete_finding(search.id or 0, "payments")
    assert info.value.hint == "give --project search if that is the one you mean"
    with pytest.raises(NotFoundError, match="belongs to project 'search'"):
        store.get_finding(search.id or 0, "payments")
    assert store.get_finding(search.id or 0) == search  # still there
    with pytest.raises(NotFoundError, match="no finding 10000 in project 'payments'"):
        store.delete_finding(10_000, "payments")
    assert store.delete_finding(payments.id or 0, "payments") == payments


def test_a_deleted_finding_id_is_never_given_to_another(store: Store) -> None:
    first = store.add_finding(FINDINGS[0])
    newest = store.add_finding(FINDINGS[1])
    store.delete_finding(newest.id or 0)
    later = store.add_finding(FINDINGS[2])
    assert (later.id or 0) > (newest.id or 0) > (first.id or 0)
    with pytest.raises(NotFoundError):
        store.get_finding(newest.id or 0)  # "#2" still names nothing, not the search finding


def test_a_store_from_before_the_migration_keeps_its_findings_and_stops_reusing_ids(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    from devops_agent.store.engine import MIGRATIONS_DIR

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_store_engine(normalize_url(url))
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0006")  # the revision before the findings table got AUTOINCREMENT
        for n in (1, 2, 3):
            conn.execute(
                text(
                    "INSERT INTO findings (id, project, title, summary, evidence, tags, created_at) "
                    "VALUES (:id, 'payments', :title, 's', '[]', '[]', '2026-11-01 12:00:00')"
                ),
                {"id": n, "title": f"finding {n}"},
            )
    engine.dispose()
    with Store(url) as store:
        assert [f.id for f in store.list_findings("payments")] == [3, 2, 1]
        store.delete_finding(3)
        assert store.add_finding(FINDINGS[0]).id == 4
        store.delete_finding(4)
        assert store.add_finding(FINDINGS[0]).id == 5
    with raw_engine(url) as engine, engine.connect() as conn:
        names = {ix["name"] for ix in inspect(conn).get_indexes("findings")}
        assert {"ix_findings_project_created_at", "ix_findings_session_id"} <= names


def test_findings_table_and_indexes_exist(store: Store, store_url: str) -> None:
    engine = create_store_engine(normalize_url(store_url))
    try:
        with engine.connect() as conn:
            insp = inspect(conn)
            assert "findings" in insp.get_table_names()
            names = {ix["name"] for ix in insp.get_indexes("findings")}
            assert {"ix_findings_project_created_at", "ix_findings_session_id"} <= names
            assert not insp.get_foreign_keys("findings"), "findings outlive sessions"
    finally:
        engine.dispose()


def test_finding_outlives_its_session(store: Store) -> None:
    session = store.create_session(title="triage", mode="ask", model=None)
    store.add_finding(FindingRecord(project="p", title="t", summary="s", session_id=session.id))
    store.delete_session(session.id)
    assert store.list_findings("p")[0].session_id == session.id


def test_invalid_findings_are_user_errors(sqlite_store: Store) -> None:
    with pytest.raises(UserError, match="title"):
        sqlite_store.add_finding(FindingRecord(project="p", title="  ", summary="s"))
    with pytest.raises(UserError, match="summary"):
        sqlite_store.add_finding(FindingRecord(project="p", title="t", summary=""))
    with pytest.raises(UserError, match="project"):
        sqlite_store.add_finding(FindingRecord(project="x" * 201, title="t", summary="s"))
    with pytest.raises(ValueError, match="timezone-aware"):
        FindingRecord(project="p", title="t", summary="s", created_at=datetime(2026, 1, 1))  # noqa: DTZ001


def _stored_text(store_url: str) -> str:
    """Every finding column as the database holds it, read around the Store API."""
    engine = create_store_engine(normalize_url(store_url))
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT title, summary, evidence, tags, source FROM findings")
            return "\n".join(str(tuple(row)) for row in rows)
    finally:
        engine.dispose()


def test_memory_layer_never_stores_secrets(store: Store, store_url: str) -> None:
    saved = add_finding(
        store,
        FindingRecord(
            project="p",
            title=f"leaked {TOKEN} in deploy log",
            summary=f"DB_PASSWORD={PASSWORD} was in the env dump; rotated it",
            evidence=(f"token={TOKEN}", "", "  ", "jenkins #12 console"),
            tags=(f"password={PASSWORD}", "", "db"),
            source=f"triage OPS-1 {TOKEN}",
        ),
    )
    assert saved.title == f"leaked {REDACTED} in deploy log"
    assert saved.summary == f"DB_PASSWORD={REDACTED} was in the env dump; rotated it"
    assert saved.evidence == (f"token={REDACTED}", "jenkins #12 console"), "empty items are dropped"
    assert saved.tags == (f"password={REDACTED}", "db")
    assert saved.source == f"triage OPS-1 {REDACTED}", "identifiers stay, secrets go"
    on_disk = _stored_text(store_url)
    assert "jenkins #12 console" in on_disk
    assert PASSWORD not in on_disk
    assert TOKEN not in on_disk


def test_memory_layer_rejects_a_multi_line_title(sqlite_store: Store) -> None:
    with pytest.raises(UserError, match="one line"):
        add_finding(sqlite_store, FindingRecord(project="p", title="first\nsecond", summary="s"))
    assert (
        add_finding(sqlite_store, FindingRecord(project="p", title="title\n", summary="s")).title == "title"
    )


# -- ranking ----------------------------------------------------------------------------------


def test_search_ranks_related_finding_first_within_the_project(store: Store) -> None:
    for f in FINDINGS:
        store.add_finding(f)
    hits = search_memory(store, "payments", "checkout returns 502, HikariPool connection is not available")
    assert hits[0].finding.title == FINDINGS[0].title
    assert hits[0].score > 0
    hits = search_memory(store, "payments", "consumer lag kafka")
    assert [h.finding.title for h in hits] == [FINDINGS[1].title]
    # "pool exhaustion" is in both projects: the other project's finding never comes back.
    assert {h.finding.project for h in search_memory(store, "payments", "pool exhaustion")} == {"payments"}
    assert search_memory(store, "payments", "zookeeper quorum") == []


def test_ranking_ties_prefer_the_newer_finding() -> None:
    old = FindingRecord(project="p", title="disk full on node", summary="cleaned /var/log", created_at=T0)
    new = FindingRecord(
        project="p", title="disk full on node", summary="cleaned /var/log", created_at=T0 + timedelta(1)
    )
    hits = rank_findings([new, old], "disk full", limit=2)  # the store lists newest first
    assert [h.finding.created_at for h in hits] == [new.created_at, old.created_at]
    assert hits[0].score == hits[1].score
    assert rank_findings([], "anything") == []


def test_project_name_setting_or_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "checkout-service"
    work.mkdir()
    monkeypatch.chdir(work)
    assert project_name(Settings(data_dir=tmp_path)) == "checkout-service"
    assert project_name(Settings(data_dir=tmp_path, project="payments")) == "payments"


# -- tools ------------------------------------------------------------------------------------


def _tools(settings: Settings) -> dict[str, object]:
    from devops_agent.tools import knowledge

    ts = knowledge.build(settings)
    for name in ("add_finding", "search_memory"):
        spec = ts.entries[name].spec
        assert (spec.read_only, spec.risk) == (True, "safe")
    return {name: e.function for name, e in ts.entries.items()}


def test_tools_add_and_recall_with_session(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", project="payments")
    tools = _tools(settings)
    add, recall = tools["add_finding"], tools["search_memory"]
    assert recall("checkout 502").status == "no_data"  # type: ignore[operator]

    token = CURRENT_SESSION.set("3f2a9c0d1e")
    try:
        res = add(  # type: ignore[operator]
            FINDINGS[0].title,
            FINDINGS[0].summary,
            evidence=list(FINDINGS[0].evidence),
            tags=["payments-api", "database"],
        )
    finally:
        CURRENT_SESSION.reset(token)
    assert res.status == "success"
    assert res.data["project"] == "payments"
    assert res.data["session"] == "3f2a9c0d1e"
    add("Kafka consumer lag", "poison message on partition 3", tags=["kafka"])  # type: ignore[operator]

    found = recall("HikariPool connection not available after deploy", limit=5)  # type: ignore[operator]
    assert found.status == "success"
    top = found.data[0]
    assert top["title"] == FINDINGS[0].title
    assert top["session"] == "3f2a9c0d1e"
    assert top["evidence"] == list(FINDINGS[0].evidence)
    assert set(top) >= {"id", "title", "summary", "created_at", "session", "score"}
    assert datetime.fromisoformat(top["created_at"]).tzinfo is not None
    assert found.metadata["project"] == "payments"

    with Store.from_settings(settings) as store:  # the same store the agent's sessions use
        assert [f.source for f in store.list_findings("payments")] == ["agent", "agent"]

    other = _tools(Settings(data_dir=tmp_path / "data", project="search"))["search_memory"]
    assert other("HikariPool connection").status == "no_data"  # type: ignore[operator]


def test_tool_errors_are_data(tmp_path: Path) -> None:
    tools = _tools(Settings(data_dir=tmp_path / "data", project="p"))
    assert tools["add_finding"]("x" * 301, "s").status == "error"  # type: ignore[operator]
    assert tools["add_finding"]("t", "s", evidence=["e"] * 31).status == "error"  # type: ignore[operator]
    assert tools["add_finding"]("t", "   ").status == "error"  # type: ignore[operator]
    assert tools["search_memory"]("  ").status == "error"  # type: ignore[operator]


def test_add_finding_tool_never_stores_secrets(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", project="p")
    add = _tools(settings)["add_finding"]
    res = add(
        f"token {TOKEN} in CI log",
        f"password={PASSWORD}",
        evidence=[f"mysql -u app --password {PASSWORD}", ""],
        tags=[""],
    )  # type: ignore[operator]
    assert res.status == "success"
    assert TOKEN not in json.dumps(res.data)
    assert res.data["evidence"] == [f"mysql -u app --password {REDACTED}"]
    assert res.data["tags"] == []
    with Store.from_settings(settings) as store:
        (kept,) = store.list_findings("p")
    assert PASSWORD not in repr(kept)
    assert TOKEN not in repr(kept)
    multi = add("first\nsecond", "s")  # type: ignore[operator]
    assert multi.status == "error"
    assert "one line" in (multi.error or "")


# -- CLI --------------------------------------------------------------------------------------


def test_memory_cli_add_search_list_delete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "payments"
    work.mkdir()
    monkeypatch.chdir(work)
    runner = CliRunner()

    def run(*args: str) -> str:
        result = runner.invoke(memory_app, list(args), obj=AppState())
        assert result.exit_code == 0, result.output
        return result.stdout

    added = json.loads(
        run(
            "add",
            FINDINGS[0].title,
            "--summary",
            FINDINGS[0].summary,
            "-e",
            FINDINGS[0].evidence[0],
            "-t",
            "database",
            "--source",
            "triage OPS-123",
            "--json",
        )
    )
    assert added["project"] == "payments"  # the working directory's name
    run("add", "Elasticsearch pool exhaustion", "-s", "bulk queue full", "--project", "search")

    found = json.loads(run("search", "connection pool HikariPool", "--json"))
    assert [f["id"] for f in found["findings"]] == [added["id"]]
    assert found["findings"][0]["source"] == "triage OPS-123"
    assert "HikariPool" in run("search", "HikariPool")

    listed = json.loads(run("list", "--all-projects", "--json"))
    assert [f["project"] for f in listed["findings"]] == ["search", "payments"]
    run("delete", str(added["id"]))
    assert json.loads(run("list", "--json"))["findings"] == []

    missing = runner.invoke(memory_app, ["delete", str(added["id"])], obj=AppState())
    assert isinstance(missing.exception, NotFoundError)


@pytest.mark.slow
def test_memory_add_cli_scrubs_secrets_and_checks_its_input(tmp_path: Path, isolated_home: Path) -> None:
    from fixtures_cli import assert_one_line_error, cli

    added = cli(
        "memory",
        "add",
        f"DB creds in {TOKEN}",
        "-s",
        f"DB_PASSWORD={PASSWORD} {TOKEN}",
        "-e",
        f"token={TOKEN}",
        "-e",
        "",
        "-t",
        "",
        "--json",
        cwd=tmp_path,
    )
    assert added.returncode == 0, added.stderr
    listed = cli("memory", "list", "--json", cwd=tmp_path)
    for proc in (added, listed):
        assert PASSWORD not in proc.stdout
        assert TOKEN not in proc.stdout
    (finding,) = json.loads(listed.stdout)["findings"]
    assert finding["summary"] == f"DB_PASSWORD={REDACTED} {REDACTED}"
    assert finding["evidence"] == [f"token={REDACTED}"]
    assert finding["tags"] == []
    db = isolated_home / "data" / "devops-agent.db"
    assert _stored_text(f"sqlite:///{db}").count(REDACTED) == 4

    two_lines = cli("memory", "add", "first line\nsecond line", "-s", "s", cwd=tmp_path)
    assert_one_line_error(two_lines, 2, "one line")
    assert len(json.loads(cli("memory", "list", "--json", cwd=tmp_path).stdout)["findings"]) == 1


@pytest.mark.slow
def test_memory_delete_cli_stays_in_its_project_and_ids_are_not_reused(tmp_path: Path) -> None:
    """From the payments checkout, `memory delete ID` of the search team's finding removed it."""
    from fixtures_cli import assert_one_line_error, cli

    work = tmp_path / "payments"
    work.mkdir()

    def add(title: str, *extra: str) -> int:
        proc = cli("memory", "add", title, "-s", "summary", "--json", *extra, cwd=work)
        assert proc.returncode == 0, proc.stderr
        return int(json.loads(proc.stdout)["id"])

    ours = add("Checkout 502s")
    theirs = add("Elasticsearch pool exhaustion", "--project", "search")
    refused = cli("memory", "delete", str(theirs), cwd=work)
    assert_one_line_error(
        refused, 2, "belongs to project 'search', not project 'payments'", "--project search"
    )
    listed = json.loads(cli("memory", "list", "--all-projects", "--json", cwd=work).stdout)["findings"]
    assert [f["id"] for f in listed] == [theirs, ours]

    deleted = cli("memory", "delete", str(theirs), "--project", "search", "--json", cwd=work)
    assert deleted.returncode == 0, deleted.stderr
    assert json.loads(deleted.stdout)["deleted"]["title"] == "Elasticsearch pool exhaustion"
    assert add("Kafka consumer lag") > theirs  # the newest id was freed, and is not handed out again
    assert_one_line_error(
        cli("memory", "delete", str(theirs), cwd=work), 2, f"no finding {theirs} in project"
    )
