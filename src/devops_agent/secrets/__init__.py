"""The secret scrubber: finds credentials in text and cuts them out, irreversibly.

Foundation, because everything that keeps or passes on outside text uses it: the tool pipeline
(normalize and privacy wrappers), the session's recorder and memory, the privacy guard and the
CLI's ``privacy mask``. :mod:`.scrubber` holds the rules and :func:`scrub`; :mod:`.rules`,
:mod:`.shapes`, :mod:`.values` and :mod:`.gitleaks_rules` the rule data and value tests;
:mod:`.keyword_index` the one-pass keyword prefilter (also used by the privacy recognizers);
:mod:`.files` the names of files that hold only key material.

This package must not import tools, policies, the agent or an interface, and it must never log
or return the secret values it finds.
"""

from devops_agent.secrets.keyword_index import LineIndex, index_keywords
from devops_agent.secrets.scrubber import (
    REDACTED,
    SECRET_FILE_NAMES,
    ScrubResult,
    SecretFinding,
    find_secrets,
    is_documentation_value,
    is_secret_file,
    redact_spans,
    scrub,
)

__all__ = [
    "REDACTED",
    "SECRET_FILE_NAMES",
    "LineIndex",
    "ScrubResult",
    "SecretFinding",
    "find_secrets",
    "index_keywords",
    "is_documentation_value",
    "is_secret_file",
    "redact_spans",
    "scrub",
]
