"""Privacy policies: keep secrets and identifying data away from the model.

Two halves live here. *Detection*: the secret scrubber (:mod:`devops_agent.secrets`, a
foundation package) finds credentials and cuts them out irreversibly; :mod:`.recognizers` finds
identifying entities (hosts, IPs, e-mails, account ids, ...); :mod:`.anonymizer` combines both
into one pass that replaces entities with session-stable ``<<TYPE_tag>>`` placeholders. The guard,
vault and toolset wrapper that use them come later in this package.

This is the policies layer: it may import the foundation (config, errors, store, secrets, results),
never ``cli/`` or ``agent/``, and it never logs the values it finds.
"""

from devops_agent.privacy.anonymizer import (
    AnonymizedText,
    Anonymizer,
    Entity,
    deanonymize,
    placeholder_tag,
    resolve_overlaps,
)
from devops_agent.privacy.recognizers import PLACEHOLDER_RX, Candidate, Recognizers, is_known_host
from devops_agent.secrets.scrubber import REDACTED, ScrubResult, SecretFinding, find_secrets, scrub

__all__ = [
    "PLACEHOLDER_RX",
    "REDACTED",
    "AnonymizedText",
    "Anonymizer",
    "Candidate",
    "Entity",
    "Recognizers",
    "ScrubResult",
    "SecretFinding",
    "deanonymize",
    "find_secrets",
    "is_known_host",
    "placeholder_tag",
    "resolve_overlaps",
    "scrub",
]
