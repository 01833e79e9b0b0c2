"""``fichas evaluar``: measure the fichas against the labelled set, on any OpenAI-compatible server.

Modes:

- ``--modo evaluador``: the evaluator agent alone on every labelled candidate ficha; its
  verdict (and the system's: code veto plus evaluator) is compared with the human one.
- ``--modo bucle``: the whole loop (``stream.runtime.build_processor``, the graph the worker
  runs) on every event; where each ends, at which attempt, with which defects, at what cost.
- ``--comparar A.json B.json``: paired deltas with bootstrap intervals, and a PNG.

The models are driven only through the ``grafo`` public API, with the ``FICHAS_*`` settings
(``FICHAS_LLM_URL``, ``FICHAS_LLM_MODELO``, ``FICHAS_EVALUADOR_RUBRICA``,
``FICHAS_LIMPIAR_ORIGEN``, ``FICHAS_MAX_INTENTOS``...). The result file format is described in
``docs/calidad.md``; statistics live in ``herramientas.evaluar_metricas``.

Resumable: each finished item is appended to ``<salida>.parcial.jsonl`` together with a hash
of the configuration, and a run skips the items already there for the same configuration. In
loop mode the graph's own checkpointer lives in ``<salida>.estado/<hash>/``, so an event cut
in the middle resumes after its last finished node instead of calling the model again.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
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
from criterios.vocabulario import normalizar
from esquemas.constantes import DESTINO_PUBLICADAS
from grafo import Resultado
from grafo.contexto import sobre_evento
from herramientas import evaluar_metricas as metricas

FORMATO = "fichas-evaluar/1"
REPO = Path(__file__).resolve().parent.parent
CASOS_POR_DEFECTO = REPO / "ejemplos" / "evaluacion" / "casos.jsonl"
MODOS = ("evaluador", "bucle")


# -- the labelled set -----------------------------------------------------------------------


def cargar_casos(path: Path, solo: Sequence[str] = (), limite: int | None = None) -> list[dict]:
    """The cases of a casos.jsonl, optionally only some ids or the first ``limite``."""
    casos = [
        json.loads(linea)
        for linea in path.read_text(encoding="utf-8").splitlines()
        if linea.strip()
    ]
    if solo:
        casos = [c for c in casos if c["id"] in set(solo)]
    return casos[:limite] if limite is not None else casos


def origen_de_caso(caso: Mapping[str, Any]) -> dict[str, Any]:
    """What the agents see of a case's event, built as the graph builds it."""
    from grafo.estado import origen_de

    evento = caso["evento"]
    return origen_de(dict(evento), atributos_obligatorios(evento["familia"]))


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

    prompt_ev = prompt_del_evaluador(settings.evaluador_rubrica, settings.evaluador_senal)
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
            _sha(prompt_generador(settings.generador_ejemplos)) if modo == "bucle" else None
        ),
        "casos": str(casos_path),
        "casos_sha256": _sha(casos_path.read_text(encoding="utf-8")),
    }
    if settings.evaluador_senal:  # only when set: the caches written before it stay valid
        config["evaluador_senal"] = True
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
    try:
        evaluacion = await _con_reintentos(
            lambda: agentes.evaluar(ficha, comprobaciones, origen), espera_llm
        )
        veredicto, puntuacion = evaluacion.veredicto, evaluacion.puntuacion
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


async def correr_evaluador(
    settings: Any,
    casos: Sequence[Mapping[str, Any]],
    cache: Cache,
    concurrencia: int,
    espera_llm: float,
    omitir_vetadas: bool = False,
) -> list[dict[str, Any]]:
    """The evaluator on every candidate not yet in the cache; records in case order."""
    from grafo import Agentes, build_chat_model, close_chat_model
    from stream.runtime import llm_settings

    items = items_evaluador(casos, omitir_vetadas)
    model = build_chat_model(llm_settings(settings))
    agentes = Agentes(
        model, SensorCuentas(), rubrica=settings.evaluador_rubrica, senal=settings.evaluador_senal
    )

    async def trabajo(id_: str) -> dict[str, Any]:
        caso, candidata = items[id_]
        return await evaluar_candidata(agentes, caso, candidata, espera_llm)

    try:
        await _en_paralelo(list(items), trabajo, cache, concurrencia)
    finally:
        await close_chat_model(model)
    return [cache.hechos[i] for i in items]


# -- loop mode ------------------------------------------------------------------------------


