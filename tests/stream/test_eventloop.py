"""``stream.eventloop.run``: the commands' coroutine runs to its result on uvloop."""

from __future__ import annotations

import asyncio

import pytest

from stream import eventloop


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
