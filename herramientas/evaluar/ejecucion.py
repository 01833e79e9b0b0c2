"""Running ``fichas evaluar``: the evaluator alone on every labelled candidate, or the whole
loop on every event, resumably (a cache of finished items keyed by the configuration's hash),
with the LLM calls and tokens of each item counted and the progress on standard error."""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from criterios import (
    CRITERIOS_VERSION,
    atributos_obligatorios,
    comprobar,
    fallos,
    mapear_origen,
    palabras_sin_respaldo,
)
from esquemas.constantes import DESTINO_PUBLICADAS
from grafo import Resultado
from grafo.contexto import sobre_evento
from herramientas.evaluar.casos import (
    conforme_a_referencia,
    distintos_de_referencia,
    origen_de_caso,
    texto_inyectado,
)

# -- accounting of LLM calls per item -------------------------------------------------------


@dataclasses.dataclass
class Cuenta:
    """LLM calls and tokens of one item (one candidate, or one event's whole loop)."""

    llamadas: int = 0
    tokens_entrada: int = 0
    tokens_salida: int = 0


_CUENTA: contextvars.ContextVar[Cuenta | None] = contextvars.ContextVar("cuenta", default=None)


class SensorCuentas:
    """A ``grafo.Sensor`` that adds each LLM call to the current item's ``Cuenta``.

    The item's task sets the context variable; LangGraph runs the nodes in tasks that copy
    the context, so every call of that item, and only of that item, lands in its account even
    when several items run at once.
    """

    def on_node(self, node: str, seconds: float) -> None:
        """Node timings are not part of the evaluation."""

    def on_llm_call(
        self, agent: str, seconds: float, prompt_tokens: int, completion_tokens: int
    ) -> None:
        """Count one call and its tokens in the current item's account."""
        cuenta = _CUENTA.get()
        if cuenta is not None:
            cuenta.llamadas += 1
            cuenta.tokens_entrada += prompt_tokens
            cuenta.tokens_salida += completion_tokens

    def on_llm_error(self, kind: str) -> None:
        """Transient failures are retried by the processor; not counted as calls."""

    def on_llm_paused(self, paused: bool) -> None:
        """Pauses are visible in the latency."""


# -- resumable results ----------------------------------------------------------------------


class Cache:
    """Finished items of one configuration, appended line by line so a crash loses none."""

    def __init__(self, path: Path, clave: str) -> None:
        self.path = path
        self.clave = clave
        self.hechos: dict[str, dict[str, Any]] = {}
        if path.exists():
            for linea in path.read_text(encoding="utf-8").splitlines():
                try:
                    entrada = json.loads(linea)
                except json.JSONDecodeError:
                    continue  # a line cut by a crash
                if entrada.get("clave") == clave:
                    self.hechos[entrada["id"]] = entrada["registro"]

    def guardar(self, id_: str, registro: dict[str, Any]) -> None:
        """Append one finished item and flush it to disk."""
        self.hechos[id_] = registro
        with self.path.open("a", encoding="utf-8") as handle:
            linea = {"clave": self.clave, "id": id_, "registro": registro}
            handle.write(json.dumps(linea, ensure_ascii=False) + "\n")


class Progreso:
    """A one-line progress bar on stderr (a line per tenth when stderr is not a terminal)."""

    def __init__(self, total: int, hechos: int, out: TextIO = sys.stderr) -> None:
        self.total = total
        self.hechos = hechos
        self.inicio = time.monotonic()
        self.nuevos = 0
        self.out = out
        self.tty = out.isatty()
        self._ultimo_decimo = -1
        self._pintar()

    def avanzar(self) -> None:
        """One more item finished."""
        self.hechos += 1
        self.nuevos += 1
        self._pintar()

    def _pintar(self) -> None:
        """Draw the bar with done/total and the time left at the pace of this run."""
        if not self.total:
            return
        decimo = self.hechos * 10 // self.total
        if not self.tty and decimo == self._ultimo_decimo:
            return
        self._ultimo_decimo = decimo
        lleno = self.hechos * 30 // self.total
        transcurrido = time.monotonic() - self.inicio
        quedan = self.total - self.hechos
        eta = f"{transcurrido / self.nuevos * quedan:.0f} s" if self.nuevos else "-"
        barra = f"evaluar [{'#' * lleno}{'.' * (30 - lleno)}] {self.hechos}/{self.total} eta {eta}"
        self.out.write(("\r" + barra) if self.tty else barra + "\n")
        if self.tty and self.hechos == self.total:
            self.out.write("\n")
        self.out.flush()


