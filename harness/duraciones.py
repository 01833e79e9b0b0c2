"""Where the suite's time goes: a JUnit XML report (``pytest --junitxml``) summed per test file.

The README's per-file table comes from this::

    pytest -p no:cacheprovider --junitxml=report.xml
    python -m harness.duraciones report.xml            # the slowest files first
    python -m harness.duraciones before.xml report.xml  # two runs side by side
    python -m harness.duraciones modelo.xml,resto.xml   # one run in two reports (make test)

JUnit's per-test ``time`` covers the test's setup, call and teardown, so a session fixture
(the broker, the fake LLM) is counted in the first test that asks for it.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def por_archivo(report: Path) -> dict[str, tuple[int, float]]:
    """Test file -> (tests, seconds) of one run: a JUnit XML report, or several joined by
    commas (``scripts/test.sh`` writes one per pytest run)."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    cases = [
        case
        for part in str(report).split(",")
        for case in ET.parse(part).getroot().iter("testcase")
    ]
    for case in cases:
        classname = case.get("classname", "")
        archivo = _archivo(classname)
        totals[archivo][0] += 1
        totals[archivo][1] += float(case.get("time", "0") or 0)
    return {k: (int(v[0]), v[1]) for k, v in totals.items()}


def _nombre(report: Path) -> str:
    """A run's column title: its report's file name, or the names joined by ``+``."""
    return "+".join(Path(part).name for part in str(report).split(","))


def _archivo(classname: str) -> str:
    """``tests.stream.test_worker`` or ``tests.stream.test_worker.TestX`` -> the file's path."""
    parts = classname.split(".")
    while parts and not parts[-1].startswith("test_"):
        parts.pop()
    return "/".join(parts) + ".py" if parts else classname


def tabla(reports: list[Path], top: int) -> str:
    """A Markdown table of the ``top`` slowest files (by the last report), seconds per report."""
    runs = [por_archivo(r) for r in reports]
    last = runs[-1]
    files = sorted(set().union(*runs), key=lambda f: -last.get(f, (0, 0.0))[1])
    heads = " | ".join(f"s ({_nombre(r)})" for r in reports)
    lines = [f"| file | tests | {heads} |", "| --- | ---: |" + " ---: |" * len(reports)]
    for f in files[:top]:
        tests = max(run.get(f, (0, 0.0))[0] for run in runs)
        cells = " | ".join(f"{run[f][1]:.0f}" if f in run else "-" for run in runs)
        lines.append(f"| `{f}` | {tests} | {cells} |")
    totals = " | ".join(f"{sum(s for _, s in run.values()):.0f}" for run in runs)
    count = max(sum(n for n, _ in run.values()) for run in runs)
    lines.append(f"| all files | {count} | {totals} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(prog="python -m harness.duraciones", description=__doc__)
    parser.add_argument("reports", nargs="+", type=Path, help="JUnit XML files, oldest first")
    parser.add_argument("--top", type=int, default=30, help="how many files (default 30)")
    args = parser.parse_args(argv)
    print(tabla(args.reports, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
