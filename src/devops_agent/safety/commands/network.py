"""Domain knowledge for network clients: ``curl``, ``wget``, ``nc``, ``openssl``, ``http``.

A GET that prints to stdout reads; writing a file, sending data or a non-GET method changes
something. Piping a download into an interpreter is judged by the classifier's pipeline check,
not here. Must not open connections.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    flag_value,
    has_flag,
    mut,
    positionals,
    ro,
    unk,
    write_target_verdict,
)

_WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def curl(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``curl``: GET/HEAD to stdout reads; ``-o``/``-O``/upload/data/non-GET methods change things."""
    args = argv[1:]
    out = flag_value(args, "-o", "--output")
    if out is not None and out != "-":
        return write_target_verdict(out, "curl -o", "net.download")
    if has_flag(args, "-O", "--remote-name", "--remote-name-all", "-J"):
        return mut("curl -O: saves the download to a file", "net.download")
    method = (flag_value(args, "-X", "--request") or "GET").upper()
    if method in _WRITE_METHODS:
        return mut(f"curl -X {method}: sends a changing request to a remote API", "net.request")
    if has_flag(
        args,
        "-d",
        "--data",
        "--data-raw",
        "--data-binary",
        "--data-urlencode",
        "-F",
        "--form",
        "--json",
        "-T",
        "--upload-file",
    ):
        return mut("curl with a request body: POSTs or uploads data", "net.request")
    if has_flag(args, "-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii", "--libcurl"):
        return mut("curl writes cookies, headers or traces to a file", "net.download")
    return ro("curl: fetches a URL to stdout", "net.read")


def wget(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``wget`` saves to a file by default; ``-O -`` (stdout) and ``--spider`` only read."""
    args = argv[1:]
    if has_flag(args, "--post-data", "--post-file", "--method", "--body-data"):
        return mut("wget with a request body: sends data to a remote API", "net.request")
    if has_flag(args, "--spider"):
        return ro("wget --spider: checks a URL without saving", "net.read")
    out = flag_value(args, "-O", "--output-document")
    if out is None:
        short = next((a for a in args if a.startswith("-") and not a.startswith("--") and "O" in a), None)
        if short is not None and short.endswith("O-"):
            out = "-"
    if out == "-":
        return ro("wget -O -: fetches a URL to stdout", "net.read")
    if out is not None:
        return write_target_verdict(out, "wget -O", "net.download")
    return mut("wget: saves the download to a file", "net.download")


def nc(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``nc -z`` probes ports; listening or sending arbitrary data cannot be judged."""
    args = argv[1:]
    if has_flag(args, "-z"):
        return ro(f"{argv[0]} -z: probes whether a port is open", "net.read")
    if has_flag(args, "-l", "--listen"):
        return mut(f"{argv[0]} -l: opens a listening socket", "net.listen")
    return unk(f"{argv[0]}: sends arbitrary data to a remote port", "net.nc")


def openssl(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``openssl``: inspecting certificates and connecting read; generating keys or ``-out`` writes."""
    args = argv[1:]
    pos = positionals(
        args,
        (
            "-in",
            "-out",
            "-connect",
            "-servername",
            "-CAfile",
            "-inform",
            "-outform",
            "-key",
            "-pass",
            "-passin",
            "-passout",
            "-subj",
            "-days",
            "-config",
        ),
    )
    sub = pos[0] if pos else ""
    out = flag_value(args, "-out")
    if out is not None:
        return write_target_verdict(out, f"openssl {sub} -out", "net.openssl_write")
    if sub in ("genrsa", "genpkey", "ecparam", "dhparam", "gendsa", "ca", "rand") and not has_flag(
        args, "-text"
    ):
        return mut(f"openssl {sub}: generates keys or signs", "net.openssl_write")
    if sub in (
        "x509",
        "s_client",
        "verify",
        "version",
        "req",
        "crl",
        "ciphers",
        "dgst",
        "rsa",
        "pkey",
        "pkcs12",
        "asn1parse",
        "sha256",
        "md5",
        "sha1",
        "enc",
        "base64",
        "list",
        "speed",
        "ocsp",
        "s_time",
        "help",
        "errstr",
        "prime",
        "storeutl",
        "crl2pkcs7",
        "pkcs7",
    ):
        return ro(f"openssl {sub}: inspects certificates or data", "net.read")
    return unk(f"openssl {sub}: not a command this classifier knows", "net.openssl")


def httpie(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """HTTPie ``http``/``https``: GET reads; other methods or data items change things."""
    pos = positionals(argv[1:])
    if pos and pos[0].upper() in _WRITE_METHODS:
        return mut(f"{argv[0]} {pos[0].upper()}: sends a changing request", "net.request")
    if any("=" in p or ":=" in p for p in pos[1:]):
        return mut(f"{argv[0]} with data items: POSTs data", "net.request")
    if has_flag(argv[1:], "--download", "-d", "-o", "--output"):
        return mut(f"{argv[0]} --download: saves a file", "net.download")
    return ro(f"{argv[0]}: fetches a URL", "net.read")
