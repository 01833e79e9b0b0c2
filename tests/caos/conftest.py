"""The fault suite: real Kafka, real PostgreSQL, two workers, the fake LLM, one fault each.

Every test adds a ``Resumen`` line; the lines are printed together at the end of the run
(docs/stream.md has the table as measured).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.caos.contrato import Resumen

_LINES: list[str] = []


@pytest.fixture
def resumenes() -> Iterator[list[Resumen]]:
    """Scenarios append their summary; it is printed at the end even when a check fails."""
    found: list[Resumen] = []
    yield found
    _LINES.extend(r.linea() for r in found)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per fault scenario."""
    if _LINES:
        terminalreporter.section("fault suite")
        for line in _LINES:
            terminalreporter.write_line(line)
