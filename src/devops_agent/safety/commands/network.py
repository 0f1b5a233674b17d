"""Domain knowledge for network clients: ``curl``, ``wget``, ``nc``, ``openssl``, ``http``.

A GET whose response goes to stdout reads; writing a file, sending a body, a changing method or
raw protocol bytes (``gopher://``, ``dict://``) changes something. ``curl`` bundles short
options with their values (``-fsSLo FILE``, ``-d@FILE``) and accepts any unique prefix of a long
option but never ``--opt=value``; ``wget`` is getopt_long (``--output-doc=x``) and runs wgetrc
commands given with ``-e``. Payloads read from files (``curl -H @FILE``, ``-K FILE``) are
``exfiltration``; destinations built at run time are judged by the walker
(:mod:`~devops_agent.safety.commands.exfil`). Must not open connections.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    has_flag,
    is_harmless_sink,
    mut,
    positionals,
    ro,
    unk,
    worst,
    write_target_verdict,
)
from devops_agent.safety.commands.exfil import KEY as EXFIL
from devops_agent.safety.commands.options import Spec, parse

_WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")

CURL = Spec(
    short="0123456aA:b:Bc:C:d:D:e:E:fF:gGhH:iIjJkK:lLm:MnNo:OpP:qQ:r:RsSt:T:u:U:vVw:x:X:y:Y:z:Z#",
    long="abstract-unix-socket= alt-svc= anyauth append|a aws-sigv4= basic cacert= capath= cert=|E "
    "cert-status cert-type= ciphers= compressed compressed-ssh config=|K connect-timeout= connect-to= "
    "continue-at=|C cookie=|b cookie-jar=|c create-dirs create-file-mode= crlf crlfile= curves= data=|d "
    "data-ascii= data-binary= data-raw= data-urlencode= delegation= digest disable|q disable-eprt "
    "disable-epsv disallow-username-in-url dns-interface= dns-ipv4-addr= dns-ipv6-addr= dns-servers= "
    "doh-cert-status doh-insecure doh-url= dump-header=|D egd-file= engine= etag-compare= etag-save= "
    "expect100-timeout= fail|f fail-early fail-with-body false-start form=|F form-escape form-string= "
    "ftp-account= ftp-alternative-to-user= ftp-create-dirs ftp-method= ftp-pasv ftp-port=|P ftp-pret "
    "ftp-skip-pasv-ip ftp-ssl-ccc ftp-ssl-ccc-mode= ftp-ssl-control get|G globoff|g "
    "happy-eyeballs-timeout-ms= haproxy-protocol haproxy-clientip= head|I header=|H help|h hostpubmd5= "
    "hostpubsha256= hsts= http0.9 http1.0|0 http1.1 http2 http2-prior-knowledge http3 http3-only "
    "ignore-content-length include|i insecure|k interface= ipv4|4 ipv6|6 json= junk-session-cookies|j "
    "keepalive-time= keepalive-cnt= key= key-type= krb= libcurl= limit-rate= list-only|l local-port= "
    "location|L location-trusted login-options= mail-auth= mail-from= mail-rcpt= mail-rcpt-allowfails "
    "manual|M max-filesize= max-redirs= max-time=|m metalink negotiate netrc|n netrc-file= "
    "netrc-optional next no-alpn no-buffer|N no-clobber no-keepalive no-npn no-progress-meter "
    "no-sessionid noproxy= ntlm ntlm-wb oauth2-bearer= output=|o output-dir= parallel|Z "
    "parallel-immediate parallel-max= parallel-max-host= pass= path-as-is pinnedpubkey= post301 post302 "
    "post303 preproxy= progress-bar|# proto= proto-default= proto-redir= proxy=|x proxy-anyauth "
    "proxy-basic proxy-cacert= proxy-capath= proxy-cert= proxy-cert-type= proxy-ciphers= "
    "proxy-crlfile= proxy-digest proxy-header= proxy-insecure proxy-key= proxy-key-type= "
    "proxy-negotiate proxy-ntlm proxy-pass= proxy-pinnedpubkey= proxy-service-name= "
    "proxy-ssl-allow-beast proxy-ssl-auto-client-cert proxy-tls13-ciphers= proxy-tlsauthtype= "
    "proxy-tlspassword= proxy-tlsuser= proxy-tlsv1 proxy-user=|U proxy1.0= proxytunnel|p pubkey= "
    "quote=|Q random-file= range=|r rate= raw referer=|e remote-header-name|J remote-name|O "
    "remote-name-all remote-time|R remove-on-error request=|X request-target= resolve= retry= "
    "retry-all-errors retry-connrefused retry-delay= retry-max-time= sasl-authzid= sasl-ir "
    "service-name= show-error|S silent|s socks4= socks4a= socks5= socks5-basic socks5-gssapi "
    "socks5-gssapi-nec socks5-gssapi-service= socks5-hostname= speed-limit=|Y speed-time=|y ssl "
    "ssl-allow-beast ssl-auto-client-cert ssl-no-revoke ssl-reqd ssl-revoke-best-effort sslv2|2 "
    "sslv3|3 stderr= styled-output suppress-connect-headers tcp-fastopen tcp-nodelay "
    "telnet-option=|t tftp-blksize= tftp-no-options time-cond=|z tls-max= tls13-ciphers= "
    "tlsauthtype= tlspassword= tlsuser= tlsv1|1 tlsv1.0 tlsv1.1 tlsv1.2 tlsv1.3 tr-encoding trace= "
    "trace-ascii= trace-time unix-socket= upload-file=|T url= url-query= use-ascii|B user=|u "
    "user-agent=|A verbose|v version|V write-out=|w xattr ca-native proxy-ca-native dump-ca-embed "
    "ech= follow ip-tos= ipfs-gateway= mptcp out-null skip-existing ssl-sessions= tls-earlydata "
    "trace-config= upload-flags= variable= vlan-priority= knownhosts= sigalgs= proxy-http2 "
    "proxy-tls13-ciphers=",
    equals=False,
)
_CURL_LONGS = frozenset(CURL.tables()[1])
_CURL_FILE_WRITES = ("cookie-jar", "dump-header", "trace", "trace-ascii", "stderr", "libcurl", "etag-save")
_CURL_CACHE_FILES = ("hsts", "alt-svc", "ssl-sessions")
_CURL_DATA = ("data", "data-ascii", "data-binary", "data-raw", "data-urlencode", "json")
_CURL_UPLOAD = ("form", "form-string", "upload-file")
_RAW_SCHEMES = (
    "gopher://",
    "gophers://",
    "dict://",
    "telnet://",
    "smtp://",
    "smtps://",
    "mqtt://",
    "rtsp://",
)


def _stdout_or_sink(path: str) -> bool:
    return path in ("-", "%") or is_harmless_sink(path)


def curl(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``curl``: GET/HEAD to stdout reads; files, bodies, changing methods and raw protocols change."""
    longs = _CURL_LONGS
    args = [
        ("--" + a[5:]) if a.startswith("--no-") and a[2:].split("=")[0] not in longs else a for a in argv[1:]
    ]
    parsed = parse(args, CURL)
    if parsed.unknown:
        return unk(f"curl {parsed.unknown[0]}: an option this classifier does not know", "net.curl")
    if any(a.startswith("--expand-") for a in argv[1:]) or parsed.has("variable"):
        return unk("curl --variable/--expand-*: fills options from files or the environment", EXFIL)
    if parsed.has("config"):
        return unk("curl -K/--config: takes further options from a file", "net.curl")
    for header in parsed.values("header", "proxy-header"):
        if header.startswith("@"):
            return unk(f"curl -H {header}: sends a file's contents as headers", EXFIL)
    vs: list[Verdict] = []
    for word, candidates in parsed.ambiguous:
        risky = set(candidates) & {
            "output",
            *_CURL_FILE_WRITES,
            *_CURL_CACHE_FILES,
            *_CURL_DATA,
            *_CURL_UPLOAD,
        }
        if risky:
            vs.append(mut(f"curl {word}: abbreviates --{sorted(risky)[0]} in some versions", "net.download"))
    for out in parsed.values("output"):
        if not _stdout_or_sink(out):
            vs.append(write_target_verdict(out, "curl -o", "net.download"))
    if parsed.has("remote-name", "remote-name-all", "remote-header-name"):
        vs.append(mut("curl -O: saves the download to a file", "net.download"))
    for name in _CURL_FILE_WRITES:
        for target in parsed.values(name):
            if not _stdout_or_sink(target):
                vs.append(write_target_verdict(target, f"curl --{name}", "net.download"))
    for name in _CURL_CACHE_FILES:
        if parsed.has(name):
            vs.append(mut(f"curl --{name}: reads and rewrites a cache file", "net.download"))
    if any("%output{" in w for w in parsed.values("write-out")):
        vs.append(mut("curl -w '%output{FILE}': writes to a file", "net.download"))
    method = (parsed.value("request") or "GET").upper()
    if method not in ("GET", "HEAD", "OPTIONS"):
        vs.append(mut(f"curl -X {method}: sends a changing request to a remote API", "net.request"))
    data = [v for n, v in parsed.opts if n in _CURL_DATA and v is not None]
    if parsed.has(*_CURL_UPLOAD, "quote", "mail-from", "mail-rcpt", "append"):
        vs.append(mut("curl with an upload, form, FTP command or mail: sends data", "net.request"))
    elif data or parsed.has(*_CURL_DATA):
        if parsed.has("get") and not parsed.has("json"):
            if any(d.startswith("@") or "@" in d.split("=", 1)[0] for d in data):
                vs.append(unk("curl -G -d @FILE: sends a file's contents in the query", EXFIL))
        else:
            vs.append(mut("curl with a request body: POSTs data", "net.request"))
    if any(q.startswith("@") or "@" in q.split("=", 1)[0] for q in parsed.values("url-query")):
        vs.append(unk("curl --url-query @FILE: sends a file's contents in the query", EXFIL))
    urls = [*parsed.operands, *parsed.values("url")]
    if any(u.lower().startswith(_RAW_SCHEMES) for u in urls):
        vs.append(
            unk(
                "curl gopher:// dict:// telnet:// smtp://: sends raw protocol bytes to a service",
                "net.request",
            )
        )
    return worst(vs) or ro("curl: fetches a URL to stdout", "net.read")


