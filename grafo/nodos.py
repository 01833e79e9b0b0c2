"""The nodes of the loop and the pure routing functions between them.

``generar`` and ``evaluar`` call the agents (``evaluar`` runs the code checks first and takes a
snapshot of the gate into the state); ``decidir`` reads only the state (verdict, score, checks,
gate snapshot, attempts, an invalid answer), without a model or I/O, so the model can neither
lengthen nor shorten the loop and a resumed run decides as it would have; ``publicar`` and
``enviar_a_revision`` build the contract's outcome event in the state, its timestamp
checkpointed, and do no I/O. Why the code checks are not a node, and each routing rule:
docs/grafo.md.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from criterios import comprobar as comprobar_ficha
from criterios import fallos
from criterios.limpieza import limpiar_origen
from criterios.vocabulario import mapear_origen
from esquemas import FichaEnRevision, FichaPublicada, Origen
from esquemas.constantes import (
    CRITERIO_SALIDA_INVALIDA,
    DESTINO_PUBLICADAS,
    DESTINO_REVISION,
    MAX_DETALLE,
    MOTIVO_RECHAZADA,
    MOTIVO_SALIDA_INVALIDA,
    MOTIVO_SIN_GARANTIA,
    PUERTA_CERTIFICADA,
    PUERTA_VEREDICTO,
    ModoPuerta,
    Motivo,
)
from esquemas.estado_puerta import ClavePuerta
from esquemas.salidas import SOLO_MUESTRA
from esquemas.sombra import en_muestra_sombra
from grafo.agentes import Agentes, Evaluacion
from grafo.contexto import en_intento
from grafo.errores import SalidaInvalida
from grafo.estado import EstadoFicha
from grafo.fuente_puerta import FuentePuerta, PuertaCerrada
from grafo.mensajes import problemas_acumulados

Ruta = Literal["generar", "evaluar", "publicar", "enviar_a_revision"]
_log = logging.getLogger(__name__)


def decidir(state: EstadoFicha, max_intentos: int, modo: ModoPuerta) -> Ruta:
    """After evaluar: try again, or end the loop and send the final ficha where it belongs.

    One loop, whatever the gate says (docs/grafo.md, "decidir"):

    | latest attempt                        | attempts left | route                         |
    | ------------------------------------- | ------------- | ----------------------------- |
    | an invalid answer                     | any           | enviar_a_revision             |
    | code checks fail, or the judge rejects | yes          | generar (with the problems)   |
    | code checks fail, or the judge rejects | no           | final ficha, routed below     |
    | code checks pass and the judge approves | any         | final ficha, routed below     |

    The final ficha is published under ``veredicto`` when the judge approved it (a code failure
    vetoes the approval, ``forzar_rechazo``); under ``certificada`` when the gate snapshot
    ``evaluar`` took is open, the event is not in the blind shadow share (``sombra``, v1.6), the
    code checks pass and the score reaches its threshold. Anything else goes to review.
    Retries never depend on the gate: with the gate closed (shadow mode), and for the share
    while it is open, people judge exactly the final fichas an open gate would publish or hold,
    and a draft reaches them only after the loop has done its work.
    """
    if state.get("invalida"):
        return "enviar_a_revision"
    aprobada = bool(state["veredicto"]["aprobada"])
    if not aprobada and state["intentos"] < max_intentos:
        return "generar"
    if modo == PUERTA_VEREDICTO:
        return "publicar" if aprobada else "enviar_a_revision"
    puerta = state.get("puerta")
    if puerta is not None and not state.get("sombra") and supera_umbral(state, puerta["umbral"]):
        return "publicar"
    return "enviar_a_revision"


def codigo_aprobado(state: EstadoFicha) -> bool:
    """The latest ficha passed every code check (and was checked at all)."""
    comprobaciones = state.get("comprobaciones")
    return bool(comprobaciones) and not fallos(comprobaciones or {})


def supera_umbral(state: EstadoFicha, umbral: float) -> bool:
    """Code checks passed and the evaluator's score reached ``umbral``; no score never does."""
    puntuacion = state["veredicto"].get("puntuacion")
    return codigo_aprobado(state) and puntuacion is not None and puntuacion >= umbral


