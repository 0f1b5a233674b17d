"""Language interpreters (``python``, ``perl``, ``ruby``, ``node`` …): code, not commands.

Inline code (``-c``, ``-e``), scripts and stdin programs cannot be judged. ``python -m MODULE``
is code execution too: the module is looked up on ``sys.path``, whose first entry is the current
directory, so ``python3 -m json.tool`` runs ``./json/tool.py`` when one exists (argparse-style
options may be bundled: ``-Im``, ``-Ec``). Only version and help queries read. Must not run
anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, ro, unk

_VERSION = frozenset({"--version", "-V", "-VV", "--help", "-h", "-v", "-?", "--usage", "-version", "--info"})
# python's own flags that take no value (a bundle of them may end in c or m, which take one)
_PY_FLAGS = set("bBdEhiIOPqsSuvVx")


def interpreter(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``python``/``perl``/``ruby``/``node``…: only ``--version``/``--help`` are read-only."""
    name = argv[0]
    args = list(argv[1:])
    if not args or args == ["-"]:
        return unk(f"{name}: reads a program from stdin", "shell.stdin")
    if args[0] in _VERSION and len(args) == 1:
        return ro(f"{name} {args[0]}: prints its version or usage", "readonly")
    if name.startswith("python"):
        for a in args:
            if a.startswith("-") and not a.startswith("--") and len(a) > 1:
                letters = a[1:]
                for k, ch in enumerate(letters):
                    if ch == "m":
                        module = letters[k + 1 :] or "MODULE"
                        why = "runs a module found on sys.path (the current directory first)"
                        return unk(f"{name} -m {module}: {why}", "interpreter")
                    if ch == "c":
                        return unk(f"{name} -c: runs inline code", "interpreter")
                    if ch not in _PY_FLAGS:
                        break
                continue
            break
    return unk(f"{name}: runs code this classifier cannot see", "interpreter")