WGET = Spec(
    short="Vhbe:o:a:dqvn:i:FB:t:O:cST:w:Q:rl:kKmpA:R:D:I:X:HLU:E46xNP:Y:",
    long="version|V help|h background|b execute=|e output-file=|o append-output=|a debug|d quiet|q "
    "verbose|v no-verbose report-speed= input-file=|i force-html|F base=|B config= no-config "
    "rejected-log= tries=|t retry-connrefused retry-on-host-error retry-on-http-error= "
    "output-document=|O no-clobber no-netrc continue|c start-pos= progress= show-progress "
    "timestamping|N no-if-modified-since no-use-server-timestamps server-response|S spider "
    "timeout=|T dns-timeout= connect-timeout= read-timeout= wait=|w waitretry= random-wait "
    "no-proxy quota=|Q bind-address= limit-rate= no-dns-cache restrict-file-names= inet4-only|4 "
    "inet6-only|6 prefer-family= user= password= ask-password use-askpass= no-iri local-encoding= "
    "remote-encoding= unlink xattr no-directories force-directories|x no-host-directories "
    "protocol-directories directory-prefix=|P cut-dirs= http-user= http-password= no-cache "
    "default-page= adjust-extension|E ignore-length header= compression= max-redirect= "
    "proxy-user= proxy-password= referer= save-headers user-agent=|U no-http-keep-alive "
    "no-cookies load-cookies= save-cookies= keep-session-cookies post-data= post-file= method= "
    "body-data= body-file= content-disposition content-on-error auth-no-challenge secure-protocol= "
    "https-only no-check-certificate certificate= certificate-type= private-key= "
    "private-key-type= ca-certificate= ca-directory= crl-file= pinnedpubkey= random-file= "
    "egd-file= ciphers= no-hsts hsts-file= ftp-user= ftp-password= no-remove-listing no-glob "
    "no-passive-ftp preserve-permissions retr-symlinks ftps-implicit ftps-resume-ssl "
    "ftps-clear-data-connection ftps-fallback-to-ftp warc-file= warc-header= warc-max-size= "
    "warc-cdx warc-dedup= no-warc-compression no-warc-digests no-warc-keep-log warc-tempdir= "
    "recursive|r level=|l delete-after convert-links|k convert-file-only backup-converted|K "
    "mirror|m page-requisites|p strict-comments accept=|A reject=|R accept-regex= reject-regex= "
    "regex-type= domains=|D exclude-domains= follow-ftp follow-tags= ignore-tags= ignore-case "
    "span-hosts|H relative|L include-directories=|I trust-server-names exclude-directories=|X "
    "no-parent np backups= max-threads= metalink-over-http metalink-index= preferred-location=",
)
# wgetrc commands (``-e KEY=VALUE``) that only change how a fetch is made.
_WGETRC_HARMLESS = frozenset(
    {
        "robots", "timeout", "tries", "verbose", "quiet", "checkcertificate", "useragent", "header",
        "httpsonly", "preferfamily", "inet4only", "inet6only", "dnstimeout", "readtimeout",
        "connecttimeout", "waitretry", "wait", "maxredirect", "showprogress", "progress",
        "serverresponse", "retryconnrefused", "noproxy", "useproxy", "cache", "dnscache",
    }
)  # fmt: skip


