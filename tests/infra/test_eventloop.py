"""``infra.eventloop.run``: the commands' coroutine runs to its result on uvloop."""

from __future__ import annotations

import asyncio

import pytest

from infra import eventloop


async def _main(value: int) -> tuple[int, str]:
    await asyncio.sleep(0)
    return value * 2, eventloop.loop_name()


async def _fails() -> None:
    await asyncio.sleep(0)
    raise LookupError("boom")


def test_run_returns_the_result_on_uvloop() -> None:
    assert eventloop.run(_main(21)) == (42, "uvloop")


def test_run_propagates_the_exception() -> None:
    with pytest.raises(LookupError, match="boom"):
        eventloop.run(_fails())


def test_freeze_startup_heap_hides_start_up_from_the_collector() -> None:
    """In a fresh interpreter (freezing is for the worker's own process): what exists at the
    call is frozen, a cycle made after it is still collected, the young threshold is raised."""
    import json
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import gc, json
        from infra import eventloop
        antes = gc.get_freeze_count()
        eventloop.freeze_startup_heap()
        congelados = gc.get_freeze_count()
        ciclo = []
        ciclo.append(ciclo)
        del ciclo
        print(json.dumps({"antes": antes, "congelados": congelados,
                          "recogidos": gc.collect(), "umbral": gc.get_threshold()[0]}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    medida = json.loads(out.stdout.splitlines()[-1])
    assert medida["antes"] == 0 and medida["congelados"] > 1000
    assert medida["recogidos"] >= 1  # the collector still sees what the worker makes later
    assert medida["umbral"] == eventloop.GC_UMBRAL_JOVEN
