"""The certifier's openings and coverage records on ``fichas.puerta``, each at most once per mark.

Before a record is sent, its mark is inserted into ``revision_escrituras`` (``insert ... on
conflict do nothing``); only the writer whose insert went in sends it. A mark names what the
record does and the record it replaces on the topic (``marca``): two replicas, a restart whose
reader has not caught up, or a click racing the certifier all compute the same mark from the
same view of the gate, and one record is written. A failed send deletes its mark, so the next
round decides again; a mark left unsent by a crash is deleted after ``ABANDONO_S``.
Invariants: the mark is committed before the send (never a record without its mark); a record
is only sent by the writer that inserted its mark. The online bound's closures do not use it
(``revision.certificador.vigilancia`` says why). Why: docs/revision.md, "Un solo certificador".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from esquemas.estado_puerta import EstadoPuerta
from migraciones import Database

log = logging.getLogger(__name__)

ABANDONO_S = 120.0  # an unsent mark older than this was left by a crash: decide again

SQL_MARCAR = (
    "insert into revision_escrituras (marca, puerta, estado, creada, enviada) "
    "values ($1, $2, $3, $4, 0) on conflict (marca) do nothing"
)
SQL_ENVIADA = "update revision_escrituras set enviada = 1 where marca = $1"
SQL_OLVIDAR = "delete from revision_escrituras where marca = $1 and enviada = 0"
SQL_ABANDONADAS = "delete from revision_escrituras where enviada = 0 and creada < $1"

Escritor = Callable[[EstadoPuerta], Awaitable[Any]]


def marca(accion: str, puerta_id: str, base: str, reemplaza: EstadoPuerta | None) -> str:
    """The mark of a write: ``accion|gate id|base|actualizada_en of the record it replaces``.

    ``base`` is what the record rests on (a sequence's restart point, a pooled certification,
    a certification the online bound overturned).
    """
    previo = "-" if reemplaza is None else reemplaza.actualizada_en.isoformat()
    return f"{accion}|{puerta_id}|{base}|{previo}"


class EscritorPuerta:
    """Sends a gate record once per mark: the store decides who sends it."""

    def __init__(
        self, database: Database, escribir: Escritor, clock: Callable[[], float] = time.time
    ) -> None:
        self._database = database
        self._escribir = escribir
        self._clock = clock

    async def escribir(self, id_marca: str, estado: EstadoPuerta) -> bool:
        """Send ``estado`` under the mark ``id_marca`` unless someone already did; whether sent.

        A failed send forgets the mark and raises: the caller's next round decides again.
        """
        insertada = await self._database.run(
            SQL_MARCAR, (id_marca, estado.id, estado.model_dump_json(), self._clock())
        )
        if not insertada.count:
            return False
        try:
            await self._escribir(estado)
        except BaseException:
            await self._database.run(SQL_OLVIDAR, (id_marca,))
            raise
        await self._database.run(SQL_ENVIADA, (id_marca,))
        return True

    async def limpiar(self) -> int:
        """Forget the marks a crash left unsent for ``ABANDONO_S``; how many."""
        borradas = await self._database.run(SQL_ABANDONADAS, (self._clock() - ABANDONO_S,))
        if borradas.count:
            log.warning(
                "%d gate writes left unsent by a stopped replica will be decided again",
                borradas.count,
            )
        return borradas.count