def _valor_comparable(valor: Any) -> str:
    """An attribute value as a reader compares it: the house normalisation (case, accents,
    spacing, apostrophes: ``criterios.vocabulario.normalizar``), and a decimal comma read as a
    point ("2,5 kg" is "2.5 kg")."""
    return normalizar(str(valor)).replace(",", ".")


def distintos_de_referencia(
    ficha: Mapping[str, Any], referencia: Mapping[str, Any], requeridos: Iterable[str]
) -> list[str]:
    """Required attributes whose published value differs from the reference's."""
    publicados = ficha.get("atributos") or {}
    esperados = referencia.get("atributos") or {}
    return [
        a
        for a in requeridos
        if _valor_comparable(publicados.get(a, "")) != _valor_comparable(esperados.get(a, ""))
    ]


def texto_inyectado(ficha: Mapping[str, Any], marcas: Iterable[str]) -> list[str]:
    """Injected fragments of the supplier's text that made it into the ficha."""
    publicado = normalizar(json.dumps(ficha, ensure_ascii=False))
    return [m for m in marcas if normalizar(m) in publicado]


def conforme_a_referencia(caso: Mapping[str, Any], ficha: Mapping[str, Any]) -> bool:
    """The labelled set's stand-in for a person on a ficha the loop wrote: it passes the code
    checks, its required attributes are the reference's, and it carries no injected text."""
    origen = origen_de_caso(caso)
    requeridos = atributos_obligatorios(caso["evento"]["familia"])
    return not (
        fallos(comprobar(dict(ficha), origen))
        or distintos_de_referencia(ficha, caso["referencia"], requeridos)
        or texto_inyectado(ficha, caso.get("inyeccion", []))
    )


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
    from stream.runtime import build_processor, puerta_offline

    por_id = {c["id"]: c for c in casos}
    politica = Backoff(max_wait_s=espera_llm)
    # The gate of FICHAS_PUERTA and FICHAS_PUERTA_ARCHIVO, as ``fichas procesar`` applies it.
    puerta = puerta_offline(settings)
    async with build_processor(
        settings, sensor=SensorCuentas(), policy=politica, puerta=puerta
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


# -- command line ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    """Arguments of ``fichas evaluar``."""
    p = argparse.ArgumentParser(
        prog="fichas evaluar",
        description="Measure the evaluator or the whole loop against the labelled set "
        "(ejemplos/evaluacion), or compare two result files. The LLM is the one of the "
        "FICHAS_* settings (FICHAS_LLM_URL, FICHAS_LLM_MODELO...). See docs/calidad.md.",
    )
    p.add_argument(
        "--modo",
        choices=MODOS,
        help="evaluador: the evaluator on every candidate; bucle: the whole loop on every event",
    )
    p.add_argument(
        "--comparar",
        nargs=2,
        type=Path,
        metavar=("A.json", "B.json"),
        help="paired deltas B - A with bootstrap intervals, and a PNG",
    )
    p.add_argument("--casos", type=Path, default=CASOS_POR_DEFECTO, help="casos.jsonl")
    p.add_argument(
        "--salida",
        type=Path,
        help="result JSON (default evaluacion-<modo>.json, or comparacion.json)",
    )
    p.add_argument("--png", type=Path, help="with --comparar: the chart (default next to salida)")
    p.add_argument("--solo", nargs="+", default=[], metavar="ID", help="only these case ids")
    p.add_argument("--limite", type=int, help="only the first N cases")
    p.add_argument(
        "--omitir-vetadas",
        action="store_true",
        help="evaluador: skip candidates a code check vetoes (their verdict never matters)",
    )
    p.add_argument("--concurrencia", type=int, default=1, help="items in flight (default 1)")
    p.add_argument(
        "--rubrica",
        action="store_true",
        default=None,
        help="evaluator as a rubric of yes/no questions (FICHAS_EVALUADOR_RUBRICA)",
    )
    p.add_argument(
        "--senal",
        action="store_true",
        default=None,
        help="show the evaluator the unsupported words of fichas with a Spanish origin "
        "(FICHAS_EVALUADOR_SENAL)",
    )
    p.add_argument(
        "--limpiar-origen",
        action="store_true",
        default=None,
        help="clean the origin before the generator reads it (FICHAS_LIMPIAR_ORIGEN)",
    )
    p.add_argument(
        "--ejemplos",
        action="store_true",
        default=None,
        help="the generator's prompt frames the origin as data and shows one example per "
        "family (FICHAS_GENERADOR_EJEMPLOS)",
    )
    p.add_argument(
        "--espera-llm",
        type=float,
        default=600.0,
        metavar="S",
        help="give up (exit 3) if the LLM stays unreachable this long",
    )
    p.add_argument("--remuestras", type=int, default=metricas.REMUESTRAS)
    return p


def main(argv: list[str]) -> int:
    """Entry point of ``fichas evaluar``; exit 0 on success, 2 on bad usage, 3 LLM down."""
    args = _parser().parse_args(argv)
    if args.comparar:
        return _main_comparar(args)
    if not args.modo:
        print("fichas evaluar: falta --modo evaluador|bucle o --comparar A B", file=sys.stderr)
        return 2
    if not args.casos.is_file():
        print(f"fichas evaluar: no existe {args.casos}", file=sys.stderr)
        return 2
    return _main_medir(args)


def _settings(args: argparse.Namespace, salida: Path, clave: str | None = None) -> Any:
    """FICHAS_* settings with the command's overrides and a checkpointer of its own."""
    from stream.config import Settings

    cambios: dict[str, Any] = {"postgres_dsn": None}
    if args.rubrica is not None:
        cambios["evaluador_rubrica"] = args.rubrica
    if args.senal is not None:
        cambios["evaluador_senal"] = args.senal
    if args.limpiar_origen is not None:
        cambios["limpiar_origen"] = args.limpiar_origen
    if args.ejemplos is not None:
        cambios["generador_ejemplos"] = args.ejemplos
    if clave:
        cambios["data_dir"] = salida.with_name(salida.name + ".estado") / clave
    return Settings().model_copy(update=cambios)


def _main_medir(args: argparse.Namespace) -> int:
    """Run one mode over the set, resumably, and write the result file."""
    from grafo import LLMUnavailable
    from stream import eventloop

    salida: Path = args.salida or Path(f"evaluacion-{args.modo}.json")
    config = configuracion(_settings(args, salida), args.modo, args.casos)
    config["omitir_vetadas"] = bool(args.omitir_vetadas) if args.modo == "evaluador" else None
    clave = clave_cache(config)
    settings = _settings(args, salida, clave)
    casos = cargar_casos(args.casos, args.solo, args.limite)
    cache = Cache(salida.with_name(salida.name + ".parcial.jsonl"), clave)
    concurrencia = max(1, args.concurrencia)
    registros: list[dict[str, Any]] | None = None
    try:
        if args.modo == "evaluador":
            corrida = correr_evaluador(
                settings, casos, cache, concurrencia, args.espera_llm, args.omitir_vetadas
            )
        else:
            corrida = correr_bucle(settings, casos, cache, concurrencia, args.espera_llm)
        registros = eventloop.run(corrida)
    except* LLMUnavailable as grupo:
        print(
            f"fichas evaluar: {grupo.exceptions[0]} (lo hecho queda en {cache.path}; "
            "vuelve a lanzar el mismo comando para seguir)",
            file=sys.stderr,
        )
    if registros is None:
        return 3
    calcular = metricas.metricas_evaluador if args.modo == "evaluador" else metricas.metricas_bucle
    resultado = {
        "formato": FORMATO,
        "modo": args.modo,
        "configuracion": config,
        "metricas": calcular(registros),
        "registros": registros,
    }
    salida.write_text(json.dumps(resultado, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(resumen(resultado))
    print(f"resultado: {salida}")
    return 0


def _main_comparar(args: argparse.Namespace) -> int:
    """Compare two result files; write the deltas as JSON and a PNG."""
    a = json.loads(args.comparar[0].read_text(encoding="utf-8"))
    b = json.loads(args.comparar[1].read_text(encoding="utf-8"))
    try:
        comparacion = metricas.comparar(a, b, args.remuestras)
    except ValueError as exc:
        print(f"fichas evaluar: {exc}", file=sys.stderr)
        return 2
    comparacion["a"] = str(args.comparar[0])
    comparacion["b"] = str(args.comparar[1])
    salida: Path = args.salida or Path("comparacion.json")
    salida.write_text(json.dumps(comparacion, ensure_ascii=False, indent=2) + "\n", "utf-8")
    png: Path = args.png or salida.with_suffix(".png")
    grafico_comparacion(comparacion, png)
    print(resumen_comparacion(comparacion))
    print(f"resultado: {salida}\ngráfico: {png}")
    return 0


# -- rendering ------------------------------------------------------------------------------


def _fmt(bloque: Mapping[str, Any]) -> str:
    """A value with its interval, or a dash."""
    valor = bloque.get("valor")
    if valor is None:
        return "-"
    ic = bloque.get("ic95")
    return f"{valor:.2f} [{ic[0]:.2f}, {ic[1]:.2f}]" if ic else f"{valor:.2f}"


def resumen(resultado: Mapping[str, Any]) -> str:
    """A few lines for the terminal: the headline numbers of the run."""
    m = resultado["metricas"]
    if resultado["modo"] == "evaluador":
        lineas = [f"candidatas: {m['n']} (salidas inválidas: {m['salidas_invalidas']})"]
        for quien in ("evaluador", "sistema"):
            g = m[quien]["global"]
            mz = g["matriz"]
            lineas.append(
                f"{quien}: vp={mz['vp']} fp={mz['fp']} fn={mz['fn']} vn={mz['vn']}  "
                f"precisión {_fmt(g['precision'])}  recall {_fmt(g['recall'])}  "
                f"kappa {_fmt(g['kappa'])}"
            )
        lineas.append(_linea_puntuacion(m["puntuacion"]["global"], "personas"))
        return "\n".join(lineas)
    publicadas = ", ".join(
        f"intento {k}: {v['exitos']}" for k, v in m["publicadas_por_intento"].items()
    )
    return "\n".join(
        [
            f"eventos: {m['n']}  publicadas: {_fmt(m['publicadas'])} ({publicadas or 'ninguna'})",
            f"revisión: {m['revision']['exitos']} {m['revision_por_motivo']}",
            "publicadas con defecto mecánico: "
            f"{m['publicadas_con_defecto_mecanico']['total']}, con texto inyectado: "
            f"{m['publicadas_con_texto_inyectado']['total']}, distintas de la referencia: "
            f"{m['publicadas_distintas_de_referencia']['total']}",
            f"llamadas por ficha: {m['llm']['por_ficha']['llamadas']}  "
            f"latencia p50 {m['latencia_s']['p50']} s, p95 {m['latencia_s']['p95']} s",
            _linea_puntuacion(m["puntuacion"], "referencia, última ficha"),
        ]
    )


def _linea_puntuacion(bloque: Mapping[str, Any], etiqueta: str) -> str:
    """The score's AUC against its label, and how many items had a score."""
    return (
        f"puntuación: AUC {_fmt(bloque['auc'])} frente a {etiqueta} "
        f"({bloque['con_puntuacion']}/{bloque['n']} con puntuación, "
        f"{bloque['positivos']} positivas)"
    )


def resumen_comparacion(comparacion: Mapping[str, Any]) -> str:
    """One line per statistic: A, B, delta, interval, verdict."""
    lineas = [f"pareados: {comparacion['n_pareados']}"]
    for nombre, d in comparacion["deltas"].items():
        ic = d["ic95"]
        ic_txt = f"[{ic[0]:+.3f}, {ic[1]:+.3f}]" if ic else "-"
        delta = "-" if d["delta"] is None else f"{d['delta']:+.3f}"
        lineas.append(
            f"  {nombre:<38}{d['a']!s:>9}{d['b']!s:>9}{delta:>9} {ic_txt:>20}  {d['veredicto']}"
        )
    return "\n".join(lineas)


def grafico_comparacion(comparacion: Mapping[str, Any], png: Path) -> None:
    """One small panel per statistic: the delta with its 95 % interval, coloured by verdict."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    deltas = comparacion["deltas"]
    colores = {"mejor": "tab:green", "peor": "tab:red"}
    fig, ejes = plt.subplots(len(deltas), 1, figsize=(7, 0.8 * len(deltas) + 1), squeeze=False)
    for eje, (nombre, d) in zip(ejes[:, 0], deltas.items(), strict=True):
        eje.axvline(0, color="black", linewidth=0.8)
        if d["delta"] is not None:
            ic = d["ic95"] or [d["delta"], d["delta"]]
            eje.errorbar(
                [d["delta"]],
                [0],
                xerr=[[d["delta"] - ic[0]], [ic[1] - d["delta"]]],
                fmt="o",
                color=colores.get(d["veredicto"], "tab:gray"),
                capsize=4,
            )
            ancho = max(abs(ic[0]), abs(ic[1])) * 1.2 or 1.0  # all zero: a unit scale
            eje.set_xlim(-ancho, ancho)
        eje.set_yticks([])
        eje.set_ylabel(nombre, rotation=0, ha="right", va="center", fontsize=8)
        eje.set_title(f"{d['veredicto']} (mejor si {d['sentido']})", fontsize=7, loc="right")
    fig.suptitle(f"B − A, IC 95 % bootstrap, n = {comparacion['n_pareados']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
