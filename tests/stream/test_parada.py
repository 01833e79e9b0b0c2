"""stream.serving.run_until_stopped: a SIGTERM ends the process even when the poll loop is stuck."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

import pytest

from stream.serving import run_until_stopped
from stream.worker import Worker


class _Doble:
    """A worker whose loop either ends when asked (``atascado=False``) or never returns."""

    def __init__(self, atascado: bool) -> None:
        self.atascado = atascado
        self._parar = asyncio.Event()
        self.cancelado = False

    def stop(self) -> None:
        self._parar.set()

    async def stop_requested(self) -> None:
        await self._parar.wait()

    async def run(self) -> None:
        if not self.atascado:
            await self._parar.wait()
            return
        try:
            await asyncio.Event().wait()  # an await that never returns
        except asyncio.CancelledError:
            self.cancelado = True
            raise


async def test_una_parada_atascada_se_cancela_tras_el_limite(
    caplog: pytest.LogCaptureFixture,
) -> None:
    doble = _Doble(atascado=True)
    asyncio.get_running_loop().call_later(0.05, doble.stop)
    with caplog.at_level(logging.ERROR, logger="stream.serving"):
        await asyncio.wait_for(run_until_stopped(cast(Worker, doble), 0.2), 5)
    assert doble.cancelado
    assert "did not stop within" in caplog.text


async def test_una_parada_normal_no_cancela_nada(caplog: pytest.LogCaptureFixture) -> None:
    doble = _Doble(atascado=False)
    asyncio.get_running_loop().call_later(0.05, doble.stop)
    with caplog.at_level(logging.ERROR, logger="stream.serving"):
        await asyncio.wait_for(run_until_stopped(cast(Worker, doble), 5), 5)
    assert not doble.cancelado
    assert "did not stop" not in caplog.text


async def test_un_error_del_bucle_se_propaga() -> None:
    class _Roto(_Doble):
        async def run(self) -> None:
            raise RuntimeError("roto")

    with pytest.raises(RuntimeError, match="roto"):
        await run_until_stopped(cast(Any, _Roto(atascado=False)), 1)
