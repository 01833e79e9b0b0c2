"""``infra.tasks.await_chain``: where a suspended task waits, coroutine by coroutine."""

from __future__ import annotations

import asyncio

from infra.tasks import await_chain


async def _inner(event: asyncio.Event) -> None:
    await event.wait()


async def _middle(event: asyncio.Event) -> None:
    await _inner(event)


async def test_the_chain_names_each_coroutine_down_to_the_future() -> None:
    event = asyncio.Event()
    task = asyncio.create_task(_middle(event))
    await asyncio.sleep(0)
    pasos = await_chain(task).split(" -> ")
    assert pasos[0].startswith("_middle (test_tasks.py:")
    assert pasos[1].startswith("_inner (test_tasks.py:")
    assert pasos[2].startswith("wait (locks.py:")  # asyncio.Event.wait, in the standard library
    assert pasos[-1] == "awaits Future"
    event.set()
    await task
    assert await_chain(task) == ""  # a task that ended waits nowhere


async def test_a_chain_deeper_than_the_limit_is_cut() -> None:
    event = asyncio.Event()

    async def hondo(n: int) -> None:
        if n:
            await hondo(n - 1)
        else:
            await event.wait()

    task = asyncio.create_task(hondo(40))
    await asyncio.sleep(0)
    pasos = await_chain(task).split(" -> ")
    assert len(pasos) == 25 and pasos[-1] == "..."
    event.set()
    await task