async def _en_paralelo(
    ids: Sequence[str],
    trabajo: Callable[[str], Awaitable[dict[str, Any]]],
    cache: Cache,
    concurrencia: int,
) -> None:
    """Run the pending items, at most ``concurrencia`` at a time, caching each as it ends."""
    pendientes = [i for i in ids if i not in cache.hechos]
    progreso = Progreso(len(ids), len(ids) - len(pendientes))
    semaforo = asyncio.Semaphore(concurrencia)

    async def uno(id_: str) -> None:
        async with semaforo:
            registro = await trabajo(id_)
        cache.guardar(id_, registro)
        progreso.avanzar()

    async with asyncio.TaskGroup() as grupo:
        for id_ in pendientes:
            grupo.create_task(uno(id_))


# -- configuration --------------------------------------------------------------------------


def configuracion(settings: Any, modo: str, casos_path: Path) -> dict[str, Any]:
    """Everything that changes the answers, recorded in the result and hashed for the cache."""
    from grafo.chat_model import NO_REPEAT_PENALTY
    from grafo.mensajes import prompt_del_evaluador, prompt_generador
    from grafo.puntuacion import TOP_LOGPROBS
    from stream.gobierno.clave import plantillas

    textos = plantillas(settings)  # FICHAS_PROMPT_*_ARCHIVO: another text is another run
    prompt_ev = prompt_del_evaluador(settings.evaluador, settings.evaluador_senal, textos.evaluador)
    config = {
        "modo": modo,
        "modelo": settings.llm_modelo,
        "url": settings.llm_url,
        "criterios_version": CRITERIOS_VERSION,
        "evaluador_rubrica": settings.evaluador_rubrica,
        "limpiar_origen": settings.limpiar_origen if modo == "bucle" else None,
        "generador_ejemplos": settings.generador_ejemplos if modo == "bucle" else None,
        "max_intentos": settings.max_intentos if modo == "bucle" else None,
        "max_tokens": settings.llm_max_tokens,
        # how the evaluator samples since v1.2 (grafo.chat_model.evaluator_chat_model): a
        # cache written before, at the generator's temperature and without logprobs, is
        # another run
        "evaluador_muestreo": {
            "temperatura": 0.0,
            "top_logprobs": TOP_LOGPROBS,
            **NO_REPEAT_PENALTY,
        },
        "prompt_evaluador_sha256": _sha(prompt_ev),
        "prompt_generador_sha256": (
            _sha(prompt_generador(settings.generador_ejemplos, textos.generador))
            if modo == "bucle"
            else None
        ),
        "casos": str(casos_path),
        "casos_sha256": _sha(casos_path.read_text(encoding="utf-8")),
    }
    if settings.evaluador_senal:  # only when set: the caches written before it stay valid
        config["evaluador_senal"] = True
    if settings.evaluador in ("citas", "lector"):  # likewise: recorded only when it runs
        config["evaluador"] = settings.evaluador
    return config


def _sha(texto: str) -> str:
    """Hex sha256 of a text."""
    return hashlib.sha256(texto.encode("utf-8")).hexdigest()


def clave_cache(config: Mapping[str, Any]) -> str:
    """Hash of the configuration without the URL: a server on another port is the same run."""
    sin_url = {k: v for k, v in config.items() if k != "url"}
    return _sha(json.dumps(sin_url, sort_keys=True))[:16]


# -- evaluator mode -------------------------------------------------------------------------


