"""``python -m bench.transacciones`` on the session's broker: two emits of each kind.

Its own check holds (else it exits 1): every record it timed is visible to a read_committed
reader and the group's committed offset is past every offset handled, so the timings are of
transactions that committed; the check is shown to see topics nobody wrote. Its milliseconds
are reported, never asserted.
"""

from __future__ import annotations

import re
import uuid

import pytest

from bench.transacciones import comprobar
from harness.kafka_broker import KafkaBroker
from tests.bench.conftest import ejecutar, salida

LINEA = re.compile(r"^(\w+): n=(\d+) p50=([\d.]+) ms p95=([\d.]+) ms$")


@pytest.mark.kafka
def test_transacciones_cronometra_las_tres_formas_y_todas_confirman(kafka: KafkaBroker) -> None:
    texto = salida(
        ejecutar("bench.transacciones", "--n", "2", "--bloque", "1", "--bootstrap", kafka.bootstrap)
    )
    lineas = [LINEA.match(x) for x in texto.splitlines()]
    assert all(lineas), texto
    medidas = {m.group(1): m.groups()[1:] for m in lineas if m}
    assert list(medidas) == ["sin_offset", "con_offset", "solo_offset"]
    for n, p50, p95 in medidas.values():
        assert n == "2" and 0 < float(p50) <= float(p95), texto


@pytest.mark.kafka
async def test_el_chequeo_ve_lo_que_no_se_confirmo(kafka: KafkaBroker) -> None:
    # topics nobody wrote: the records and the offsets a run of one emit per kind would leave
    prefix = f"bench-vacio-{uuid.uuid4().hex[:8]}"
    for nombre in ("entrada", "salida"):
        await kafka.create_topic_async(f"{prefix}.{nombre}", 1)
    una = {"sin_offset": [1.0], "con_offset": [1.0], "solo_offset": [1.0]}
    fallo = await comprobar(kafka.bootstrap, prefix, una)
    assert fallo == "0 records committed of 3 sent; committed offset None, expected 4"
