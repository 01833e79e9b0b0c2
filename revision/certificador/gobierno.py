"""Which gate governs each family under a key, and why, in words a catalogue editor reads (pure).

The Puertas page and ``/metrics`` show it per family: its own gate, the pooled gate through a
covered record (with the family's own evidence at the pooled λ), or none, and the reason:
held, closed by what people said of its publications (the online bound or the change
detector), excluded by its own evidence, not yet certified at the pooled λ by its own evidence,
outside the automatic scope, no pooled gate. It combines what the workers apply now
(``puerta.resolucion.resolver``) with what the certifier decides next
(``puerta.cobertura.cobertura`` on the family's stored sequence state). Invariants: the
``puerta`` shown is exactly what the resolution gives a worker (never "conjunta" unless a
covered record governs); the reason codes are the ``reason`` label of
``fichas_revision_familia_gobierno`` (docs/metricas.md). Why: docs/puerta.md, "Which gate
governs a family", and docs/revision.md, "Qué puerta rige cada familia".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from esquemas.constantes import (
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_CAMBIO,
    MOTIVO_PUERTA_EXCLUIDA,
    MOTIVOS_VIGILANCIA,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from puerta.alcance import Alcance
from puerta.cobertura import Cobertura, cobertura
from puerta.resolucion import Resolucion, resolver
from puerta.secuencial import EstadoSecuencia
from revision.certificador.secuencias import Secuencia

PuertaQueRige = Literal["propia", "conjunta", "ninguna"]
RazonGobierno = Literal[
    "propia",
    "conjunta",
    "retenida",
    "conjunta_retenida",
    "cubierta_pendiente",
    "cerrada_por_vigilancia",
    "excluida",
    "sin_certificar",
    "fuera_de_alcance",
    "sin_conjunta",
    "conjunta_cerrada",
    "umbral_fuera_de_rejilla",
    "cerrada",
    "sin_evidencia",
]
_DE_COBERTURA: dict[str, RazonGobierno] = {
    "cubierta": "cubierta_pendiente",
    "excluida": "excluida",
    "sin_certificar": "sin_certificar",
    "cerrada_por_vigilancia": "cerrada_por_vigilancia",
    "fuera_de_alcance": "fuera_de_alcance",
    "sin_conjunta": "sin_conjunta",
    "conjunta_cerrada": "conjunta_cerrada",
    "umbral_fuera_de_rejilla": "umbral_fuera_de_rejilla",
    "conjunta_retenida": "conjunta_retenida",
}


@dataclass(frozen=True)
class Gobierno:
    """One family under one key: the gate that governs it now and why.

    ``resolucion``: what the workers apply; ``cobertura``: the pooled gate's coverage of it
    from its own evidence (None without a sequence of its own); ``retencion``: the hold that
    closes it (its own or the pooled gate's), for who, why and when.
    """

    familia: str
    clave: ClavePuerta
    puerta: PuertaQueRige
    razon: RazonGobierno
    resolucion: Resolucion
    cobertura: Cobertura | None
    manual: bool = False

    @property
    def retencion(self) -> EstadoPuerta | None:
        """The hold record behind a held reason, else None."""
        if self.razon in ("retenida", "conjunta_retenida"):
            return self.resolucion.estado if self.resolucion.estado is not None else None
        return None

    def describir(self) -> str:
        """The reason in one Spanish sentence for the Puertas page."""
        res, cob = self.resolucion, self.cobertura
        estado = res.estado
        propia = res.propia
        if self.razon == "propia" and estado is not None:
            return (
                f"Su propia puerta: λ = {estado.umbral} (n = {estado.n}, k = {estado.k}), "
                f"abierta por {estado.abierta_por or '—'}."
            )
        if self.razon == "conjunta" and estado is not None:
            return (
                f"Cubierta por la puerta conjunta: λ = {estado.umbral}, con {estado.n} "
                f"aprobaciones propias decididas a ese λ ({estado.k} rechazadas por personas)"
                f"{_exclusion(cob)}."
            )
        if self.razon in ("retenida", "conjunta_retenida"):
            hold = self.retencion
            quien = (
                "La familia está retenida"
                if self.razon == "retenida"
                else ("La puerta conjunta que la cubre está retenida")
            )
            if hold is None:
                return f"{quien}."
            nota = f": «{hold.nota}»" if hold.nota else ""
            return (
                f"{quien} por {hold.retenida_por} el "
                f"{hold.actualizada_en.strftime('%Y-%m-%d %H:%M UTC')}{nota}. Nada se publica "
                "sin persona hasta que la liberen."
            )
        if self.razon == "cerrada_por_vigilancia":
            return _vigilancia(propia)
        if self.razon == "excluida":
            n = cob.n if cob is not None else (propia.n if propia is not None else 0)
            k = cob.k if cob is not None else (propia.k if propia is not None else 0)
            umbral = cob.umbral if cob is not None else None
            return (
                f"Excluida de la puerta conjunta: su propia evidencia a λ = {umbral} muestra una "
                f"precisión bajo el objetivo ({n} aprobaciones decididas, {k} rechazadas"
                f"{_exclusion(cob)}). Todo va a revisión."
            )
        if self.razon == "sin_certificar" and cob is not None:
            return (
                f"Sin certificar a λ = {cob.umbral} de la conjunta: su propia evidencia desde "
                f"que la conjunta se certificó ({cob.n} fichas a ese λ, {cob.k} no aprobadas "
                f"tal cual) tiene e-valor {cob.e_valor:.3g}, y la cubre al llegar a "
                f"{1 / DELTA_PUERTA:.0f}{_exclusion(cob)}. Todo va a revisión hasta entonces."
            )
        if self.razon == "cubierta_pendiente" and cob is not None:
            if self.manual:
                return (
                    f"Lista para publicarse con la conjunta (λ = {cob.umbral}, {cob.n} "
                    f"aprobaciones propias{_exclusion(cob)}): un revisor la cubre con un clic."
                )
            return (
                f"Cubierta por la conjunta (λ = {cob.umbral}, {cob.n} aprobaciones propias"
                f"{_exclusion(cob)}): la app escribe su registro en la próxima vuelta."
            )
        return {
            "fuera_de_alcance": "Fuera del alcance de la apertura automática "
            "(--apertura-familias): la app no la abre ni la cubre; un revisor puede abrir su "
            "propia puerta con un clic cuando esté certificada.",
            "sin_conjunta": "Sin puerta conjunta (--sin-puerta-conjunta): solo la publica su "
            "propia puerta.",
            "conjunta_cerrada": "Modo sombra: no tiene puerta propia y la conjunta no está "
            "abierta (o se cerró o se volvió a certificar desde que la cubrió).",
            "umbral_fuera_de_rejilla": "La conjunta está abierta en un λ fuera de la rejilla de "
            "la app (fichas calibrar): no cubre familias.",
            "cerrada": f"Cerrada (motivo {propia.motivo if propia else '—'}).",
            "sin_evidencia": "Sin evidencia propia: ninguna de sus fichas en modo sombra está "
            "decidida bajo esta clave. Todo va a revisión.",
        }.get(self.razon, self.razon)


def _vigilancia(propia: EstadoPuerta | None) -> str:
    """A closure by what people said of the published fichas, by which test closed it."""
    if propia is not None and propia.motivo == MOTIVO_PUERTA_CAMBIO:
        return (
            "Cerrada por el detector de cambios: los veredictos recientes de la muestra de lo "
            "publicado mostraron una caída de la precisión bajo el objetivo. La conjunta no la "
            "vuelve a cubrir: necesita su propia puerta, con una secuencia que empieza de nuevo."
        )
    cota = propia.cota_inferior if propia is not None else None
    texto = f" (cota inferior {cota:.3f})" if cota is not None else ""
    return (
        "Cerrada por la cota en línea: la muestra de lo publicado mostró su precisión bajo el "
        f"objetivo{texto}. La conjunta no la vuelve a cubrir: necesita su propia puerta, con "
        "una secuencia que empieza de nuevo."
    )


def _exclusion(cob: Cobertura | None, delta: float = DELTA_PUERTA) -> str:
    """The exclusion e-value and where it excludes (1/δ), when read; else nothing."""
    if cob is None or cob.umbral is None:
        return ""
    return f", e-valor de exclusión {cob.e_exclusion:.3g} (excluye al llegar a {1 / delta:.0f})"


def gobierno(
    familia: str,
    clave: ClavePuerta,
    estados: Mapping[str, EstadoPuerta],
    secuencia: Secuencia | None,
    alcance: Alcance,
    manual: bool = False,
    desde_conjunta: EstadoSecuencia | None = None,
) -> Gobierno:
    """The gate that governs ``familia`` under ``clave`` now, and why (``desde_conjunta``: the
    family's coverage sequence since the pooled certification, ``puerta.cobertura``)."""
    res = resolver(familia, clave, estados)
    cob = (
        cobertura(familia, clave, estados, secuencia.estado, alcance, desde_conjunta)
        if secuencia is not None
        else None
    )

    def resultado(puerta: PuertaQueRige, razon: RazonGobierno) -> Gobierno:
        return Gobierno(familia, clave, puerta, razon, res, cob, manual)

    if res.razon == "propia":
        return resultado("propia", "propia")
    if res.razon == "conjunta":
        return resultado("conjunta", "conjunta")
    if res.razon in ("retenida", "conjunta_retenida"):
        return resultado("ninguna", res.razon)
    propia = res.propia
    if cob is not None and cob.razon == "cubierta":
        return resultado("ninguna", "cubierta_pendiente")
    if propia is not None and not propia.abierta and propia.motivo in MOTIVOS_VIGILANCIA:
        return resultado("ninguna", "cerrada_por_vigilancia")
    if propia is not None and not propia.abierta and propia.motivo == MOTIVO_PUERTA_EXCLUIDA:
        return resultado("ninguna", "excluida")
    if cob is not None and cob.razon == "sin_certificar" and secuencia is not None:
        if not secuencia.decididas:
            return resultado("ninguna", "sin_evidencia")
    if cob is not None and cob.razon in _DE_COBERTURA:
        return resultado("ninguna", _DE_COBERTURA[cob.razon])
    if propia is not None and not propia.abierta:
        return resultado("ninguna", "cerrada")
    return resultado("ninguna", "sin_evidencia")


def familias(
    clave: ClavePuerta, estados: Mapping[str, EstadoPuerta], secuencias: Iterable[Secuencia]
) -> list[str]:
    """The families to show under ``clave``: those with shadow evidence or a record of it."""
    nombres = {s.familia for s in secuencias if s.clave == clave}
    nombres |= {e.familia for e in estados.values() if e.clave == clave}
    nombres.discard(FAMILIA_TODAS)
    return sorted(nombres)


@dataclass(frozen=True)
class EnJuego:
    """The gates in play across the catalogue now: each a test at risk δ of its own.

    ``familias``: (family, key) sequences that could open a family's own gate; ``conjuntas``:
    pooled sequences (one per key); ``coberturas``: families' coverage sequences under an open
    pooled gate (each could publish its family at the pooled λ).
    """

    familias: int
    conjuntas: int
    coberturas: int
    delta: float = DELTA_PUERTA

    @property
    def total(self) -> int:
        """N: every test in play."""
        return self.familias + self.conjuntas + self.coberturas

    def describir(self) -> str:
        """What holds for them together, in one sentence for catalogue editors."""
        n = self.total
        return (
            f"Hay {n} puertas en juego ({self.familias} de familia por clave, {self.conjuntas} "
            f"conjuntas, {self.coberturas} coberturas en curso). Cada una, por sí sola, se abre "
            f"con una precisión real bajo el objetivo con probabilidad δ = {self.delta} como "
            f"mucho; juntas no tienen esa garantía: de las {n}, el número esperado de puertas "
            f"abiertas por error es como mucho {n} · δ = {n * self.delta:.2f}."
        )


def en_juego(
    secuencias: Iterable[Secuencia], coberturas: int, delta: float = DELTA_PUERTA
) -> EnJuego:
    """The gates in play: every sequence the certifier advances (a family's or a key's pooled
    one) and ``coberturas`` coverage sequences under open pooled gates."""
    lista = list(secuencias)
    conjuntas = sum(1 for s in lista if s.familia == FAMILIA_TODAS)
    return EnJuego(len(lista) - conjuntas, conjuntas, coberturas, delta)
