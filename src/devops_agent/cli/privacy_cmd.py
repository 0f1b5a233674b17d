"""``devops-agent privacy …``: preview what the model would see, and the vault of placeholders."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from devops_agent.cli.context import out, state
from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.filetypes import is_binary_head
from devops_agent.privacy.vault import hmac_key, purge_expired

privacy_app = typer.Typer(
    help="The privacy guard: preview masking, and the vault (placeholder → original, per session).",
    no_args_is_help=True,
)


@privacy_app.command("mask")
def mask(
    ctx: typer.Context,
    files: Annotated[
        list[Path] | None, typer.Argument(help="text files to mask ('-' or none: standard input)")
    ] = None,
    json_out: Annotated[
        bool,
        typer.Option(
            "--json",
            help="masked text, entities (with originals) and secret kinds as JSON (offsets: in the original)",
        ),
    ] = False,
) -> None:
    """Show what the model would see of some text, with the current privacy settings.

    A preview: nothing is stored. Entities become <<TYPE_tag>> placeholders, secrets [REDACTED_SECRET].

    Placeholders are the same on every run with the same key (privacy.hmac_key, or the data dir's).

    A key file by its name (id_rsa, *.key, privacy.secret_files) is redacted whole; binary input is skipped.

    Several files are each headed "==> NAME <==". Counts go to stderr; --json offsets are in the original.

    Example: devops-agent privacy mask app.log config/.env
    """
    app = state(ctx)
    texts: list[tuple[str, str]] = []
    skipped: list[str] = []
    for path in files or [Path("-")]:
        try:  # standard input as bytes too: the same binary check and decoding as a file
            raw = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
        except OSError as exc:
            raise UserError(
                f"cannot read {path}: {exc.strerror or exc}", hint="give a readable text file"
            ) from exc
        if is_binary_head(raw):  # what the model gets of a file is text
            name = "standard input" if str(path) == "-" else path
            typer.echo(f"skipped {name}: binary (NUL bytes in its first 8 KB)", err=True)
            skipped.append(str(name))
            continue
        texts.append((str(path), raw.decode("utf-8", errors="replace")))
    if not texts:
        raise UserError(
            f"nothing to mask: {', '.join(skipped)} {'is' if len(skipped) == 1 else 'are'} binary",
            hint="give text files (logs, configs, command output)",
        )
    from devops_agent.privacy.guard import anonymizer_for  # with the agent runtime: only when used

    anonymizer = anonymizer_for(app.settings, "preview", hmac_key(app.settings))
    results = [
        (name, anonymizer.anonymize(text, secret_file=name != "-" and anonymizer.holds_only_secrets(name)))
        for name, text in texts
    ]
    note = _guard_off_note(app.settings)
    if note:
        typer.echo(note, err=True)
    if json_out:
        data = [
            {
                "source": name,
                "text": r.text,
                "entities": [e._asdict() for e in r.entities],
                "secrets": [{"kind": f.kind, "start": f.start, "end": f.end} for f in r.secrets],
            }
            for name, r in results
        ]
        out.print_json(json.dumps(data))
        return
    for n, (name, r) in enumerate(results):
        if len(results) > 1:  # as head and tail do, so each file's text is told apart
            sys.stdout.write(f"{chr(10) if n else ''}==> {name} <==\n")
        sys.stdout.write(r.text if r.text.endswith("\n") or not r.text else r.text + "\n")
    counts = Counter(e.type for _, r in results for e in r.entities)
    secrets = sum(len(r.secrets) for _, r in results)
    summary = ", ".join(f"{n} {t}" for t, n in counts.most_common()) or "no entities"
    typer.echo(f"masked: {summary}; {secrets} secret{'s' if secrets != 1 else ''} removed", err=True)


def _guard_off_note(settings: Settings) -> str | None:
    """Why the preview is not what the configured model is sent, when the guard is off for it
    (None when it is on, or when no model is configured and nothing is sent anywhere)."""
    from devops_agent.privacy.guard import enabled_for

    p = settings.privacy
    if enabled_for(settings) or (p.enabled == "auto" and not settings.model.name):
        return None
    why = 'privacy.enabled = "off"' if p.enabled == "off" else f"the model {settings.model.name} is local"
    sent = "with secrets cut out" if p.scrub_secrets else "secrets too (privacy.scrub_secrets = false)"
    return (
        f"note: the privacy guard is off ({why}): the model is sent identifiers as they are, {sent}; "
        'the text shows what it would see with privacy.enabled = "on"'
    )


@privacy_app.command("purge")
def purge(
    ctx: typer.Context,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="purge one session's entries")
    ] = None,
    expired: Annotated[
        bool, typer.Option("--expired", help="purge entries past their namespace's TTL")
    ] = False,
    everything: Annotated[bool, typer.Option("--all", help="purge every entry")] = False,
) -> None:
    """Delete vault entries: one session's, the expired ones (privacy.ttl_hours), or all."""
    app = state(ctx)
    store = app.store()
    if sum([session is not None, expired, everything]) != 1:
        raise UserError("choose exactly one of --session, --expired, --all")
    if expired:
        count = purge_expired(store, app.settings.privacy.ttl_hours)
    elif session is not None:
        count = store.vault_purge(session_id=store.get_session(session).id)
    else:
        count = store.vault_purge()
    out.print(f"purged {count} vault entr{'y' if count == 1 else 'ies'}")
