"""A seccomp filter for the read-only sandbox: ``open_by_handle_at`` fails with EPERM.

When the agent runs as root, confined commands keep ``CAP_DAC_READ_SEARCH`` (read any file, list
any directory: ``du -sh /var/*`` must see ``/var/lib/postgresql``, ``grep`` must read
``/var/log/syslog`` owned by ``syslog:adm``). That capability also allows ``open_by_handle_at``,
which opens a file by its inode handle on any mount of its filesystem, past the mounts that hide
the agent's data dir and keys. This filter removes that one system call (and the x32 ABI, which
nothing on an ops host uses and which would otherwise be a second door to it).

The program is classic BPF, assembled here (a dozen instructions; no libseccomp needed) and given
to ``bwrap --seccomp FD``. This module must not import anything of the agent's.
"""

from __future__ import annotations

import errno
import os
import struct

# <linux/filter.h>, <linux/seccomp.h>, <linux/audit.h>
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_OFFSET_NR, _OFFSET_ARCH = 0, 4
_X32_BIT = 0x40000000

# open_by_handle_at per architecture (audit arch → syscall number).
_ARCHES = {
    0xC000003E: 304,  # x86_64
    0x40000003: 342,  # i386 (32-bit programs on an x86_64 kernel)
    0xC00000B7: 265,  # aarch64
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program() -> bytes:
    """The filter as the bytes ``bwrap --seccomp`` reads (an array of ``struct sock_filter``).

    Layout: load the arch; one ``jeq`` per known arch jumps to its block; an unknown arch is
    allowed (the kernel only runs the native ones). Each block loads the syscall number and
    returns EPERM for ``open_by_handle_at`` (and on x86_64 for any x32 call).
    """
    arches = list(_ARCHES.items())
    blocks: list[list[tuple[int, int, str | None]]] = []
    for arch, nr in arches:
        block: list[tuple[int, int, str | None]] = [(_LD_W_ABS, _OFFSET_NR, None)]
        if arch == 0xC000003E:
            block.append((_JGE_K, _X32_BIT, "deny"))
        block += [(_JEQ_K, nr, "deny"), (_RET_K, _RET_ALLOW, None)]
        blocks.append(block)
    head = 1 + len(arches) + 1  # load arch, the jeqs, allow for an unknown arch
    starts, at = [], head
    for block in blocks:
        starts.append(at)
        at += len(block)
    deny_at = at
    out = [_insn(_LD_W_ABS, _OFFSET_ARCH)]
    for i, (arch, _nr) in enumerate(arches):
        here = 1 + i
        out.append(_insn(_JEQ_K, arch, jt=starts[i] - here - 1))
    out.append(_insn(_RET_K, _RET_ALLOW))
    for start, block in zip(starts, blocks, strict=True):
        for j, (code, k, target) in enumerate(block):
            here = start + j
            out.append(_insn(code, k, jt=deny_at - here - 1) if target else _insn(code, k))
    out.append(_insn(_RET_K, _RET_ERRNO | errno.EPERM))
    return b"".join(out)


_PROGRAM = program()


def filter_fd(program: bytes | None = None) -> int:
    """A fresh file descriptor holding the filter (``program``, else the shell's) at offset 0, for
    one ``bwrap --seccomp`` run.

    Each run needs its own: bwrap reads the descriptor to its end. It is close-on-exec, so only
    the process it is passed to (``pass_fds``) inherits it; the caller closes it once that started.
    """
    fd = os.memfd_create("devops-agent-seccomp")
    try:
        os.write(fd, _PROGRAM if program is None else program)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