def items_evaluador(
    casos: Sequence[Mapping[str, Any]], omitir_vetadas: bool = False
) -> dict[str, tuple[dict, dict]]:
    """Every labelled candidate by id, with its case.

    ``omitir_vetadas`` leaves out the candidates a code check already vetoes: whatever the
    evaluator says of them, the loop never publishes them, so on a slow CPU model the time is
    better spent on the candidates where its verdict decides.
    """
    items = {c["id"]: (dict(caso), dict(c)) for caso in casos for c in caso["candidatas"]}
    if not omitir_vetadas:
        return items
    return {
        i: (caso, c)
        for i, (caso, c) in items.items()
        if not fallos(comprobar(c["ficha"], origen_de_caso(caso)))
    }


async def evaluar_candidata(
    agentes: Any, caso: Mapping[str, Any], candidata: Mapping[str, Any], espera_llm: float
) -> dict[str, Any]:
    """The evaluator's verdict on one candidate, next to the human one and the code checks."""
    from grafo.errores import SalidaInvalida

    origen = mapear_origen(origen_de_caso(caso)).origen  # as the graph's evaluator reads it
    ficha = dict(candidata["ficha"])
    comprobaciones = comprobar(ficha, origen)
    codigo = [f["criterio"] for f in fallos(comprobaciones)]
    cuenta = Cuenta()
    _CUENTA.set(cuenta)
    inicio = time.perf_counter()
    invalida = None
    puntuacion: float | None = None
    citas: list[dict[str, Any]] | None = None
    try:
        evaluacion = await _con_reintentos(
            lambda: agentes.evaluar(ficha, comprobaciones, origen), espera_llm
        )
        veredicto, puntuacion = evaluacion.veredicto, evaluacion.puntuacion
        citas = list(evaluacion.citas) if evaluacion.citas is not None else None
        aprobada = bool(veredicto.aprobada) and not veredicto.problemas
        problemas = [p.model_dump() for p in veredicto.problemas]
    except SalidaInvalida as exc:
        invalida, aprobada, problemas = exc.detalle[:200], False, []
    criterios_ev = sorted({p["criterio"] for p in problemas})
    return {
        "id": candidata["id"],
        "caso": caso["id"],
        "familia": caso["evento"]["familia"],
        "tipo": candidata.get("tipo"),
        "humano": {"aprobada": candidata["aprobada"], "criterios": candidata["criterios"]},
        "evaluador": {
            "aprobada": aprobada,
            "criterios": criterios_ev,
            "problemas": problemas,
            "puntuacion": puntuacion,
            # the quoting evaluator's judgement of each claim (grafo.citas), else absent
            **({"citas": citas} if citas is not None else {}),
        },
        "codigo": codigo,
        # the unsupported-words signal (criterios.fidelidad), a feature for the gate's score
        "palabras_sin_respaldo": palabras_sin_respaldo(ficha, origen)["proporcion"],
        "sistema": {
            "aprobada": aprobada and not codigo,
            "criterios": sorted(set(criterios_ev) | set(codigo)),
        },
        "invalida": invalida,
        "segundos": round(time.perf_counter() - inicio, 3),
        **dataclasses.asdict(cuenta),
    }


async def _con_reintentos(llamada: Callable[[], Awaitable[Any]], espera_llm: float) -> Any:
    """The evaluator's call retried as the graph retries the LLM, for ``espera_llm`` at most."""
    from grafo import Backoff
    from grafo.ejecucion import reintentar_llm

    return await reintentar_llm(llamada, Backoff(max_wait_s=espera_llm))


def agentes_de(settings: Any, model: Any) -> Any:
    """The loop's agents as the running configuration builds them (evaluator mode, signal,
    prompt files), over ``model``, counting each item's calls and tokens (``SensorCuentas``)."""
    from grafo import Agentes
    from stream.gobierno.clave import plantillas

    return Agentes(
        model,
        SensorCuentas(),
        rubrica=settings.evaluador,
        senal=settings.evaluador_senal,
        plantillas=plantillas(settings),
    )


