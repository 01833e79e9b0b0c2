"""The fault suite: real Kafka, real PostgreSQL, two workers, the fake LLM, one fault each.

Every test adds a ``Resumen`` line; the lines are printed together at the end of the run
(docs/stream.md has the table as measured). A line travels as a user property of the test's
report (``RESUMEN``), so that under pytest-xdist it reaches the controller, which prints it
(``tests/conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.caos.contrato import Resumen

RESUMEN = "fault suite"


@pytest.fixture
def resumenes(request: pytest.FixtureRequest) -> Iterator[list[Resumen]]:
    """Scenarios append their summary; it is printed at the end even when a check fails."""
    found: list[Resumen] = []
    yield found
    request.node.user_properties.extend((RESUMEN, r.linea()) for r in found)