def tras_generar(state: EstadoFicha) -> Ruta:
    """After generar: an answer that is not a valid Ficha goes straight to manual review."""
    return "enviar_a_revision" if state.get("invalida") else "evaluar"


def forzar_rechazo(
    veredicto: dict[str, Any], fallos_codigo: list[dict[str, str]]
) -> dict[str, Any]:
    """Merge code-check failures into the verdict: code has the last word on what it checks.

    A verdict that says ``aprobada`` while listing problems is treated as a rejection, the
    safe reading of an inconsistent answer.
    """
    problemas = list(fallos_codigo)
    vistos = {(p["criterio"], p["detalle"]) for p in problemas}
    for problema in veredicto.get("problemas", []):
        if (problema["criterio"], problema["detalle"]) not in vistos:
            problemas.append(problema)
    aprobada = bool(veredicto.get("aprobada")) and not problemas
    return {"aprobada": aprobada, "problemas": problemas}


def comprobar_intento(
    ficha: dict[str, Any], origen: dict[str, Any]
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """One attempt's code checks as the loop runs them, and the origin in the house vocabulary
    the evaluator reads: mapped once, so the checks and the evaluator see the same one. Shared
    with the re-scoring replay (``herramientas.calibrar.historias``), which must judge a stored
    attempt exactly as the loop does."""
    mapeado = mapear_origen(origen).origen
    return comprobar_ficha(ficha, origen, mapeado), mapeado


def veredicto_del_bucle(
    evaluacion: Evaluacion, comprobaciones: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The verdict the loop records and ``decidir`` reads: the evaluator's, vetoed by every
    failed code check (``forzar_rechazo``), with the evaluator's score as it came (the gate asks
    for the code checks as a separate condition)."""
    veredicto = forzar_rechazo(evaluacion.veredicto.model_dump(), fallos(comprobaciones))
    veredicto["puntuacion"] = evaluacion.puntuacion
    return veredicto


def origen_revision(evento: dict[str, Any]) -> Origen:
    """What a reviewer compares a ficha against: the supplier's page and figures, as sent."""
    return Origen(ficha_proveedor=evento["ficha_proveedor"], cifras=evento.get("cifras", {}))


def _ahora() -> str:
    """UTC now in RFC 3339, the contract's timestamp format."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _mapeado(origen: dict[str, Any], sku: Any) -> dict[str, Any]:
    """The origin in the house vocabulary; supplier keys it does not know are kept as written
    and logged, so a missing alias shows up instead of silently reaching the generator."""
    mapeo = mapear_origen(origen)
    if mapeo.claves_desconocidas:
        _log.warning(
            "claves de atributo fuera del vocabulario de la casa (se conservan): sku=%s %s",
            sku,
            ", ".join(mapeo.claves_desconocidas),
        )
    return mapeo.origen


@dataclass
class Nodos:
    """The node functions, bound to the agents and to the values they stamp on outcomes."""

    agentes: Agentes
    modelo: str
    criterios_version: str
    limpiar_origen: bool = False  # generator reads the cleaned origin (criterios.limpieza)
    # FICHAS_PUERTA and where the gate is read from; with no source every gate is closed.
    modo_puerta: ModoPuerta = PUERTA_CERTIFICADA
    puerta: FuentePuerta = field(default_factory=PuertaCerrada)
    # The running loop's gate key, stamped on every outcome (contract v1.3).
    clave: ClavePuerta | None = None
    # A candidate loop's nodes (issue 41): every outcome is a review item marked
    # ``candidata``; built only with every gate closed, so ``decidir`` never publishes.
    candidata: bool = False
    # FICHAS_SOMBRA_PROPORCION (v1.6): the blind shadow share of an open gate's final fichas.
    sombra_proporcion: float = 0.0

    def __post_init__(self) -> None:
        """A candidate never publishes: refuse a gate rule or source that could open."""
        if self.candidata and (
            self.modo_puerta != PUERTA_CERTIFICADA or not isinstance(self.puerta, PuertaCerrada)
        ):
            raise ValueError("a candidate loop runs with every gate closed (certificada, none)")

    async def generar(self, state: EstadoFicha) -> dict[str, Any]:
        """Write a ficha from the origin and the problems found so far; count the attempt."""
        intento = state.get("intentos", 0) + 1
        en_intento(intento)
        problemas = problemas_acumulados(state.get("historial", []))
        origen = state["origen"]
        if self.limpiar_origen:  # the evaluator and the code checks still get the full one
            origen = _mapeado(limpiar_origen(origen), state["evento"].get("sku"))
        try:
            ficha = await self.agentes.generar(origen, problemas)
        except SalidaInvalida as exc:
            return self._salida_invalida(intento, exc, None) | {"ficha": None, "intentos": 1}
        return {"ficha": ficha.model_dump(), "intentos": 1, "invalida": None}

    async def evaluar(self, state: EstadoFicha) -> dict[str, Any]:
        """Run the code checks, ask the evaluator, then veto its approval if any check failed.

        The evaluator's score goes in the verdict (``veredicto["puntuacion"]``) and in the
        attempt's record as it came, before the code veto: it is the evaluator's measured
        ``P(approvable)``, and the gate asks for the code checks as a separate condition.
        """
        en_intento(state["intentos"])
        ficha = state["ficha"] or {}
        comprobaciones, origen = comprobar_intento(ficha, state["origen"])
        try:
            evaluacion = await self.agentes.evaluar(ficha, comprobaciones, origen)
        except SalidaInvalida as exc:
            invalida = self._salida_invalida(state["intentos"], exc, state["ficha"])
            return invalida | {"comprobaciones": comprobaciones}
        veredicto = veredicto_del_bucle(evaluacion, comprobaciones)
        codigo = {f["criterio"] for f in fallos(comprobaciones)}
        rechazos = [
            {"criterio": p["criterio"], "por": "codigo" if p["criterio"] in codigo else "evaluador"}
            for p in veredicto["problemas"]
        ]
        registro = {
            "intento": state["intentos"],
            "ficha": ficha,
            "veredicto": veredicto,
            "rechazos": rechazos,
            "puntuacion": evaluacion.puntuacion,
        }
        puerta = self._puerta_vigente(state)
        return {
            "comprobaciones": comprobaciones,
            "veredicto": veredicto,
            "historial": [registro],
            "puerta": puerta,
            "sombra": puerta is not None
            and en_muestra_sombra(state["evento"]["event_id"], self.sombra_proporcion),
        }

    def _puerta_vigente(self, state: EstadoFicha) -> dict[str, Any] | None:
        """The gate that applies to this ficha now, as JSON for the checkpoint; None: closed.

        Read at every evaluation, so a gate closed on the topic stops the next decision, and
        kept in the state, so ``decidir`` stays pure and a resumed run decides the same way.
        Under ``veredicto`` no gate applies and a published ficha carries none. Beside it,
        ``evaluar`` writes ``sombra``: the gate is open and the event is in the blind share.
        """
        if self.modo_puerta == PUERTA_VEREDICTO:
            return None
        aplicada = self.puerta.umbral(state["evento"]["familia"])
        return aplicada.model_dump(mode="json") if aplicada is not None else None

    def publicar(self, state: EstadoFicha) -> dict[str, Any]:
        """Build the ``FichaPublicada`` event; the stream layer emits it."""
        if self.candidata:  # unreachable with every gate closed; never a publication
            raise RuntimeError("a candidate loop reached publicar")
        evento = state["evento"]
        salida = FichaPublicada(
            event_id=evento["event_id"],
            sku=evento["sku"],
            version=evento["version"],
            familia=evento["familia"],
            ficha=state["ficha"],  # type: ignore[arg-type]
            intentos=state["intentos"],
            criterios_version=self.criterios_version,
            modelo=self.modelo,
            publicada_en=_ahora(),  # type: ignore[arg-type]
            puerta=state.get("puerta"),  # type: ignore[arg-type]
            puntuacion=state["veredicto"].get("puntuacion"),
            clave=self.clave,
        )
        # ``origen`` and ``muestreo`` belong to the human-review sample only; the stream layer
        # adds them there.
        datos = salida.model_dump(mode="json", exclude=set(SOLO_MUESTRA))
        return {"salida": {"destino": DESTINO_PUBLICADAS, "evento": datos}}

    def enviar_a_revision(self, state: EstadoFicha) -> dict[str, Any]:
        """Build the ``FichaEnRevision`` event with the last ficha, the reason and the history."""
        evento = state["evento"]
        historial = [
            {
                "intento": r["intento"],
                "ficha": r["ficha"],
                "veredicto": r["veredicto"],  # its "puntuacion" key is not Veredicto's: dropped
                "puntuacion": r.get("puntuacion"),  # absent in checkpoints older than v1.2
            }
            for r in state.get("historial", [])
        ]
        salida = FichaEnRevision(
            event_id=evento["event_id"],
            sku=evento["sku"],
            version=evento["version"],
            familia=evento["familia"],
            ficha=state.get("ficha"),  # type: ignore[arg-type]
            intentos=state["intentos"],
            motivo=self._motivo(state),
            problemas=state["veredicto"]["problemas"],
            historial=historial,  # type: ignore[arg-type]
            criterios_version=self.criterios_version,
            enviada_en=_ahora(),  # type: ignore[arg-type]
            origen=origen_revision(evento),
            clave=self.clave,
            candidata=self.candidata,
            muestra_sombra=bool(state.get("sombra")),
        )
        # ``candidata`` and ``muestra_sombra`` are written only when true: any other record
        # stays as v1.4 and v1.5 subscribers know it.
        falsos = {c for c in ("candidata", "muestra_sombra") if not getattr(salida, c)}
        datos = salida.model_dump(mode="json", exclude=falsos or None)
        return {"salida": {"destino": DESTINO_REVISION, "evento": datos}}

    def _motivo(self, state: EstadoFicha) -> Motivo:
        """Why the ficha goes to review: an unusable answer, failed checks, or no guarantee.

        Under ``certificada`` a ficha whose code checks passed reached here only because the
        gate held it back (closed, its score below the threshold, or the blind shadow share):
        ``sin_garantia``.
        """
        if state.get("invalida"):
            return MOTIVO_SALIDA_INVALIDA
        if self.modo_puerta == PUERTA_CERTIFICADA and codigo_aprobado(state):
            return MOTIVO_SIN_GARANTIA
        return MOTIVO_RECHAZADA

    @staticmethod
    def _salida_invalida(
        intento: int, exc: SalidaInvalida, ficha: dict[str, Any] | None
    ) -> dict[str, Any]:
        """State update for an agent answer that failed validation: stop, record why."""
        detalle = f"{exc.agente}: {exc.detalle}"[:MAX_DETALLE]
        problema = {"criterio": CRITERIO_SALIDA_INVALIDA, "detalle": detalle}
        veredicto = {"aprobada": False, "problemas": [problema], "puntuacion": None}
        registro: dict[str, Any] = {
            "intento": intento,
            "ficha": ficha,
            "veredicto": veredicto,
            "rechazos": [],
            "puntuacion": None,
        }
        return {
            "invalida": {"agente": exc.agente, "detalle": exc.detalle},
            "veredicto": veredicto,
            "historial": [registro],
        }
