"""infra.logs: library noise re-levelled, and only the noise."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from infra import logs


@pytest.fixture
def salida() -> Iterator[io.StringIO]:
    """The root logger configured at INFO onto a buffer, put back afterwards."""
    root = logging.getLogger()
    antes = (list(root.handlers), root.level)
    buffer = io.StringIO()
    logs.configure("INFO", stream=buffer, json_lines=True)
    yield buffer
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in antes[0]:
        root.addHandler(handler)
    root.setLevel(antes[1])


def _ssl_fatal(cerrado: bool) -> None:
    """What asyncio logs when uvloop's SSL protocol fails to write (its exact shape)."""
    try:
        raise RuntimeError("unable to perform operation on <TCPTransport>; the handler is closed")
    except RuntimeError:
        logging.getLogger("asyncio").error(
            "Fatal error on SSL protocol\nprotocol: <uvloop.loop.SSLProtocol object at 0x7f>\n"
            "transport: <TCPTransport closed=%s reading=False 0x55>",
            "True" if cerrado else "False",
            exc_info=True,
        )


def test_un_error_ssl_sobre_un_transporte_ya_cerrado_no_es_un_error(salida: io.StringIO) -> None:
    _ssl_fatal(cerrado=True)
    assert salida.getvalue() == ""


def test_un_error_ssl_sobre_un_transporte_abierto_sigue_siendo_error(salida: io.StringIO) -> None:
    _ssl_fatal(cerrado=False)
    (linea,) = salida.getvalue().splitlines()
    registro = json.loads(linea)
    assert registro["level"] == "ERROR" and "Traceback" in registro["exc_info"]


def test_una_conexion_de_aiokafka_sin_cerrar_es_un_aviso(salida: io.StringIO) -> None:
    """What asyncio's exception handler logs when aiokafka collects a connection left open
    (a client whose start failed on a refused ACL): a WARNING, not a second ERROR line."""
    logging.getLogger("asyncio").error(
        "Unclosed AIOKafkaConnection\nconn: <AIOKafkaConnection host=127.0.0.1 port=9092>"
    )
    (linea,) = salida.getvalue().splitlines()
    assert json.loads(linea)["level"] == "WARNING"
