"""Name-word filters and the pattern path's names: persons and organisations without a model.

Shared by the default pattern path (:func:`cue_names`, called by the anonymizer) and the optional
NER path (:mod:`.ner`, which uses :func:`name_lines`, :func:`plausible`, :func:`extend_name` and
:func:`person_named` around its model):

* *name words* (:func:`is_name_word`): a capitalised word (``Alice``, ``Bárány``, ``O'Brien``) that
  is not camelCase or ALL-CAPS, not glued to code punctuation (``dfs.DataNode``, ``key=Value``)
  and not a known log or tech word (``TECH_WORDS``: months, levels, ``Accepted``, ``Bearer``,
  ``Mozilla``, ``Server``, ``Hadoop`` …);
* persons after a cue (a title, ``my name is``, a ``Name:`` line) or made of a known first name
  (``data/first_names.txt``, 1990 US Census lists) and a surname; organisations by a legal-form
  suffix or an employment cue.

Pure functions over strings, no model and no I/O beyond reading the packaged first-name list once.
This module must not import from ``cli/`` or ``agent/`` and must not log the values it finds.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Iterator

from devops_agent.privacy.recognizers import PRIORITY as PATTERN_PRIORITY
from devops_agent.privacy.recognizers import Candidate
from devops_agent.secrets.scrubber import LineIndex, index_keywords


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Capitalised words that are log vocabulary, not names. Lower-case; matched case-insensitively.
TECH_WORDS = _words(
    """jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july
    august september october november december mon tue tues wed thu thur thurs fri sat sun monday
    tuesday wednesday thursday friday saturday sunday today yesterday tomorrow utc gmt cet cest pst
    pdt est edt am pm
    info information warn warning error errors err debug trace fatal notice critical crit alert emerg
    emergency severe fine finer finest verbose success successful ok okay fail failed failing failure
    exception caused traceback stack true false null none nil yes no not unknown invalid illegal
    get post put delete patch head options connect accept accepted authorization authentication
    authenticated auth bearer basic digest token cookie content type length agent user users mozilla
    chrome safari firefox gecko webkit applewebkit khtml like windows win64 linux macintosh mac os
    android iphone ubuntu debian centos fedora redhat rhel alpine unix posix gnu
    received receiving receive starting started start stopping stopped stop creating created create
    deleting deleted updating updated update loading loaded load using used found could cannot
    unable connecting connected connection disconnected disconnect closing closed close opening
    opened open reading read writing wrote write sending sent send retrying retry retries waiting
    wait running run completed complete finished finish done processing processed initializing
    initialized initialization init registered registering register shutting shutdown listening
    binding bound removing removed adding added setting set skipping skipped scheduling scheduled
    launching launched killing killed exiting exited exit caught got new old checking check
    verifying verified assigned assigning allocated releasing released requested request response
    responding reply resolved resolving trying try attempt attempting timeout timed expired expiring
    restarting restarted reset reboot booting boot mounted mounting unmounted saving saved storing
    stored commit committed merged merge pushed pull pulled building built deploy deployed
    deploying rolling rollback scaling scaled health healthy unhealthy ready pending progress
    succeeded passed skipped aborted cancelled canceled rejected denied allowed permitted forbidden
    unauthorized refused dropped lost missing exists exist available unavailable enabled disabled
    enable disable active inactive idle busy full empty total count size limit max min maximum minimum
    average avg mean current last next first previous final end begin the a an of for to from in on at
    by with and or but if then else when while this that these those it its is are was were be been
    has have had will would should can may might must do does did all any each every some other
    server servers client clients service services node nodes manager handler master slave worker
    workers job jobs task tasks container containers pod pods cluster namespace deployment volume
    disk memory cpu network socket session request thread threads process kernel system module driver
    device interface port address queue cache database table index block blocks file files directory
    path config configuration mode state status event events message messages level log logs logger
    record records entry entries key value values data id name host hostname instance image build
    version release branch tag source target input output packet packets frame buffer pool heap gc
    time date clock timer second seconds minute minutes hour hours day days week ms sec min
    application app apps api http https tcp udp ip dns ssh ssl tls ftp smtp imap pop rpc grpc rest
    json xml yaml html url uri sql proxy gateway router switch firewall load balancer endpoint
    storage bucket object objects class method function call callback thread main default local
    remote public private internal external global root admin administrator guest system
    daemon cron sshd systemd kernel security policy role permission group account password
    certificate cert ca key keys signature hash checksum block datanode namenode
    apache hadoop hdfs yarn mapreduce spark kafka zookeeper hbase hive flink storm nginx tomcat jetty
    java jvm python ruby perl php golang go rust node npm docker kubernetes kubelet helm terraform
    ansible puppet chef jenkins github gitlab bitbucket git jira confluence slack teams google
    microsoft amazon aws azure gcp oracle mysql postgres postgresql sqlite redis mongo mongodb
    elasticsearch elastic kibana logstash grafana prometheus alertmanager openstack nova neutron
    keystone glance cinder swift horizon heat ceph rabbitmq celery airflow vault consul nomad
    istio envoy traefik haproxy varnish memcached cassandra couchdb mariadb mssql sqlserver intel
    amd nvidia cuda arm ibm dell hp cisco juniper vmware xen kvm qemu bios uefi raid lvm ext4 xfs
    ntp dhcp ldap kerberos saml oauth openid sso pam sudo su cloud
    already after before recalculating reduce transitioned reader writer shuffle processor route
    diagnostics responder number executing kind emitting instantiated logging extract web upper
    lower putting resource priority num ramping we you they there here sleeping slow recovery
    history served verification software hardware transport plug play enabling probing couldn't
    can't won't don't didn't isn't normal detected console calibrating capability subsystem
    interpreter support transparent flags bringing cryptographic hot core scanning real allocator
    communicator escalated escalate escalating acknowledged reassigned triaged paged bye mount
    inode temperature mask register"""
)
# Titles are no names: what the model tags "Dr." in "Dr. Nora Quist" is left readable.
HONORIFICS = _words("mr mrs ms mx dr prof miss sir dame mme mlle herr frau")

_CODE_CHARS = frozenset('0123456789/\\=_@:<>[]{}|#$%*+;"()~^`')
# A capital (Latin, Greek, Cyrillic) then a lower-case letter (``O'B…`` too), not glued to code
# punctuation on either side (``dfs.DataNode``, ``key=Value``, ``Foo(``); ALL-CAPS words fail at
# the second letter. The look-behind comes after the capital so that it is tried only at capitals
# (four times faster than leading with it). ``is_name_word`` then checks the word itself.
_UP = "A-ZÀ-ÖØ-ÞĀ-ɏΆ-ΫЀ-Я"
_LOW = "a-zß-öø-ÿĀ-ɏά-ώа-џ"
_CAP_WORD_RX = re.compile(
    rf"[{_UP}](?<![\w./\\@$%=:<#&*+-].)(?:['’][{_UP}])?[{_LOW}][^\W\d_]*(?:['’-][^\W\d_]+)*"
    r"(?![\w/\\@=(<>-]|[.:]\w)"
)
_INITIAL_RX = re.compile(rf"[{_UP}]\.?[ ](?=[{_UP}])")
_PART_SPLIT_RX = re.compile(r"['’-]")


def is_name_word(word: str) -> bool:
    """A capitalised word that may be (part of) a name: ``Alice``, ``O'Brien``, ``McDonald``, ``Jean-Luc``.

    Each part between apostrophes and hyphens is ``Titlecase`` or lower-case, so ``DataNode``,
    ``SELinux`` and ``ALERTs`` (code, acronyms) are not names; ``Mc``/``Mac`` may precede a capital.
    """
    low = word.lower()
    if not word[:1].isupper() or low in TECH_WORDS or low in HONORIFICS:
        return False
    if word.startswith("Mc") or (word.startswith("Mac") and word[3:4].isupper()):
        word = word[2:] if word.startswith("Mc") else word[3:]
    return all(part[1:].islower() or not part[1:] for part in _PART_SPLIT_RX.split(word) if part)


def cap_words(line: str) -> list[tuple[int, int]]:
    """Spans of the capitalised, non-technical words in ``line`` (what the prefilter looks for)."""
    return [m.span() for m in _CAP_WORD_RX.finditer(line) if is_name_word(m.group())]


def name_lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of ``text`` that holds a name-like word.

    Logs repeat a small vocabulary (``Mar``, ``Accepted``, ``Mozilla``): every capitalised word is
    collected in one C-level ``findall`` and each distinct one is judged once; a text without a
    name-like word (most logs) is done after that, and otherwise the scan tests set membership.
    """
    names = {w for w in set(_CAP_WORD_RX.findall(text)) if is_name_word(w)}
    if not names:
        return
    search = _CAP_WORD_RX.search
    m = search(text)
    while m is not None:
        if m.group() in names:
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            end = len(text) if end < 0 else end
            yield start, end
            m = search(text, end + 1)
        else:
            m = search(text, m.end())


