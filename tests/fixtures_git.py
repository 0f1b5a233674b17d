"""Git repositories for tests: :func:`git_at` runs ``git`` in a throwaway repository as a fixed
author, with the author and commit time a test chooses (so commits land at known moments)."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path


def git_at(repo: Path, *args: str, when: datetime | None = None) -> None:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="Dana",
        GIT_AUTHOR_EMAIL="dana@example.com",
        GIT_COMMITTER_NAME="Dana",
        GIT_COMMITTER_EMAIL="dana@example.com",
    )
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when.isoformat()
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)
