"""The sample's verdicts in publication order: per certification, the prefix all decided.

The closing tests (``revision.certificador.vigilancia``) must see what people said of a gate's
publications in the order the fichas were published, not in the order people decided them: a
reviewer who decides the easy ones first must not change what the tests see. The app numbers the
sample's items as it stores them (``revision_muestras.orden``, its arrival order of
``fichas.muestra_revision``); per certification, its items in that order are consumed only up
to the first one still undecided, which blocks the verdicts decided after it until it is
decided (``Prefijo``). A ficha published without a gate belongs to no certification; an item
closed without a verdict (``obsoleta`` before v1.6) is passed over. Invariants: each item is
consumed once per certification, in order; the store is read after the last number read, and the
blocked items are asked for again by id. Why: docs/revision.md, "La puerta que se cierra sola".
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import ValidationError

from esquemas.constantes import DECISION_CORRECTA, DECISION_INCORRECTA, FAMILIA_TODAS
from esquemas.estado_puerta import PuertaAplicada
from migraciones import Database

log = logging.getLogger(__name__)

LOTE = 1000  # sample rows read per query
GRUPO_IDS = 200  # blocked items asked for per query

ABIERTA = "abierta"  # the item's state while nobody decided it (``revision.almacen.cola``)


class ColumnasMuestra(NamedTuple):
    """A row of ``SQL_TRAS``, by name."""

    orden: int
    event_id: str
    estado: str
    decision: str | None
    datos: str  # the published record, JSON
    recibido_en: float


SQL_TRAS = (
    "select m.orden, i.event_id, i.estado, d.decision, i.datos, i.recibido_en "
    "from revision_muestras m join revision_items i on i.event_id = m.event_id "
    "left join revision_decisiones d on d.event_id = m.event_id "
    "where m.orden > $1 order by m.orden limit $2"
)
_SQL_ESTADOS = (
    "select i.event_id, i.estado, d.decision from revision_items i "
    "left join revision_decisiones d on d.event_id = i.event_id where i.event_id in ({})"
)


def certificacion_de(publicada: Mapping[str, Any]) -> PuertaAplicada | None:
    """The certification a published ficha went through: the sequence its verdict belongs to.

    None for a ficha published without a gate (a person's approval, ``FICHAS_PUERTA=veredicto``,
    a record older than v1.2).
    """
    datos = publicada.get("puerta")
    if not isinstance(datos, dict):
        return None
    try:
        return PuertaAplicada.model_validate(datos)
    except ValidationError:
        log.warning("unreadable gate on sample record %s", publicada.get("event_id"))
        return None


def conjunta_de(cert: PuertaAplicada) -> PuertaAplicada | None:
    """The pooled certification a covered family's publication also measures; None for a
    gate certified on its own data. Its n and k are not on the ficha (0 here): a closure
    copies them from the pooled gate's open record."""
    if cert.conjunta_certificada_en is None or cert.familia == FAMILIA_TODAS:
        return None
    return cert.model_copy(
        update={
            "familia": FAMILIA_TODAS,
            "certificada_en": cert.conjunta_certificada_en,
            "conjunta_certificada_en": None,
            "n": 0,
            "k": 0,
        }
    )


@dataclass(frozen=True)
class FilaMuestra:
    """One sample item as the closing tests read it.

    ``orden``: the app's arrival order of the sample; ``veredicto``: True ``correcta``, False
    ``incorrecta``, None no verdict; ``abierta``: nobody decided it yet; ``certificaciones``: the
    certification it was published under and, for a covered family, the pooled one (empty: no
    gate); ``recibido_en``: when the app stored it.
    """

    orden: int
    event_id: str
    familia: str
    veredicto: bool | None
    abierta: bool
    certificaciones: tuple[PuertaAplicada, ...]
    recibido_en: float = 0.0


def fila_de(
    orden: int,
    event_id: str,
    estado: str,
    decision: str | None,
    publicada: Mapping[str, Any],
    recibido_en: float = 0.0,
) -> FilaMuestra:
    """A sample item from its stored columns and published record."""
    cert = certificacion_de(publicada)
    certs = () if cert is None else tuple(c for c in (cert, conjunta_de(cert)) if c is not None)
    return FilaMuestra(
        orden=orden,
        event_id=event_id,
        familia=str(publicada.get("familia")),
        veredicto=veredicto_de(decision),
        abierta=estado == ABIERTA,
        certificaciones=certs,
        recibido_en=recibido_en,
    )