def extend_name(line: str, end: int, most: int = 2) -> int:
    """Extend a PERSON span over name-like words right after it: the small model often stops at
    the first name when an address follows (``Author: Jane Doe <jane@…>`` gives ``Jane``), or
    at a middle initial (``Owen T Marsh``, ``Ilona K. Varró``: the initial is taken only with the
    name after it)."""
    for _ in range(most):
        if line[end : end + 1] != " " or line[end - 2 : end] in ("'s", "’s"):
            break
        start = end + 1
        initial = _INITIAL_RX.match(line, start)
        if initial is not None:
            start = initial.end()
        m = _CAP_WORD_RX.match(line, start)
        if m is None or not is_name_word(m.group()):
            break
        end = m.end()
    return end


def plausible(span: str) -> bool:
    """The postfilter: a name-like word, no code characters, no ALL-CAPS word (``INFO Node``)."""
    if any(ch in _CODE_CHARS for ch in span) or "\n" in span:
        return False
    words = span.replace(",", " ").split()
    if not any(is_name_word(w.strip(".'’-")) for w in words if w.strip(".'’-")):
        return False
    return not any(len(w.strip(".")) > 1 and w.isupper() for w in words)


# Names that need no model: after a title (``Dr. Nora Quist``, ``Mrs Ann Lee``), after
# ``my name is``, or as the value of a ``Name:`` line in a form or signature. Each candidate word
# must pass :func:`is_name_word` (``Name: Kubernetes Dashboard`` is no person).
_NAME = rf"[{_UP}](?:['’][{_UP}])?[{_LOW}][^\W\d_]*(?:['’-][^\W\d_]+)*"
_NAMES = rf"({_NAME}(?:[ ](?:[{_UP}]\.?[ ])?{_NAME}){{0,2}})(?![\w@/-]|\.\w)"
# The honorific is masked too (``TITLE``): it tells gender or profession.
_TITLE_RX = re.compile(r"\b(?:Mr|Mrs|Ms|Mx|Dr|Prof|Miss|Sir|Dame|Mme|Mlle)\.?[ ]" + _NAMES)
_CUE_RXS = (
    _TITLE_RX,
    re.compile(
        r"(?i:\b(?:my|his|her|their|your)[ ](?:full[ ]|first[ ]|last[ ]|sur)?name[ ](?:is|was)[ ])" + _NAMES
    ),
    re.compile(r"(?m:^[ \t]*(?:Full[ ])?Name[ \t]*:[ \t]*)" + _NAMES + r"[ \t]*$"),
)
# Gate words for the scan (case-sensitive where capitalised); " Ms" not "Ms": "212ms" is common.
_CUE_WORDS = (
    "Mr",
    " Ms",
    "Ms.",
    " Mx",
    "Dr",
    "Prof",
    " Miss",
    "Sir ",
    "Dame ",
    "Mme",
    "Mlle",
    "name",
    "calls me",
)
index_keywords(_CUE_WORDS)
# After a naming cue a name may be written in lower case (``my name is tamsin``, ``her maiden name
# is lindqvist``, ``everyone calls me tamsin oduya``): up to three lower-case words, cut at the
# first log or function word (``my name is not important`` names no one).
_LOWER_CUE_RX = re.compile(
    r"(?i:\b(?:my|his|her|their|your)[ ](?:full[ ]|first[ ]|last[ ]|maiden[ ]|sur)?name[ ](?:is|was)[ ]"
    r"|\b(?:everyone|everybody|people|they|friends)[ ]call[s]?[ ]me[ ])"
    rf"((?-i:[{_LOW}][{_LOW}'’-]+(?:[ ](?:[{_LOW}]\.?[ ])?[{_LOW}][{_LOW}'’-]+){{0,2}}))(?![\w@/-]|\.\w)"
)


