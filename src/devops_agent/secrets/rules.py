"""Token and fixed-format rules of the secret scrubber, as data: a kind, literal keywords, a regex.

:mod:`devops_agent.secrets.scrubber` turns each :class:`TokenSpec` into a rule: the regex runs only on
lines holding one of the keywords (lower-case keywords match case-insensitively), and a match that
looks hand-typed (``ghp_xxxx…``, ``…EXAMPLE``) or is cut short by a mask is dropped there. A pattern
anchors on a distinctive literal prefix or context, so that no rule needs an entropy test on ordinary
text; ``group`` picks the secret part when the match holds context too.

This module imports nothing from the package (``secrets`` imports it), and every regex is written
without nested unbounded quantifiers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class TokenSpec:
    """One token or format rule: ``kind`` names what was found, never the value."""

    kind: str
    keywords: tuple[str, ...]
    pattern: str
    flags: int = 0
    group: int | str = 0
    multiline: bool = False
    provider: bool = True  # False: a file, log or command-line format that names no provider


def _t(
    kind: str,
    keywords: Iterable[str],
    pattern: str,
    flags: int = 0,
    group: int | str = 0,
    *,
    multiline: bool = False,
    provider: bool = True,
) -> TokenSpec:
    return TokenSpec(kind, tuple(keywords), pattern, flags, group, multiline, provider)


_B = r"(?<![A-Za-z0-9_])"  # token start boundary ("\b" is wrong before a prefix like "_" or "-")
_E = r"(?![A-Za-z0-9_])"

TOKEN_RULES: tuple[TokenSpec, ...] = (
    _t("vault_unseal_key", ["unseal"], r"(?i)unseal(?: key \d+:)?[ \t]+([A-Za-z0-9+/]{43,}={0,2})", group=1),
    _t("jwt", ["eyJ"], _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    _t(
        "azure_storage_key",
        ["accountkey=", "sharedaccesskey="],
        r"(?i:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})",
        group=1,
    ),
    _t("azure_sas_signature", ["sig="], r"[?&;]sig=([A-Za-z0-9%+/]{20,}(?:%3[dD]|=){0,2})", group=1),
    _t("base64_private_key", ["LS0tLS1CRUdJTi"], r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]{20,}"),
    _t(
        "k8s_bootstrap_token",
        ["bootstrap-token"],
        r"(?i)bootstrap-token[\s=:\"']+([a-z0-9]{6}\.[a-z0-9]{16})",
        group=1,
    ),
    _t(
        "jenkins_crumb", ["jenkins-crumb"], r"(?i)Jenkins-Crumb[\"']?\s*[:=]\s*[\"']?([a-f0-9]{32,})", group=1
    ),
    _t(
        "dotnet_credential",
        ["networkcredential", "directoryentry"],
        r"(?:NetworkCredential|DirectoryEntry)\(\s*(?:\"[^\"\n]*\"\s*,\s*){1,2}\"([^\"\n]{3,})\"",
        group=1,
        multiline=True,
    ),
    # Printed once by a new Jenkins controller (also in /var/jenkins_home/secrets/initialAdminPassword).
    _t(
        "jenkins_setup_password",
        ["password to proceed to installation"],  # Jenkins' exact wording, so the scan is case-sensitive
        r"password to proceed to installation:\s{1,10}([a-f0-9]{32})(?![a-f0-9])",
        group=1,
        multiline=True,
    ),
    # ~/.pgpass lines, hostname:port:database:username:password (PostgreSQL's documented format);
    # keyed on the default port or a wildcard, which nearly every such line has.
    _t(
        "pgpass_password",
        [":5432:", ":*:"],
        r"(?m)^[^:\s#]{1,253}:(?:5432|\*):[^:\s]{1,63}:[^:\s]{1,63}:((?:[^:\s\\]|\\.){1,200})$",
        group=1,
    ),
    _t("psexec_password", ["psexec"], r"(?i)psexec[^\n]{0,200}?\s-p\s+([^\s$%][^\s]*)", group=1),
    # The MySQL / MariaDB clients take the password glued to -p (``-phunter2``, ``-p'x y'`` is
    # not accepted by them); ``-p`` alone prompts, and ``-p dbname`` names the database, so only the
    # glued form is a secret. ``-P`` is the port. The command must precede it on the same command
    # (not after ``|``, ``;`` or ``&``), so ``mkdir -p`` elsewhere on the line is left alone; other
    # programs of the family (``mysql_config ... -pthread``) are not clients.
    _t(
        "mysql_password",
        ["mysql", "mariadb"],
        r"(?i:\b(?:mysql(?:dump|admin|import|show|check|pump|slap|binlog|sh)?|mariadb(?:-[a-z]+)?)(?:\.exe)?)"
        r"(?=[ \t])[^\n|;&]{0,200}?\s-p[\"']?([^\s\"'$%<{\[-][^\s\"']*)",
        group=1,
    ),
    # sshpass -p PASSWORD (glued or not); -f FILE / -e (the SSHPASS variable) carry no secret.
    _t(
        "sshpass_password",
        ["sshpass"],
        r"(?i:\bsshpass)[^\n|;&]{0,100}?\s-p[ \t]*[\"']?([^\s\"'$%<{\[-][^\s\"']*)",
        group=1,
    ),
    _t(
        "password_hash",
        ["$"],
        r"\$(?:1|2[abxy]?|5|6|8|9|7|apr1|y|gy|sha1|md5|pbkdf2(?:-sha\d+)?|krb5[a-z]+|argon2(?:id|i|d))\$"
        r"[./A-Za-z0-9=,+@:$-]{0,60}\$[./A-Za-z0-9=+:$-]{20,}",
    ),
    # SQL: CREATE/ALTER USER|ROLE|LOGIN or GRANT … TO … IDENTIFIED [WITH <plugin>] BY [PASSWORD]
    # '<pw>' (MySQL, MariaDB, Oracle; PostgreSQL's "WITH PASSWORD '<pw>'" is a config-line match). An
    # unquoted value must end the statement (Oracle: IDENTIFIED BY tiger;), not a sentence. The atomic
    # group keeps the first "TO" after GRANT (two nested lazy scans were quadratic on a long line).
    _t(
        "sql_password",
        ["identified"],
        r"(?i:\b(?:(?:CREATE|ALTER)[ \t]+(?:USER|ROLE|LOGIN)|GRANT[ \t](?>[^;\n]{0,200}?[ \t]TO))"
        r"[ \t][^;\n]{0,200}?[ \t]IDENTIFIED(?:[ \t]+WITH[ \t]+[\w'\"]{1,40})?"
        r"[ \t]+BY(?:[ \t]+PASSWORD)?)[ \t]+"
        r"(?P<q>['\"])?(?P<v>[^\s'\";$%<{]{3,200})(?(q)(?P=q)|(?=[ \t]*(?:;|$)))",
        re.MULTILINE,
        group="v",
    ),
    # redis.conf / sentinel.conf: "requirepass <pw>", "masterauth <pw>" (a commented line is not one).
    _t(
        "redis_password",
        ["requirepass", "masterauth"],
        r"(?im)^[ \t]*(?:requirepass|masterauth)[ \t]+(\"?)([^\s\"]{1,200})\1[ \t]*$",
        group=2,
    ),
    _t("redis_password", ["redis-cli"], r"redis-cli[^\n]{0,200}?[ \t]-a[ \t]+([^\s$%-][^\s]{2,})", group=1),
    # SMTP / POP3 SASL initial responses: PLAIN is base64 of "authzid\0user\0password", XOAUTH2 and
    # OAUTHBEARER carry a bearer token. "AUTH LOGIN" sends the user name (base64) and prompts.
    _t(
        "sasl_credentials",
        ["AUTH PLAIN", "AUTH XOAUTH2", "AUTH OAUTHBEARER"],
        r"(?<![A-Za-z0-9_-])AUTH[ \t]+(?:PLAIN|XOAUTH2|OAUTHBEARER)[ \t]+([A-Za-z0-9+/]{8,}={0,2})"
        r"(?![A-Za-z0-9+/=])",
        group=1,
    ),
)

# Rules for file, log and command-line formats and for structures that hold any provider's secret:
# they stay on in find_secrets(provider_rules=False), which measures the scrubber on providers that
# no rule names.
FORMAT_KINDS = frozenset({
    "jwt", "base64_private_key", "pgpass_password", "psexec_password", "mysql_password",
    "sshpass_password", "password_hash", "redis_password", "sasl_credentials", "dotnet_credential",
    "jenkins_setup_password", "k8s_bootstrap_token", "sql_password",
})  # fmt: skip
TOKEN_RULES = tuple(replace(r, provider=r.kind not in FORMAT_KINDS) for r in TOKEN_RULES)