async def correr_evaluador(
    settings: Any,
    casos: Sequence[Mapping[str, Any]],
    cache: Cache,
    concurrencia: int,
    espera_llm: float,
    omitir_vetadas: bool = False,
) -> list[dict[str, Any]]:
    """The evaluator on every candidate not yet in the cache; records in case order."""
    from grafo import build_chat_model, close_chat_model
    from stream.gobierno.clave import llm_settings

    items = items_evaluador(casos, omitir_vetadas)
    model = build_chat_model(llm_settings(settings))
    agentes = agentes_de(settings, model)

    async def trabajo(id_: str) -> dict[str, Any]:
        caso, candidata = items[id_]
        return await evaluar_candidata(agentes, caso, candidata, espera_llm)

    try:
        await _en_paralelo(list(items), trabajo, cache, concurrencia)
    finally:
        await close_chat_model(model)
    return [cache.hechos[i] for i in items]


# -- loop mode ---------------------------------------------------------------------------


def registro_bucle(
    caso: Mapping[str, Any], resultado: Resultado, cuenta: Cuenta, segundos: float
) -> dict[str, Any]:
    """What one event's loop did, with the checks against its reference."""
    salida = resultado.salida
    publicada = resultado.destino == DESTINO_PUBLICADAS
    ficha = salida.get("ficha") or {}
    origen = origen_de_caso(caso)
    requeridos = atributos_obligatorios(caso["evento"]["familia"])
    return {
        "id": caso["id"],
        "familia": caso["evento"]["familia"],
        "destino": resultado.destino,
        "publicada": publicada,
        "intento_publicada": salida.get("intentos") if publicada else None,
        "motivo": None if publicada else salida.get("motivo"),
        "intentos": [dataclasses.asdict(r) for r in resultado.resumen],
        "ficha": ficha,
        "defecto_mecanico": [f["criterio"] for f in fallos(comprobar(ficha, origen))]
        if publicada
        else [],
        "distinta_referencia": distintos_de_referencia(ficha, caso["referencia"], requeridos)
        if publicada
        else [],
        "inyeccion": texto_inyectado(ficha, caso.get("inyeccion", [])) if publicada else [],
        # published or not: did the generator carry the injected text into its last ficha?
        "inyeccion_en_ficha": texto_inyectado(ficha, caso.get("inyeccion", [])),
        # the evaluator's score of the last attempt, and the label it is measured against
        "puntuacion": resultado.resumen[-1].puntuacion if resultado.resumen else None,
        "ficha_conforme": conforme_a_referencia(caso, ficha) if ficha else None,
        "salida": salida,
        "segundos": round(segundos, 3),
        **dataclasses.asdict(cuenta),
    }


async def correr_bucle(
    settings: Any,
    casos: Sequence[Mapping[str, Any]],
    cache: Cache,
    concurrencia: int,
    espera_llm: float,
) -> list[dict[str, Any]]:
    """The whole loop on every event not yet in the cache; records in case order."""
    from esquemas import EventoCambio
    from grafo import Backoff
    from stream.gobierno.identidad import clave_servida
    from stream.gobierno.runtime import build_processor, puerta_sin_kafka

    por_id = {c["id"]: c for c in casos}
    politica = Backoff(max_wait_s=espera_llm)
    # The gate of FICHAS_PUERTA and FICHAS_PUERTA_ARCHIVO, as ``fichas procesar`` applies it,
    # under the key of the model the server serves (as the worker reads it).
    clave = await clave_servida(settings, politica)
    puerta = puerta_sin_kafka(settings, clave)
    async with build_processor(
        settings, clave, sensor=SensorCuentas(), policy=politica, puerta=puerta
    ) as proc:

        async def trabajo(id_: str) -> dict[str, Any]:
            caso = por_id[id_]
            cuenta = Cuenta()
            _CUENTA.set(cuenta)
            inicio = time.perf_counter()
            evento = EventoCambio.model_validate(caso["evento"])
            with sobre_evento(evento.sku, evento.event_id, evento.version):
                resultado = await proc.procesar(evento)
            return registro_bucle(caso, resultado, cuenta, time.perf_counter() - inicio)

        await _en_paralelo(list(por_id), trabajo, cache, concurrencia)
    return [cache.hechos[i] for i in por_id]
