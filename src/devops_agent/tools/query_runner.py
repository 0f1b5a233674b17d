"""The process that answers one ``query_result`` question, inside the query sandbox.

Started by :mod:`devops_agent.tools.sandbox_query` as ``python -I -B query_runner.py`` under
bubblewrap. Before it reads anything it limits itself — address space, CPU seconds, file size 0
(no file can be written), open files, core dumps — and, on Linux, installs a seccomp filter that
refuses ``execve``/``execveat`` (bubblewrap's own filter, set before this process started,
already refuses ``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD`` and ``clone3``). Then it
reads one JSON request on stdin — ``{"mode": "jq"|"grep"|"python", "query": …, "data": TEXT,
"max_chars": N, …}`` — and writes one JSON answer on stdout: ``{"ok": true, "result": …,
"truncated": bool}`` or ``{"ok": false, "error": …}``.

The data is the kept tool result: parsed as JSON when it is JSON, else the list of its lines.
This module imports only the standard library (and ``jq`` for jq filters): it runs with ``-I``
and must not import the rest of the agent.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import io
import json
import os
import platform
import re
import resource
import struct
import sys
from typing import Any

# -- seccomp (classic BPF) ---------------------------------------------------------------------

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# Per architecture: syscall numbers of the process-spawning calls and of open_by_handle_at.
_SYSCALLS = {
    "x86_64": {"fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "execve": 59, "execveat": 322,
               "open_by_handle_at": 304},
    "aarch64": {"clone": 220, "clone3": 435, "execve": 221, "execveat": 281, "open_by_handle_at": 265},
}  # fmt: skip
CLONE_THREAD = 0x00010000
_LD, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06
_ALLOW, _ERRNO, _KILL = 0x7FFF0000, 0x00050000, 0x80000000


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def filter_program(deny_exec: bool, machine: str | None = None) -> bytes:
    """A seccomp program: ``fork``/``vfork``/``clone3`` and ``clone`` without ``CLONE_THREAD`` fail
    (EPERM; ENOSYS for ``clone3`` so the C library falls back to ``clone``), as does
    ``open_by_handle_at``; with ``deny_exec`` ``execve``/``execveat`` fail too. A foreign
    architecture is killed (no second syscall table to slip through)."""
    arch = machine or platform.machine()
    if arch not in _AUDIT_ARCH:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {arch}")
    nr = _SYSCALLS[arch]
    deny = [nr[n] for n in ("fork", "vfork", "open_by_handle_at") if n in nr]
    if deny_exec:
        deny += [nr["execve"], nr["execveat"]]
    prog = [_insn(_LD, 4), _insn(_JEQ, _AUDIT_ARCH[arch], 1, 0), _insn(_RET, _KILL), _insn(_LD, 0)]
    if arch == "x86_64":  # the x32 ABI: a second number space for the same calls
        prog.append(_insn(0x35, 0x40000000, 0, 1))  # jge
        prog.append(_insn(_RET, _ERRNO | errno.EPERM))
    for number in deny:
        prog += [_insn(_JEQ, number, 0, 1), _insn(_RET, _ERRNO | errno.EPERM)]
    prog += [_insn(_JEQ, nr["clone3"], 0, 1), _insn(_RET, _ERRNO | errno.ENOSYS)]
    # clone: allowed only for a thread (flags are the first argument, low word at offset 16).
    prog += [_insn(_JEQ, nr["clone"], 0, 3), _insn(_LD, 16), _insn(_JSET, CLONE_THREAD, 1, 0)]
    prog += [_insn(_RET, _ERRNO | errno.EPERM), _insn(_RET, _ALLOW)]
    return b"".join(prog)


def _install(program: bytes) -> None:
    """Load ``program`` into this process (no_new_privs first, as an unprivileged filter needs)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    buf = ctypes.create_string_buffer(program)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


# -- limits ------------------------------------------------------------------------------------


def confine(memory_bytes: int, cpu_s: int) -> None:
    """Lower this process's limits and refuse new programs; raises when it cannot."""
    limits = {
        resource.RLIMIT_AS: memory_bytes,
        resource.RLIMIT_CPU: cpu_s,
        resource.RLIMIT_FSIZE: 0,
        resource.RLIMIT_NOFILE: 64,
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_NPROC: 1,
    }
    for which, value in limits.items():
        resource.setrlimit(which, (value, value))
    if sys.platform.startswith("linux"):
        _install(filter_program(deny_exec=True))


# -- the questions -----------------------------------------------------------------------------


def _data(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text.splitlines()


def run_jq(query: str, text: str) -> list[Any]:
    import jq

    return list(jq.compile(query).input_value(_data(text)).all())


def run_grep(pattern: str, text: str, ignore_case: bool, context: int, max_matches: int) -> dict[str, Any]:
    rx = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    lines = text.splitlines()
    hits: list[dict[str, Any]] = []
    total = 0
    for i, line in enumerate(lines):
        if rx.search(line):
            total += 1
            if len(hits) < max_matches:
                lo, hi = max(0, i - context), min(len(lines), i + context + 1)
                entry: dict[str, Any] = {"line": i + 1, "text": line}
                if context:
                    entry["context"] = lines[lo:hi]
                hits.append(entry)
    return {"matches": total, "shown": len(hits), "lines_searched": len(lines), "hits": hits}


def run_python(code: str, text: str) -> dict[str, Any]:
    out = io.StringIO()
    scope: dict[str, Any] = {
        "text": text,
        "lines": text.splitlines(),
        "data": _data(text),
        "json": json,
        "re": re,
    }
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<query>", "exec"), scope)  # noqa: S102 - confined: see module docstring
    answer: dict[str, Any] = {"printed": out.getvalue()}
    if "result" in scope:
        answer["result"] = scope["result"]
    return answer


def answer(request: dict[str, Any]) -> dict[str, Any]:
    mode, query, text = request["mode"], request["query"], request["data"]
    if mode == "jq":
        return {"result": run_jq(query, text)}
    if mode == "grep":
        return {
            "result": run_grep(
                query,
                text,
                bool(request.get("ignore_case")),
                int(request.get("context", 0)),
                int(request.get("max_matches", 200)),
            )
        }
    if mode == "python":
        return {"result": run_python(query, text)}
    raise ValueError(f"unknown mode {mode!r}")


def main() -> None:
    memory = int(os.environ.get("QUERY_MEMORY_BYTES", 512 * 1024 * 1024))
    cpu = int(os.environ.get("QUERY_CPU_S", 5))
    try:
        confine(memory, cpu)
    except (OSError, ValueError) as exc:
        sys.stdout.write(json.dumps({"ok": False, "error": f"the sandbox could not be set up: {exc}"}))
        return
    request = json.loads(sys.stdin.read())
    cap = int(request.get("max_chars", 20_000))
    try:
        reply = answer(request)
    except MemoryError:
        reply = {"ok": False, "error": "the query ran out of memory"}
    except Exception as exc:  # the question's own failure, reported to the asker
        reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
    else:
        reply["ok"] = True
    text = json.dumps(reply, default=str, ensure_ascii=False)
    if len(text) > cap:
        reply = {"ok": True, "truncated": True, "result": text[:cap]}
        text = json.dumps(reply, ensure_ascii=False)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
