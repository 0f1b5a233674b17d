"""Files that hold nothing but key material, known by their name: ``id_rsa``, ``master.key``, an
Ansible vault password file.

The scrubber's content rules cannot see such a file (a Rails master key is 32 hex digits, a vault
password one word); its name can. :func:`devops_agent.secrets.scrubber.find_secrets` takes
``secret_file=True`` for one. Pure functions on names: this module imports nothing from the package
and never reads a file.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

# Files whose whole content is key material, by name: the text alone may not say so (a Rails
# ``master.key`` is 32 hex digits, an Ansible vault password file one word, a grep match inside
# ``id_rsa`` a base64 line without its PEM armour). Matched against the file's name, not its path.
SECRET_FILE_NAMES = (
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",  # SSH private keys
    "*.key", "*.ppk",  # TLS / Rails master keys, PuTTY keys
    ".vault_pass", ".vault-pass", ".vault_password", "vault_pass.txt", "vault-password.txt",  # Ansible
)  # fmt: skip


_BACKUP_SUFFIXES = (".bak", ".backup", ".old", ".orig", ".save", ".swp", "~")


def is_secret_file(path: str, extra: Sequence[str] = ()) -> bool:
    """Whether the file at ``path`` holds nothing but secrets: its name matches one of
    :data:`SECRET_FILE_NAMES` or of the ``extra`` globs (``privacy.secret_files``), ignoring case
    and a backup suffix (``ID_RSA``, ``id_rsa.bak``, ``server.key~``)."""
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
    while name.endswith(_BACKUP_SUFFIXES):
        name = name[: -len(next(x for x in _BACKUP_SUFFIXES if name.endswith(x)))]
    return bool(name) and any(
        fnmatch.fnmatchcase(name, glob.lower()) for glob in (*SECRET_FILE_NAMES, *extra)
    )
