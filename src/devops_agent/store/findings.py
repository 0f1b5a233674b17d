"""Findings memory rows: the checks a finding must pass, its not-found errors, and its record.

Split from :mod:`devops_agent.store.store` (which uses these); like it, this module must not
import from layers above foundation.
"""

from __future__ import annotations

import shlex

from devops_agent.errors import NotFoundError, UserError
from devops_agent.store.models import FindingRow
from devops_agent.store.records import MAX_PROJECT_CHARS, FindingRecord

FINDINGS_HINT = "`devops-agent memory list` shows the stored findings"


def check_finding(finding: FindingRecord) -> None:
    if not finding.project.strip() or len(finding.project) > MAX_PROJECT_CHARS:
        raise UserError(
            f"invalid project name {finding.project[:60]!r}",
            hint=f"use a non-empty name of at most {MAX_PROJECT_CHARS} characters",
        )
    for name in ("title", "summary"):
        if not getattr(finding, name).strip():
            raise UserError(f"a finding needs a {name}", hint="say what was found and why it matters")


def finding_not_found(finding_id: int, project: str | None, owner: str | None) -> NotFoundError:
    if project is None:
        return NotFoundError(f"no finding {finding_id}", hint=FINDINGS_HINT, finding_id=finding_id)
    where = f"project {project!r}"
    if owner is not None:  # it exists, in another project: say which, so the user can decide
        return NotFoundError(
            f"finding {finding_id} belongs to project {owner!r}, not {where}",
            hint=f"give --project {shlex.quote(owner)} if that is the one you mean",
            finding_id=finding_id,
        )
    return NotFoundError(
        f"no finding {finding_id} in {where}",
        hint=f"`devops-agent memory list --project {shlex.quote(project)}` shows its findings",
        finding_id=finding_id,
    )


def finding_record(row: FindingRow) -> FindingRecord:
    return FindingRecord(
        id=row.id,
        project=row.project,
        title=row.title,
        summary=row.summary,
        evidence=tuple(row.evidence or ()),
        tags=tuple(row.tags or ()),
        source=row.source,
        session_id=row.session_id,
        created_at=row.created_at,
        user_id=row.user_id,
    )
