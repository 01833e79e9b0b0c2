"""stream.serving.main: a SIGTERM ends the process even when its loop or a close is stuck."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from typing import Any, cast

import pytest

from stream.flow.worker import Worker
from stream.serving.main import EXIT_FORCED, close_within, run_until_stopped


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
    with caplog.at_level(logging.ERROR, logger="stream.serving.main"):
        await asyncio.wait_for(run_until_stopped(cast(Worker, doble), 0.2), 5)
    assert doble.cancelado
    assert "did not stop within" in caplog.text


async def test_una_parada_normal_no_cancela_nada(caplog: pytest.LogCaptureFixture) -> None:
    doble = _Doble(atascado=False)
    asyncio.get_running_loop().call_later(0.05, doble.stop)
    with caplog.at_level(logging.ERROR, logger="stream.serving.main"):
        await asyncio.wait_for(run_until_stopped(cast(Worker, doble), 5), 5)
    assert not doble.cancelado
    assert "did not stop" not in caplog.text


async def test_un_error_del_bucle_se_propaga() -> None:
    class _Roto(_Doble):
        async def run(self) -> None:
            raise RuntimeError("roto")

    with pytest.raises(RuntimeError, match="roto"):
        await run_until_stopped(cast(Any, _Roto(atascado=False)), 1)


async def test_cerrar_salta_lo_que_se_cuelga_y_cierra_lo_demas(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cerrados: list[str] = []

    async def colgado() -> None:
        await asyncio.Event().wait()

    async def roto() -> None:
        raise RuntimeError("socket cerrado")

    async def bien() -> None:
        cerrados.append("health")

    with caplog.at_level(logging.WARNING, logger="stream.serving.main"):
        await asyncio.wait_for(
            close_within(
                [
                    ("the producers", colgado),
                    ("the admin client", roto),
                    ("the health server", bien),
                ],
                0.3,
            ),
            5,
        )
    assert cerrados == ["health"]
    assert "the producers did not close within" in caplog.text
    assert "the admin client failed to close: socket cerrado" in caplog.text
    colgados = [r for r in caplog.records if "did not close" in r.getMessage()]
    assert [r.levelno for r in colgados] == [logging.ERROR]


async def test_tras_un_error_fatal_lo_colgado_es_aviso(caplog: pytest.LogCaptureFixture) -> None:
    """After a fatal error, a part that hangs on close is a WARNING: the fatal line is the one."""

    async def colgado() -> None:
        await asyncio.Event().wait()

    with caplog.at_level(logging.WARNING, logger="stream.serving.main"):
        await close_within([("the consumer", colgado)], 0.2, hung_level=logging.WARNING)
    colgados = [r for r in caplog.records if "did not close" in r.getMessage()]
    assert [r.levelno for r in colgados] == [logging.WARNING]


def test_un_proceso_atascado_sale_por_la_fuerza() -> None:
    """The forced exit fires from its own thread while the event loop is blocked."""
    codigo = (
        "import logging, time\n"
        "logging.basicConfig()\n"
        "from stream.serving.main import arm_forced_exit\n"
        "arm_forced_exit(0.3)\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", codigo], capture_output=True, text=True, timeout=20, check=False
    )
    assert proc.returncode == EXIT_FORCED
    assert "exiting by force" in proc.stderr