def veredicto_de(decision: str | None) -> bool | None:
    """``correcta`` True, ``incorrecta`` False, anything else (or nothing) None."""
    if decision == DECISION_CORRECTA:
        return True
    if decision == DECISION_INCORRECTA:
        return False
    return None


@dataclass
class Espera:
    """An item of a blocked prefix: its number, id, the family it was published in, arrival
    time, and its verdict once seen (``abierta`` while nobody decided it)."""

    orden: int
    event_id: str
    familia: str
    recibido_en: float
    abierta: bool
    veredicto: bool | None


@dataclass
class Prefijo:
    """One certification's items in publication order, consumed up to the first undecided.

    ``posicion``: the last number consumed; ``espera``: the items after it, the first of them
    undecided (empty: nothing blocks). ``llega`` and ``decidida`` return the verdicts they
    release, in order, for the caller to feed to the closing tests.
    """

    posicion: int = -1
    espera: deque[Espera] = field(default_factory=deque)

    def llega(self, fila: FilaMuestra) -> list[bool]:
        """An item of this certification read for the first time, after every earlier one
        (an item at or before the last one seen is ignored: it was seen already)."""
        ultimo = self.espera[-1].orden if self.espera else self.posicion
        if fila.orden <= ultimo:
            return []
        self.espera.append(
            Espera(
                fila.orden,
                fila.event_id,
                fila.familia,
                fila.recibido_en,
                fila.abierta,
                fila.veredicto,
            )
        )
        return self._soltar()

    def decidida(self, event_id: str, veredicto: bool | None) -> list[bool]:
        """A waiting item was decided: the verdicts that are no longer blocked."""
        for espera in self.espera:
            if espera.event_id == event_id and espera.abierta:
                espera.abierta, espera.veredicto = False, veredicto
        return self._soltar()

    def _soltar(self) -> list[bool]:
        """Consume the decided items at the head of the wait."""
        soltados: list[bool] = []
        while self.espera and not self.espera[0].abierta:
            item = self.espera.popleft()
            self.posicion = item.orden
            if item.veredicto is not None:
                soltados.append(item.veredicto)
        return soltados

    @property
    def bloqueo(self) -> Espera | None:
        """The first undecided item, which holds back every later verdict (None: none)."""
        return self.espera[0] if self.espera else None

    @property
    def pendientes(self) -> int:
        """Items of this certification still undecided."""
        return sum(1 for e in self.espera if e.abierta)

    @property
    def retenidos(self) -> int:
        """Verdicts already taken that wait behind the first undecided item."""
        return sum(1 for e in self.espera if not e.abierta and e.veredicto is not None)

    def abiertas(self) -> list[str]:
        """The ids of the waiting items nobody decided yet."""
        return [e.event_id for e in self.espera if e.abierta]


class AlmacenMuestra:
    """The closing tests' reads of the sample: new items by number, waiting items by id."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def tras(self, orden: int, limite: int = LOTE) -> list[FilaMuestra]:
        """The sample's items numbered after ``orden``, in order, at most ``limite``."""
        filas = []
        for row in (await self._database.run(SQL_TRAS, (orden, limite))).rows:
            c = ColumnasMuestra._make(row)
            decision = None if c.decision is None else str(c.decision)
            orden, event_id, estado = int(c.orden), str(c.event_id), str(c.estado)
            filas.append(
                fila_de(orden, event_id, estado, decision, json.loads(c.datos), c.recibido_en)
            )
        return filas

    async def estados(self, ids: Sequence[str]) -> dict[str, tuple[bool, bool | None]]:
        """Per id: (still undecided, its verdict); ids the store does not know are left out."""
        resultado: dict[str, tuple[bool, bool | None]] = {}
        for i in range(0, len(ids), GRUPO_IDS):
            grupo = list(ids[i : i + GRUPO_IDS])
            marcas = ", ".join(f"${j + 1}" for j in range(len(grupo)))
            rows = (await self._database.run(_SQL_ESTADOS.format(marcas), grupo)).rows
            for event_id, estado, decision in rows:
                resultado[str(event_id)] = (
                    str(estado) == ABIERTA,
                    veredicto_de(None if decision is None else str(decision)),
                )
        return resultado
