"""How many of a gate's countable shadow-mode items closed obsolete before anyone decided them.

A ficha is countable when it could be an approval at some λ of the opener's grid (code checks
passed, a score at or above the grid's most lenient λ: ``revision.certificador.secuencias.cuenta``).
An item closes either decided by a person or obsolete: a newer version of its SKU superseded it
while it was open (or it arrived after one). The obsolete rate per family and key, of the
countable items closed, is what the Puertas page and ``/metrics`` show
(``fichas_revision_sombra_cerradas``, ``fichas_revision_obsoletas_proporcion``): reviewers who
leave the hard fichas undecided until a newer version supersedes them raise it, and since issue
47 such a ficha counts against its gate (docs/puerta.md), so a high rate is labels lost, not
labels dodged. Counted over the whole store (every restart of the gate's sequence), with one
indexed aggregate; ``*`` is the key's families together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from esquemas.constantes import FAMILIA_TODAS
from migraciones import Database

# Per (key, family): countable shadow-mode items closed obsolete, and decided.
SQL_CERRADAS = (
    "select e.clave_id, e.familia, "
    "coalesce(sum(case when i.estado = $1 then 1 else 0 end), 0), "
    "coalesce(sum(case when i.estado = $2 then 1 else 0 end), 0) "
    "from revision_evidencias e join revision_items i on i.event_id = e.event_id "
    "where e.sombra = 1 and e.codigo_ok = 1 and e.puntuacion >= $3 "
    "group by e.clave_id, e.familia"
)
OBSOLETA = "obsoleta"  # revision.almacen.cola's item states
DECIDIDA = "decidida"


@dataclass(frozen=True)
class Cerradas:
    """A gate's countable shadow-mode items closed so far, by how they closed."""

    familia: str  # a family, or ``*``
    clave_id: str
    obsoletas: int
    decididas: int

    @property
    def total(self) -> int:
        """Every countable item closed."""
        return self.obsoletas + self.decididas

    @property
    def proporcion(self) -> float | None:
        """Share closed obsolete; None before any closed."""
        return self.obsoletas / self.total if self.total else None


def sumar(cuentas: Mapping[tuple[str, str], Cerradas]) -> dict[tuple[str, str], Cerradas]:
    """The families' counts, plus one ``*`` per key adding its families together. Pure."""
    resultado = dict(cuentas)
    conjuntas: dict[str, tuple[int, int]] = {}
    for c in cuentas.values():
        o, d = conjuntas.get(c.clave_id, (0, 0))
        conjuntas[c.clave_id] = (o + c.obsoletas, d + c.decididas)
    for clave_id, (o, d) in conjuntas.items():
        resultado[(FAMILIA_TODAS, clave_id)] = Cerradas(FAMILIA_TODAS, clave_id, o, d)
    return resultado


async def cerradas(database: Database, minimo: float) -> dict[tuple[str, str], Cerradas]:
    """(family or ``*``, key id) -> its countable shadow-mode items closed, obsolete or
    decided; ``minimo`` is the grid's most lenient λ (what makes a ficha countable)."""
    rows = (await database.run(SQL_CERRADAS, (OBSOLETA, DECIDIDA, minimo))).rows
    por_familia = {
        (str(f), str(c)): Cerradas(str(f), str(c), int(o), int(d)) for c, f, o, d in rows
    }
    return sumar(por_familia)


def por_puerta(cuentas: Mapping[tuple[str, str], Cerradas]) -> dict[str, Cerradas]:
    """The same counts keyed by gate id (``<familia or *>|<key id>``), as the Puertas page
    names its blocks."""
    return {f"{familia}|{clave_id}": c for (familia, clave_id), c in cuentas.items()}


__all__ = ["Cerradas", "cerradas", "por_puerta", "sumar"]