# Organisations that need no model: capitalised words ending in a legal-form suffix
# (``Brightline Corp.``, ``Northgate Freight Inc``, ``Smith & Sons``), or after ``I work for`` / ``employed
# by``. One word at least must pass :func:`is_name_word`, so a vendor in a log (``Intel
# Corporation``, ``Oracle Corp``: TECH_WORDS) stays readable.
_ORG_WORD = rf"(?:{_NAME}|[{_UP}]\w*|\d{{1,4}})"
_ORG_SUFFIX = (
    r"(?:Inc\.?|Incorporated|Corp\.?|Corporation|LLC|L\.L\.C\.|Ltd\.?|Limited|GmbH|PLC|plc|LLP|"
    r"S\.A\.|S\.p\.A\.|B\.V\.|N\.V\.|Pty[ ]Ltd\.?|(?:&|and)[ ](?:Sons|Co\.?))"
)
_ORG_SUFFIX_RX = re.compile(rf"(?<![\w.@/&-])((?:{_ORG_WORD},?[ ]){{1,4}}){_ORG_SUFFIX}(?![\w@/-]|\.\w)")
_ORG_CUE_RX = re.compile(
    r"(?i:\b(?:i|we|she|he|they)[ ](?:work(?:s|ed)?|am[ ]working|is[ ]working)[ ](?:for|at)[ ]"
    r"|\bemployed[ ]by[ ]|\bemployer[ ](?:is|was)[ ])"
    + rf"({_ORG_WORD}(?:[ ]{_ORG_WORD}){{0,3}})(?![\w@/-]|\.\w)"
)
_ORG_WORDS = (" Inc", "Incorporated", "Corp", "LLC", "L.L.C.", "Ltd", "Limited", "GmbH", " PLC", " plc",
              "LLP", " Sons", " Co", "S.A.", "S.p.A.", "B.V.", "N.V.", "work for", "work at", "works ",
              "worked ", "working ", "employ")  # fmt: skip
