"""The running key names the model that answers: read from the server, and kept current.

``ClaveEnUso`` is the worker's running key (``stream.gobierno.clave.clave_de``: the settings, both
sides' request settings, the served model's identity) and whether that identity is verified
now; the nodes that stamp outcomes, the gate source and the metrics follow it. ``VigiaIdentidad``
reads the identity at start-up (a server that is down pauses consumption, as any LLM outage
does, until it answers), again every ``RELEER_S`` and after every LLM outage. While an outage
lasts, and until the identity is read again, every gate is closed: a server restarted on new
weights is never trusted with the old gates. A changed identity switches the running key
(one WARNING line): its gates are closed unless certified, and later fichas carry the key of
the model that wrote them. ``clave_servida`` reads it once for the commands that run the loop
once. Limit: weights swapped between two reads with no outage seen are caught by the next
read only. Why: docs/puerta.md, "The key"; operator's view: docs/operacion.md.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable

from esquemas.estado_puerta import ClavePuerta
from grafo import Backoff, LLMHealth, LLMUnavailable
from grafo.errores import LLMFailure, classify
from grafo.identidad import SIN_IDENTIDAD, FalloLectura, clasificar, leer_modelo_servido
from grafo.retry import Attempts, BudgetSpent, retry
from infra.config import Settings
from infra.logs import mask_url
from stream.gobierno.clave import clave_de, llm_settings

log = logging.getLogger(__name__)

RELEER_S = 60.0  # how often a running worker asks the server again which model it serves
SIN_LEER = "sin_leer"
"""``modelo_servido`` of the key before the server ever answered (nothing is consumed then)."""


class ClaveEnUso:
    """The running key and the served identity it names; ``verificada`` is False while the
    identity is not known to hold (before the first read, during an LLM outage and until the
    next read after it): every gate is closed then."""

    def __init__(self, settings: Settings, modelo_servido: str, verificada: bool = True) -> None:
        self.settings = settings
        self.modelo_servido = modelo_servido
        self.clave = clave_de(settings, modelo_servido)
        self.verificada = verificada
        self._oyentes: list[Callable[[ClaveEnUso], None]] = []

    def seguir(self, oyente: Callable[[ClaveEnUso], None]) -> None:
        """Call ``oyente`` (synchronously) after every change of key or of ``verificada``."""
        self._oyentes.append(oyente)

    def _avisar(self) -> None:
        for oyente in self._oyentes:
            oyente(self)

    def suspender(self) -> None:
        """The served model may have changed (an outage): close every gate until read again."""
        if self.verificada:
            self.verificada = False
            self._avisar()

    def confirmar(self, modelo_servido: str) -> ClavePuerta | None:
        """The server says it serves ``modelo_servido``: the key it names is the running key
        from now on, verified. The previous key when it changed, else None."""
        anterior = self.clave
        cambio = modelo_servido != self.modelo_servido
        if cambio:
            self.modelo_servido = modelo_servido
            self.clave = clave_de(self.settings, modelo_servido)
        if cambio or not self.verificada:
            self.verificada = True
            self._avisar()
        return anterior if cambio else None


def _sin_identidad(url: str, modelo: str, causa: str) -> None:
    """The ERROR line of a server that answers but does not say what it serves."""
    log.error(
        "the LLM at %s does not say which model it serves as %s (%s): the gate key's "
        "modelo_servido is %r, so only gates certified under that key apply, and new weights "
        "served under the same name cannot be told apart. Serve /v1/models (vLLM and llama.cpp "
        "do); docs/operacion.md, 'The served model'",
        url,
        modelo,
        causa,
        SIN_IDENTIDAD,
        extra={"llm_url": url, "causa": causa},
    )


async def clave_servida(settings: Settings, policy: Backoff) -> ClavePuerta:
    """The running key of a command that runs the loop once (``procesar``, ``evaluar``,
    ``calibrar --clave-desde-config``): the identity read with the LLM's retry rule.

    Raises ``grafo.LLMUnavailable`` when the server stays down past ``policy``'s budget; a
    server that cannot say what it serves gives ``SIN_IDENTIDAD``, said on standard error.
    """
    llm = llm_settings(settings)
    url = mask_url(settings.llm_url)

    async def on_failure(exc: Exception, attempts: Attempts) -> float | None:
        fallo = clasificar(exc)
        if not fallo.transitorio:
            raise _NoDice(fallo) from exc
        return fallo.retry_after_s

    def on_wait(exc: Exception, attempts: Attempts) -> None:
        """Each retry in one WARNING line naming the server and the cause, as the loop's own
        retries do (``grafo.ejecucion``): an operator sees why the command waits."""
        log.warning(
            "LLM at %s: asking which model it serves failed: %s; retry %d in %.1f s",
            url,
            clasificar(exc).causa,
            attempts.failures,
            attempts.delay_s,
            extra={"llm_url": url, "causa": clasificar(exc).causa},
        )

    try:
        servido = await retry(lambda: leer_modelo_servido(llm), policy, on_failure, on_wait)
    except _NoDice as no:
        _sin_identidad(url, settings.llm_modelo, no.fallo.causa)
        print(
            f"warning: the LLM at {url} does not say which model it serves "
            f"({no.fallo.causa}): modelo_servido is {SIN_IDENTIDAD!r}",
            file=sys.stderr,
        )
        servido = SIN_IDENTIDAD
    except BudgetSpent as spent:
        causa = classify(spent.__cause__) if isinstance(spent.__cause__, Exception) else None
        raise LLMUnavailable(
            f"LLM at {url} unavailable after {spent} while asking which model it serves: "
            f"{causa.cause if causa else 'unknown'}"
        ) from spent.__cause__
    return clave_de(settings, servido)


class _NoDice(Exception):
    """The server answered but cannot say what it serves: stop retrying."""

    def __init__(self, fallo: FalloLectura) -> None:
        super().__init__(fallo.causa)
        self.fallo = fallo


OnKey = Callable[[str, str, str, bool], None]


class VigiaIdentidad:
    """Keeps ``clave`` naming the model the server serves, for as long as the worker runs.

    ``primera`` reads once at start-up (no retry); ``vigilar`` then runs until cancelled: while
    the identity is not verified it reads with the LLM's backoff (pausing consumption through
    ``health`` when it paused it at start-up), else every ``releer_s`` or at once after an
    outage. ``on_key(anterior, nueva, modelo_servido, cambio)`` (key ids) tells the metrics.
    ``etiqueta`` follows the URL in its log lines (the candidate loop's watcher says so).
    """

    def __init__(
        self,
        settings: Settings,
        clave: ClaveEnUso,
        on_key: OnKey | None = None,
        releer_s: float = RELEER_S,
        backoff: Backoff | None = None,
        etiqueta: str = "",
    ) -> None:
        self.settings = settings
        self.clave = clave
        self.on_key = on_key
        self.releer_s = releer_s
        self.backoff = backoff or Backoff()
        self._llm = llm_settings(settings)
        self._url = mask_url(settings.llm_url) + etiqueta  # " (candidate)": whose LLM it is
        self._despierta = asyncio.Event()
        self._health: LLMHealth | None = None
        self._pausada = False  # consumption paused by this watcher (start-up), not by a call
        self._causa_sin_identidad: str | None = None

    async def primera(self) -> LLMFailure | None:
        """One read at start-up: the identity, or the failure that keeps it unknown (the server
        is down: ``vigilar`` reads again with backoff while consumption is paused)."""
        try:
            servido = await leer_modelo_servido(self._llm)
        except Exception as exc:
            fallo = clasificar(exc)
            if fallo.transitorio:
                return classify(exc) or LLMFailure("connection", True, None, fallo.causa)
            servido = self._sin_identidad(fallo.causa)
        self._aplicar(servido)
        return None

    def acompanar(self, health: LLMHealth, fallo_inicial: LLMFailure | None) -> None:
        """Follow the LLM's health: an outage closes every gate until the identity is read
        again; an identity unknown at start-up pauses consumption until it is read."""
        self._health = health
        health.oyentes.append(self._al_cambiar_salud)
        if fallo_inicial is not None:
            self._pausada = True
            health.mark_down(fallo_inicial)

    def _al_cambiar_salud(self, arriba: bool) -> None:
        """An outage suspends the identity (gates closed) and wakes the reader."""
        if not arriba:
            self.clave.suspender()
        self._despierta.set()

    async def vigilar(self) -> None:
        """Until cancelled: read again when due, apply what the server says."""
        fallos = 0
        while True:
            if self.clave.verificada:
                self._despierta.clear()
                try:
                    await asyncio.wait_for(self._despierta.wait(), self.releer_s)
                except TimeoutError:
                    pass
            try:
                servido = await leer_modelo_servido(self._llm)
            except Exception as exc:
                fallo = clasificar(exc)
                if fallo.transitorio:
                    if not self.clave.verificada:
                        fallos += 1
                        await asyncio.sleep(self.backoff.delay(fallos, fallo.retry_after_s))
                    continue  # verified: a failed periodic read is an outage the calls see
                servido = self._sin_identidad(fallo.causa)
            fallos = 0
            self._aplicar(servido)

    def _sin_identidad(self, causa: str) -> str:
        """Say once per cause that the server cannot say what it serves; the marker."""
        if causa != self._causa_sin_identidad:
            self._causa_sin_identidad = causa
            _sin_identidad(self._url, self.settings.llm_modelo, causa)
        return SIN_IDENTIDAD

    def _aplicar(self, servido: str) -> None:
        """The server serves ``servido``: confirm or switch the key, say so, resume."""
        primera = self.clave.modelo_servido == SIN_LEER
        anterior_texto = self.clave.modelo_servido
        anterior = self.clave.confirmar(servido)
        if anterior is not None and primera:
            log.info(
                "LLM at %s serves %s as %r: the gate key is %s",
                self._url,
                self.settings.llm_modelo,
                servido,
                self.clave.clave.texto(),
                extra={"llm_url": self._url, "modelo_servido": servido},
            )
        elif anterior is not None:
            log.warning(
                "the LLM at %s now serves another model as %s: %r before, %r now; gate key "
                "%s -> %s: every gate is closed until one is certified for the new key, and "
                "fichas carry the new key from now on",
                self._url,
                self.settings.llm_modelo,
                anterior_texto,
                servido,
                anterior.texto(),
                self.clave.clave.texto(),
                extra={"llm_url": self._url, "modelo_servido": servido},
            )
        if anterior is not None and self.on_key is not None:
            self.on_key(anterior.texto(), self.clave.clave.texto(), servido, not primera)
        if self._pausada and self._health is not None:
            self._pausada = False
            self._health.mark_up()
