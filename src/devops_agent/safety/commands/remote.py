"""Domain knowledge for ``ssh`` and ``scp``: the remote command, and the options that act here.

``ssh [opts] HOST [CMD…]`` runs CMD (joined with spaces, as ssh does) on the remote host; it is
judged like a local command. ssh's options are getopt short options (bundles such as
``-vo 'ProxyCommand=…'`` and ``-4p 2222`` included). Some act on *this* host: ``-I``/
``PKCS11Provider``/``SecurityKeyProvider`` load a library, ``ProxyCommand``/``LocalCommand``/
``KnownHostsCommand`` run a program, ``-F`` reads a config that can do either, ``-E`` writes a
log, ``-L``/``-R``/``-D``/``-M`` open listeners or control sockets, ``SendEnv``/``SetEnv`` send
environment variables out. Must not run anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    is_harmless_sink,
    mut,
    ro,
    unk,
    worst,
    write_target_verdict,
)
from devops_agent.safety.commands.options import Spec, parse

SSH = Spec(short="+1246ab:c:e:fgi:kl:m:no:p:qstvxyACD:E:F:GI:J:KL:MNO:P:Q:R:S:TVw:W:XYB:")
_EXEC_KEYS = frozenset(
    {
        "proxycommand",
        "localcommand",
        "knownhostscommand",
        "pkcs11provider",
        "securitykeyprovider",
        "include",
        "match",
    }
)
_LEAK_KEYS = frozenset({"sendenv", "setenv", "forwardagent", "permitlocalcommand"})
_LISTEN_KEYS = frozenset(
    {
        "localforward",
        "remoteforward",
        "dynamicforward",
        "tunnel",
        "tunneldevice",
        "controlmaster",
        "controlpath",
        "controlpersist",
        "gatewayports",
    }
)
_WRITE_KEYS = frozenset({"userknownhostsfile", "updatehostkeys", "addkeystoagent"})
_OFF = ("no", "false", "off", "0", "none", "")


def _option(setting: str) -> Verdict | None:
    key, _, value = setting.replace("=", " ", 1).partition(" ")
    k = key.strip().lower()
    v = value.strip()
    if k in _EXEC_KEYS:
        return unk(f"ssh -o {key}: runs a program or loads a library on this host", "ssh")
    if k in _LEAK_KEYS and v.lower() not in _OFF:
        return unk(f"ssh -o {key}: hands local environment or credentials to the remote host", "exfiltration")
    if k in _LISTEN_KEYS and v.lower() not in _OFF:
        return mut(f"ssh -o {key}: opens a forwarded port or a control socket", "net.listen")
    if k in _WRITE_KEYS:
        if k == "userknownhostsfile" and all(is_harmless_sink(p) for p in v.split()):
            return None
        if k in ("updatehostkeys", "addkeystoagent") and v.lower() in _OFF:
            return None
        return mut(f"ssh -o {key}={v}: writes host keys or agent state", "files.write")
    if k == "remotecommand":
        return unk("ssh -o RemoteCommand: a remote command hidden in an option", "ssh")
    return None


def ssh(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``ssh [opts] HOST [CMD…]``: the remote command is classified; options acting here are judged."""
    parsed = parse(argv[1:], SSH)
    if parsed.unknown:
        return unk(f"ssh {parsed.unknown[0]}: an option this classifier does not know", "ssh")
    vs: list[Verdict] = []
    if parsed.has("-I"):
        vs.append(unk("ssh -I: loads a PKCS#11 library of the caller's choice", "ssh"))
    for cfg in parsed.values("-F"):
        if not is_harmless_sink(cfg):
            vs.append(
                unk(f"ssh -F {cfg}: a config file can run programs (ProxyCommand, LocalCommand)", "ssh")
            )
    for log in parsed.values("-E"):
        vs.append(write_target_verdict(log, "ssh -E", "files.write"))
    if parsed.has("-L", "-R", "-D", "-W", "-w", "-M"):
        vs.append(mut("ssh -L/-R/-D/-W/-M: opens forwarded ports or a control socket", "net.listen"))
    for ctl in parsed.values("-O"):
        if ctl not in ("check",):
            vs.append(mut(f"ssh -O {ctl}: controls a running master connection", "net.listen"))
    for setting in parsed.values("-o"):
        if (v := _option(setting)) is not None:
            vs.append(v)
    if parsed.has("-V", "-G", "-Q"):
        return worst(
            [ro("ssh -V/-G/-Q: prints version, configuration or capabilities", "readonly"), *vs]
        ) or ro("ssh", "readonly")
    rest = parsed.operands
    if not rest:
        vs.append(unk("ssh without a host", "ssh"))
    elif len(rest) == 1:
        if not parsed.has("-N"):
            vs.append(unk(f"ssh {rest[0]}: interactive remote shell", "shell.interactive"))
    else:
        v = recurse(" ".join(str(a) for a in rest[1:]))
        vs.append(Verdict(v.level, f"ssh {rest[0]} → {v.reason}", v.key))
    return worst(vs) or ro("ssh -N: holds a connection open", "readonly")


SCP = Spec(short="+346ABCOpqRrsTvc:D:F:i:J:l:o:P:S:X:")


def scp(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``scp``: copies files (mutating); ``-S PROGRAM``, ``-F`` and ssh ``-o`` commands run programs."""
    parsed = parse(argv[1:], SCP)
    vs: list[Verdict] = []
    if parsed.has("-S"):
        vs.append(unk("scp -S: runs a program of the caller's choice instead of ssh", "ssh"))
    if parsed.values("-F"):
        vs.append(unk("scp -F: a config file can run programs", "ssh"))
    vs.extend(v for s in parsed.values("-o") if (v := _option(s)) is not None)
    target = parsed.operands[-1] if parsed.operands else ""
    if target and ":" not in target:
        vs.append(write_target_verdict(target, "scp", "files.write"))
    else:
        vs.append(mut("scp: copies files to a remote host", "files.write"))
    return worst(vs) or vs[0]