index_keywords(_ORG_WORDS)


def cue_orgs(text: str, index: LineIndex) -> list[Candidate]:
    """``ORG`` spans named by a legal-form suffix or an employment cue (default pattern path)."""
    out: list[Candidate] = []
    for lo, hi in index.ranges(_ORG_WORDS):
        for m in _ORG_SUFFIX_RX.finditer(text, lo, hi):
            words = m.group(1).replace(",", " ").split()
            if any(is_name_word(w) for w in words):
                start = m.start() + 4 if words[0] == "The" and len(words) > 1 else m.start()
                out.append(Candidate("ORG", start, m.end(), PATTERN_PRIORITY["ORG"]))
        for m in _ORG_CUE_RX.finditer(text, lo, hi):
            if any(is_name_word(w) for w in m.group(1).split()):
                out.append(Candidate("ORG", *m.span(1), PATTERN_PRIORITY["ORG"]))
    return out


# Names that need no model, second kind: a common first name (``data/first_names.txt``, from the
# US Census 1990 lists) followed by a capitalised surname, with an optional middle initial
# (``Ilona K. Varró``) and a second surname word when the first is itself a first name (``Mary Ann
# Lee``). Both words must pass :func:`is_name_word`, so a day, month or log word never completes a
# name (``Sun Dec``, ``Mark Complete``). The scan looks only at a capitalised word of three letters
# or more followed by a space and a capital: one cheap regex pass, then set lookups.
_FIRST_RX = re.compile(r"[A-Z][a-z]{2,}[ ](?=[A-Z])")
_SURNAME_RX = re.compile(rf"(?:[{_UP}]\.?[ ])?({_NAME})(?:[ ]({_NAME}))?(?![\w@/-]|\.\w)")
_GLUE = frozenset("./\\@$%=:<#&*+-_")
_ORG_SUFFIX_WORDS = _words("Inc Incorporated Corp Corporation Ltd Limited Group Company")


