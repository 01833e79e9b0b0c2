"""The worker follows ``fichas.puerta``: read to the end before consuming, then kept current.

``seguir_puerta`` starts a ``puerta.topico.LectorPuertas`` (no consumer group: every worker
needs every gate), waits until it has read every record there was at start-up, and yields the
graph's gate source over its live snapshot (``stream.gobierno.fuente.PuertaResuelta``), under the
running key (``stream.gobierno.identidad.ClaveEnUso``, which it follows when the served model
changes). ``VigiaPuerta`` keeps the metrics (state and holds per family) and the log in step with
it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from criterios import familias_conocidas
from esquemas.constantes import FAMILIA_TODAS, PUERTA_VEREDICTO
from grafo import FuentePuerta, PuertaCerrada
from infra.config import Settings
from puerta.topico import LectorPuertas
from stream.gobierno.fuente import PuertaResuelta, describir_clave, razon, servido_distinto
from stream.gobierno.identidad import SIN_LEER, ClaveEnUso
from stream.metricas.sensor import WorkerSensor

log = logging.getLogger(__name__)

ESPERA_AVISO_S = 10.0  # how often a worker still reading the gate topic at start-up says so


class VigiaPuerta:
    """Keeps the gate metrics and log in step with the states the worker follows.

    Called once at start-up (``arrancar``: one line per family saying why its gate is open or
    closed, and one line when the topic's gates were certified on another served model) and on
    every state the reader takes in (``al_cambiar``): the metrics of every family are
    recomputed (a pooled record governs several), and a family whose gate opened or closed is
    logged. ``refrescar`` after a change of the running key or of its verification.
    """

    def __init__(
        self, fuente: PuertaResuelta, familias: tuple[str, ...], sensor: WorkerSensor
    ) -> None:
        self.fuente = fuente
        self.familias = familias
        self.sensor = sensor
        self._abiertas: dict[str, bool] = {}

    def arrancar(self) -> None:
        """Log the reason for every family's gate, and set its metrics."""
        estados = self.fuente.estados()
        otro_servido = servido_distinto(self.fuente.clave, estados)
        if otro_servido:
            log.warning(
                "the gate records on the topic were certified with the same loop on another "
                "served model (%s); the server now serves %r (running key %s): they do not "
                "apply, and every family is closed until a gate is certified for the running "
                "key",
                "; ".join(describir_clave(c) for c in otro_servido),
                self.fuente.clave.modelo_servido,
                self.fuente.clave.texto(),
                extra={"modelo_servido": self.fuente.clave.modelo_servido},
            )
        for familia in self.familias:
            abierta, texto = razon(familia, self.fuente.clave, estados)
            self._abiertas[familia] = abierta
            (log.info if abierta else log.warning)(
                texto, extra={"familia": familia, "puerta_abierta": abierta}
            )
        self._metricas()

    def al_cambiar(self, _id: str) -> None:
        """A gate or hold changed on the topic (a record read, an unreadable record closing it,
        a tombstone): refresh every family, log those that flipped."""
        if not self._abiertas:
            return  # still catching up at start-up: ``arrancar`` reports the result
        estados = self.fuente.estados()
        for familia in self.familias:
            abierta, texto = razon(familia, self.fuente.clave, estados)
            if abierta != self._abiertas.get(familia):
                self._abiertas[familia] = abierta
                (log.info if abierta else log.warning)(
                    "gate changed: " + texto, extra={"familia": familia, "puerta_abierta": abierta}
                )
        self._metricas()

    def refrescar(self, _clave: ClaveEnUso | None = None) -> None:
        """The running key or its verification changed: metrics anew, and the reasons noted
        again (their lines are the key change's own line, ``stream.gobierno.identidad``)."""
        if not self._abiertas:
            return
        estados = self.fuente.estados()
        for familia in self.familias:
            self._abiertas[familia] = razon(familia, self.fuente.clave, estados)[0]
        self._metricas()

    def _metricas(self) -> None:
        """Every family's gate and hold series, and the pooled gate's hold."""
        self.sensor.set_gates_suspended(self.fuente.suspendida)
        for familia in self.familias:
            res = self.fuente.resolucion(familia)
            self.sensor.set_gate(familia, self.fuente.estado(familia))
            self.sensor.set_gate_held(familia, res.razon in ("retenida", "conjunta_retenida"))
        conjunta = self.fuente.resolucion(FAMILIA_TODAS)
        self.sensor.set_gate_held(FAMILIA_TODAS, conjunta.razon == "retenida")


@asynccontextmanager
async def seguir_puerta(
    settings: Settings, clave: ClaveEnUso, sensor: WorkerSensor
) -> AsyncIterator[FuentePuerta]:
    """The worker's gate: follow ``FICHAS_TOPIC_PUERTA`` from the beginning for as long as the
    block runs, and yield the graph's source once every record there at start-up is read.

    Waiting for the end before any input is consumed means a restarted worker decides from
    the gate state on the topic, never from "no record yet". Under ``FICHAS_PUERTA=veredicto``
    no gate applies: nothing is read, and a warning says publications are not certified.
    The source follows ``clave``: the key it resolves under, and every gate closed while the
    served model is not verified.
    """
    familias = tuple(sorted(familias_conocidas()))
    sensor.on_gate_mode(settings.puerta, clave.clave.texto(), familias)
    if settings.puerta == PUERTA_VEREDICTO:
        log.warning(
            "FICHAS_PUERTA=veredicto: fichas are published on the evaluator's yes; automatic "
            "publications are NOT certified against people (metric fichas_puerta_sin_certificar"
            "=1). Unset it for the certified gate (docs/puerta.md)"
        )
        clave.seguir(
            lambda en_uso: sensor.on_gate_mode(settings.puerta, en_uso.clave.texto(), familias)
        )
        yield PuertaCerrada()
        return
    vigia: VigiaPuerta | None = None

    def al_cambiar(id_registro: str) -> None:
        if vigia is not None:
            vigia.al_cambiar(id_registro)

    # ``serve`` calls ``ensure_topics`` first: the broker answered (or the start-up exited 4)
    # and the gate topic exists before this reader connects.
    lector = LectorPuertas(
        settings.topic_puerta, al_cambiar=al_cambiar, client_id=f"{settings.grupo}-puerta"
    )
    await lector.start(settings)
    try:
        await _al_dia(lector, settings.topic_puerta)
        fuente = PuertaResuelta(clave.clave, lector.estados)
        fuente.suspendida = not clave.verificada
        vigia = VigiaPuerta(fuente, familias, sensor)

        def seguir(en_uso: ClaveEnUso) -> None:
            leida = fuente.clave.modelo_servido == SIN_LEER != en_uso.modelo_servido
            if en_uso.clave != fuente.clave:
                sensor.on_gate_mode(settings.puerta, en_uso.clave.texto(), familias)
            fuente.clave = en_uso.clave
            fuente.suspendida = not en_uso.verificada
            # The start-up report waits for the first identity the server gives; a later
            # change is said in its own one line (``stream.gobierno.identidad``).
            vigia.arrancar() if leida else vigia.refrescar(en_uso)

        clave.seguir(seguir)
        if clave.modelo_servido != SIN_LEER:
            vigia.arrancar()
        else:
            sensor.set_gates_suspended(True)
        yield fuente
    finally:
        await lector.stop()


async def _al_dia(lector: LectorPuertas, topic: str) -> None:
    """Wait until the reader has read the topic to its end, saying so while it takes long."""
    while True:
        try:
            await asyncio.wait_for(asyncio.shield(lector.al_dia()), ESPERA_AVISO_S)
            return
        except TimeoutError:
            log.warning(
                "still reading the gate states on %s; no input is consumed until then", topic
            )
