"""What every fault scenario checks on the output topics: guarantees 1, 2, 3 and 8 of the contract.

Read from the topics themselves, not from the workers, as the contract's readers read
(``read_committed``): each outcome topic is read from the beginning, and per SKU the versions
must never go down in partition-offset order (a swap within one millisecond is caught:
timestamps play no part); each ``event_id`` must appear once (no duplicate, so no second
content); the newest version of every SKU must have an outcome; every invalid message must be
in the DLQ, once.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from harness.eventos import evento_dict
from harness.topicos import Topics, committed_offsets, end_offsets, settings_for
from infra.kafka.read import read_to_end

INVALIDOS: list[bytes] = [b"{no es json", b"\xff\xfe", json.dumps({"sku": "X"}).encode()]


def eventos(tag: str, skus: int, versions: int) -> list[dict[str, Any]]:
    """``skus`` × ``versions`` valid events, versions of a SKU in order."""
    return [
        evento_dict(f"C{tag}-{n:03d}", v, event_id=f"C{tag}-{n:03d}-v{v}")
        for v in range(1, versions + 1)
        for n in range(skus)
    ]


def mensajes(lista: list[dict[str, Any]]) -> list[tuple[bytes | None, bytes]]:
    """(key, value) pairs of valid events."""
    return [(e["sku"].encode(), json.dumps(e).encode()) for e in lista]


def invalidos(tag: str) -> list[tuple[bytes | None, bytes]]:
    """Invalid messages, each keyed so they spread over the partitions."""
    return [(f"C{tag}-inv{i}".encode(), raw) for i, raw in enumerate(INVALIDOS)]


@dataclass
class Resumen:
    """What one scenario saw on the output topics."""

    nombre: str
    eventos: int
    fallos: int
    salidas: int = 0
    duplicados: int = 0
    dlq_duplicados: int = 0
    divergentes: list[str] = field(default_factory=list)
    desordenados: list[str] = field(default_factory=list)
    perdidos: list[str] = field(default_factory=list)
    dlq_faltan: int = 0
    segundos: float = 0.0

    def linea(self) -> str:
        """The one-line summary the suite prints."""
        return (
            f"{self.nombre}: events={self.eventos} faults={self.fallos} outcomes={self.salidas} "
            f"duplicates={self.duplicados} dlq_duplicates={self.dlq_duplicados} "
            f"divergent={len(self.divergentes)} "
            f"out_of_order={len(self.desordenados)} lost={len(self.perdidos)} "
            f"dlq_missing={self.dlq_faltan} seconds={self.segundos:.0f}"
        )

    def comprobar(self) -> None:
        """Guarantees 1, 2, 3 and 8 hold, exactly once for a read_committed reader."""
        assert not self.divergentes, f"event_ids with two contents: {self.divergentes[:5]}"
        assert self.duplicados == 0, f"{self.duplicados} outcomes seen twice"
        assert self.dlq_duplicados == 0, f"{self.dlq_duplicados} DLQ records seen twice"
        assert not self.desordenados, f"older version after a newer one: {self.desordenados[:5]}"
        assert not self.perdidos, f"newest versions without an outcome: {self.perdidos[:5]}"
        assert self.dlq_faltan == 0, f"{self.dlq_faltan} invalid messages missing from the DLQ"


async def leer(bootstrap: str, topics: Topics, committed_only: bool = True) -> dict[str, list[Any]]:
    """Every record of the outcome topics and the DLQ, per topic, in partition-offset order.

    As the contract's readers read (``read_committed``), or with aborted records too.
    """
    names = [topics.publicadas, topics.revision, topics.dlq]
    records, _ = await read_to_end(
        settings_for(bootstrap), names, timeout_s=60, committed_only=committed_only
    )
    por_topic: dict[str, list[Any]] = {name: [] for name in names}
    for record in sorted(records, key=lambda r: (r.topic, r.partition, r.offset)):
        por_topic[record.topic].append(record)
    return por_topic


def revisar(
    nombre: str,
    por_topic: dict[str, list[Any]],
    topics: Topics,
    validos: list[dict[str, Any]],
    n_invalidos: int,
    fallos: int,
) -> Resumen:
    """Count outcomes, duplicates, divergent contents, order violations, losses, DLQ misses."""
    resumen = Resumen(nombre, len(validos) + n_invalidos, fallos)
    # Per topic: an event the loop sent to review may also be published once by a person's
    # decision (the worker writes it from fichas.decisiones), so "once" is once per topic.
    contenidos: dict[tuple[str, str], set[bytes]] = defaultdict(set)
    salidas = 0
    for topic in (topics.publicadas, topics.revision):
        ultima: dict[str, int] = {}
        for record in por_topic[topic]:
            valor = json.loads(record.value)
            salidas += 1
            contenidos[(topic, valor["event_id"])].add(record.value)
            sku, version = valor["sku"], valor["version"]
            if version < ultima.get(sku, 0):
                resumen.desordenados.append(f"{topic} {sku} v{version} after v{ultima[sku]}")
            ultima[sku] = max(version, ultima.get(sku, 0))
    resumen.salidas = salidas
    resumen.duplicados = salidas - len(contenidos)
    resumen.divergentes = sorted(f"{t} {e}" for (t, e), c in contenidos.items() if len(c) > 1)
    con_salida = {e for _, e in contenidos}
    newest: dict[str, dict[str, Any]] = {}
    for evento in validos:
        if evento["version"] >= newest.get(evento["sku"], {"version": 0})["version"]:
            newest[evento["sku"]] = evento
    resumen.perdidos = sorted(
        e["event_id"] for e in newest.values() if e["event_id"] not in con_salida
    )
    dlq_origenes = [
        (json.loads(r.value)["origen"]["particion"], json.loads(r.value)["origen"]["offset"])
        for r in por_topic[topics.dlq]
    ]
    dlq_offsets = set(dlq_origenes)
    resumen.dlq_duplicados = len(dlq_origenes) - len(dlq_offsets)
    resumen.dlq_faltan = max(0, n_invalidos - len(dlq_offsets))
    return resumen


async def esperar_completo(
    bootstrap: str,
    topics: Topics,
    validos: list[dict[str, Any]],
    n_invalidos: int,
    timeout: float,
    explicar: Any = lambda: "",
) -> None:
    """Until the newest version of every SKU has an outcome and every invalid message is in
    the DLQ (or the timeout: the caller's checks then say what is missing)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        por_topic = await leer(bootstrap, topics)
        resumen = revisar("", por_topic, topics, validos, n_invalidos, 0)
        if not resumen.perdidos and resumen.dlq_faltan == 0:
            return
        await asyncio.sleep(1.0)
    print(explicar())


async def esperar_decisiones(bootstrap: str, topics: Topics, timeout: float) -> None:
    """Until the group has committed every partition of ``fichas.decisiones`` to its end: the
    workers have ended every decision (published, closed as obsolete, or in the DLQ)."""
    fin = await end_offsets(bootstrap, topics.decisiones)
    grupo = topics.env()["FICHAS_GRUPO"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        hechos = await committed_offsets(bootstrap, grupo, topics.decisiones)
        if all(hechos.get(p) == f for p, f in fin.items() if f > 0):
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"decisions not all committed in {timeout} s: {fin} vs {hechos}")