def wget(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``wget`` saves to a file unless ``-O -`` or ``--spider``; logs, ``-e`` commands, bodies and
    recursion write or send (options matched by unique prefix, as getopt_long does)."""
    parsed = parse(argv[1:], WGET)
    if parsed.unknown:
        return unk(f"wget {parsed.unknown[0]}: an option this classifier does not know", "net.wget")
    if parsed.has("use-askpass"):
        return unk("wget --use-askpass: runs a program of the caller's choice", "net.wget")
    if parsed.has("config"):
        return unk("wget --config: takes wgetrc commands from a file", "net.wget")
    vs: list[Verdict] = []
    for command in parsed.values("execute"):
        key = command.split("=", 1)[0].strip().replace("_", "").replace("-", "").lower()
        if key == "useaskpass":
            return unk("wget -e use_askpass: runs a program of the caller's choice", "net.wget")
        if key not in _WGETRC_HARMLESS:
            vs.append(mut(f"wget -e {command}: a wgetrc command that can write or send data", "net.download"))
    if parsed.has("post-data", "post-file", "method", "body-data", "body-file"):
        vs.append(mut("wget with a request body: sends data to a remote API", "net.request"))
    for log in parsed.values("output-file", "append-output", "rejected-log", "warc-file", "save-cookies"):
        if not is_harmless_sink(log):
            vs.append(write_target_verdict(log, "wget log or cookie file", "net.download"))
    if parsed.has("background", "input-file", "recursive", "mirror", "page-requisites", "delete-after"):
        vs.append(mut("wget -b/-i/-r/-m/-p: downloads files (or writes wget-log)", "net.download"))
    outs = parsed.values("output-document")
    if not outs and not parsed.has("spider"):
        vs.append(mut("wget: saves the download to a file", "net.download"))
    for out in outs:
        if not _stdout_or_sink(out):
            vs.append(write_target_verdict(out, "wget -O", "net.download"))
    return worst(vs) or ro("wget -O - / --spider: fetches a URL without saving it", "net.read")


def nc(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``nc -z`` probes ports; listening or sending arbitrary data cannot be judged."""
    args = argv[1:]
    if has_flag(args, "-z"):
        return ro(f"{argv[0]} -z: probes whether a port is open", "net.read")
    if has_flag(args, "-l", "--listen"):
        return mut(f"{argv[0]} -l: opens a listening socket", "net.listen")
    return unk(f"{argv[0]}: sends arbitrary data to a remote port", "net.nc")


_OPENSSL_VALUED = frozenset(
    {
        "-in", "-out", "-connect", "-servername", "-CAfile", "-CApath", "-inform", "-outform", "-key",
        "-pass", "-passin", "-passout", "-subj", "-days", "-config", "-keyout", "-newkey", "-keyform",
        "-certform", "-cert", "-CA", "-CAkey", "-set_serial", "-extensions", "-extfile", "-name",
        "-sess_out", "-sess_in", "-keylogfile", "-writerand", "-rand", "-msgfile", "-reqout",
        "-respout", "-engine", "-provider", "-provider-path", "-propquery", "-signkey", "-sigopt",
        "-pkeyopt", "-algorithm", "-cipher", "-ciphersuites", "-host", "-port", "-proxy", "-starttls",
        "-verify", "-verify_return_error", "-nameopt", "-certopt", "-inkey", "-signature", "-sign",
        "-CAserial", "-url", "-issuer", "-reqin", "-respin", "-outdir", "-certsout", "-accept",
        "-md", "-iter", "-K", "-iv", "-S", "-kdf", "-digest", "-dgst", "-text_in",
    }
)  # fmt: skip
_OPENSSL_WRITES = (
    "-out",
    "-keyout",
    "-sess_out",
    "-keylogfile",
    "-writerand",
    "-msgfile",
    "-reqout",
    "-respout",
    "-outdir",
    "-certsout",
)
_OPENSSL_LOADS = ("-engine", "-provider", "-provider-path", "-ssl_client_engine")
_OPENSSL_READ = frozenset(
    {
        "x509", "s_client", "verify", "version", "req", "crl", "ciphers", "dgst", "rsa", "pkey", "ec",
        "pkcs12", "asn1parse", "sha256", "sha1", "sha512", "md5", "enc", "base64", "list", "speed",
        "ocsp", "s_time", "help", "errstr", "prime", "storeutl", "crl2pkcs7", "pkcs7", "pkcs8",
        "passwd", "pkeyparam", "pkeyutl", "cms", "smime", "ts", "kdf", "mac", "info", "sess_id",
        "nseq", "spkac", "rsautl", "dsa", "ecparam", "dhparam", "rand",
    }
)  # fmt: skip


def openssl(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``openssl``: inspecting and connecting read; ``-out``/``-keyout``/``-sess_out``… write;
    engines and providers load a library of the caller's choice."""
    args = [a[1:] if a.startswith("--") else a for a in argv[1:]]
    opts: list[tuple[str, str | None]] = []
    pos: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if a.startswith("-") and len(a) > 1:
            if name in _OPENSSL_VALUED:
                if eq:
                    opts.append((name, value))
                else:
                    opts.append((name, args[i + 1] if i + 1 < len(args) else None))
                    i += 1
            else:
                opts.append((name, None))
        else:
            pos.append(a)
        i += 1
    sub = pos[0] if pos else ""
    names = {n for n, _ in opts}
    if (
        sub == "engine"
        or names & set(_OPENSSL_LOADS)
        or any(n == "-keyform" and v == "engine" for n, v in opts)
    ):
        return unk(f"openssl {sub} -engine/-provider: loads a library of the caller's choice", "net.openssl")
    vs: list[Verdict] = []
    for n, v in opts:
        if n in _OPENSSL_WRITES and v is not None and not _stdout_or_sink(v):
            vs.append(write_target_verdict(v, f"openssl {sub} {n}", "net.openssl_write"))
    if "-CAcreateserial" in names:
        vs.append(mut(f"openssl {sub} -CAcreateserial: writes a serial number file", "net.openssl_write"))
    if vs:
        return worst(vs) or vs[0]
    if sub in ("genrsa", "genpkey", "gendsa", "ca", "srp", "rehash", "c_rehash") and "-text" not in names:
        return mut(f"openssl {sub}: generates keys, signs or changes files", "net.openssl_write")
    if sub in ("ecparam", "dhparam") and "-genkey" in names:
        return mut(f"openssl {sub} -genkey: generates keys", "net.openssl_write")
    if sub == "s_server":
        return mut("openssl s_server: opens a listening TLS server", "net.listen")
    if sub in _OPENSSL_READ:
        return ro(f"openssl {sub}: inspects certificates or data", "net.read")
    return unk(f"openssl {sub}: not a command this classifier knows", "net.openssl")


def httpie(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """HTTPie ``http``/``https``/``xh``: GET reads; other methods, data items, uploads, downloads
    and sessions change things (``name==value`` is a query parameter, ``Name:value`` a header)."""
    args = list(argv[1:])
    if has_flag(args, "--download", "-d", "-o", "--output") or any(a.startswith("--session") for a in args):
        return mut(f"{argv[0]} --download/--output/--session: writes a file", "net.download")
    pos = positionals(args)
    if pos and pos[0].upper() in _WRITE_METHODS:
        return mut(f"{argv[0]} {pos[0].upper()}: sends a changing request", "net.request")
    for item in pos[1:]:
        if "==" in item or (":" in item and "=" not in item.split(":", 1)[0] and ":=" not in item):
            if "@" in item.split("==", 1)[0].split(":", 1)[0]:
                return unk(f"{argv[0]} {item}: sends a file's contents", EXFIL)
            continue
        if "=" in item or "@" in item:
            return mut(f"{argv[0]} with data items: sends data", "net.request")
    return ro(f"{argv[0]}: fetches a URL", "net.read")