@functools.cache
def first_names() -> frozenset[str]:
    """The first names the pattern path recognizes (loaded once, from the package's data)."""
    data = importlib.resources.files("devops_agent.privacy") / "data" / "first_names.txt"
    text = data.read_text("utf-8")
    return frozenset(w for w in text.split("\n") if w and not w.startswith("#"))


def first_name_persons(text: str) -> list[Candidate]:
    """``PERSON`` spans made of a known first name and a surname (default pattern path)."""
    names = first_names()
    out: list[Candidate] = []
    for m in _FIRST_RX.finditer(text):
        start = m.start()
        if m.group()[:-1] not in names or (start and (text[start - 1].isalnum() or text[start - 1] in _GLUE)):
            continue
        sur = _SURNAME_RX.match(text, m.end())
        if sur is None or not is_name_word(sur.group(1)):
            continue
        if sur.group(1).rstrip(".") in _ORG_SUFFIX_WORDS:
            continue  # ``Gloria Inc`` is a company (see cue_orgs)
        end = sur.end(1)
        if sur.group(2) and sur.group(1) in names and is_name_word(sur.group(2)):
            end = sur.end(2)
        if text[end - 2 : end] in ("'s", "’s"):
            end -= 2  # ``Colin Baird's notes`` names ``Colin Baird``
        out.append(Candidate("PERSON", start, end, PATTERN_PRIORITY["PERSON"]))
    return out


def cue_names(text: str, index: LineIndex | None = None) -> list[Candidate]:
    """``PERSON`` spans that a cue or a known first name (:func:`first_name_persons`) names, and
    ``ORG`` spans that a suffix or an employment cue names (:func:`cue_orgs`), without the model
    (part of the default pattern path)."""
    index = index or LineIndex(text)
    out: list[Candidate] = cue_orgs(text, index) + first_name_persons(text)
    for lo, hi in index.ranges(_CUE_WORDS):
        m = _LOWER_CUE_RX.search(text, lo, hi)
        while m is not None:
            words = m.group(1).split()
            keep = 0
            for w in words:  # up to the first log or function word
                if w.lower() in TECH_WORDS or len(w) < 2:
                    break
                keep += 1
            end = m.start(1) + len(" ".join(words[:keep]))
            if keep:
                out.append(Candidate("PERSON", m.start(1), end, PATTERN_PRIORITY["PERSON"]))
            # go on after the name kept: a second cue may follow the words cut off
            m = _LOWER_CUE_RX.search(text, max(end, m.start(1) + 1), hi)
        for rx in _CUE_RXS:
            for m in rx.finditer(text, lo, hi):
                words = m.group(1).split()
                if all(is_name_word(w) or (len(w) <= 2 and w[0].isupper()) for w in words) and is_name_word(
                    words[-1]
                ):
                    out.append(Candidate("PERSON", *m.span(1), PATTERN_PRIORITY["PERSON"]))
                    if rx is _TITLE_RX:
                        out.append(Candidate("TITLE", m.start(), m.start(1) - 1, PATTERN_PRIORITY["TITLE"]))
    return out


def person_named(span: str) -> bool:
    """Whether a model ``ORG`` span reads as a person: a known first name and at most two more
    name-like words, none a company word (``Ruth Pike``, not ``Gloria Inc``)."""
    words = span.split()
    return (
        len(words) <= 3
        and words[0] in first_names()
        and all(is_name_word(w) or len(w) <= 2 for w in words)
        and not any(w.strip(".,") in _ORG_SUFFIX_WORDS for w in words)
    )
