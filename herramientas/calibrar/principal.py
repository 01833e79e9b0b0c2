"""``fichas calibrar``: certify the publication gate's threshold against people's labels.

Reads scored candidates that people labelled (``fichas evaluar --modo evaluador`` result files;
people's decisions on ``fichas.decisiones`` with their v1.3 evidence, ``--desde-decisiones``;
the stored shadow-mode histories replayed under the running evaluator, ``--recalificar``, each
run counted in the reviewer store), certifies a threshold per family and pooled (``*``) with the
fixed-n Learn-then-Test of ``puerta.certificacion``, decides which families the pooled
certification covers (``cubrir_por_lote``: since v1.5 the pooled record alone publishes no
family, so each covered family gets its covered record beside it), and writes the states to a
JSON audit file (``--salida``) and, only when asked, to ``fichas.puerta`` (``--publicar``;
``--dry-run`` prints them). The tool for offline data and audits: production gates are opened by
the reviewer app's certifier. Invariants: only the certified key's evidence counts, every
candidate left out is counted and printed; calibrate only on data no gate selected (the labelled
set, shadow mode, the random sample). Exit 0 done (a gate that does not certify is a result); 2
bad usage, unreadable input, or --recalificar refused; 3 the LLM did not answer; 4 Kafka
unreachable. Why, and the selection-bias trap: docs/puerta.md, "fichas calibrar".
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import json
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from esquemas.constantes import (
    ABIERTA_POR_CALIBRAR,
    DECISION_OBSOLETA,
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_COTA_BAJA,
    MOTIVO_PUERTA_CUBIERTA,
    OBJETIVO_PUERTA,
    ORIGEN_LTT_CONJUNTO,
    ORIGEN_LTT_DECISIONES,
    ORIGEN_LTT_RECALIFICADO,
    TIPO_MUESTRA,
    TIPO_REVISION,
)
from esquemas.decode import Decoded, decode
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from esquemas.salidas import DecisionRevision
from herramientas.calibrar import recalificar
from herramientas.calibrar.recalificar import ETIQUETAS
from puerta import auditoria
from puerta.certificacion import (
    Candidata,
    Certificacion,
    CoberturaLote,
    certificar,
    certificar_por_familia,
    cubrir_por_lote,
    estado_cubierto_lote,
    estado_puerta,
    minimo_aprobaciones,
)

EXIT_USAGE = 2
EXIT_LLM_UNAVAILABLE = 3
EXIT_BROKER_UNREACHABLE = 4
FORMATO_EVALUAR = "fichas-evaluar/1"
BUENAS = {d for d, buena in ETIQUETAS.items() if buena}
MALAS = {d for d, buena in ETIQUETAS.items() if not buena}

AYUDA = """\
Certify the publication gate's threshold against people (docs/puerta.md).

From scored, people-labelled candidates it picks the most lenient evaluator score λ at which
the precision of automatic approvals is certified >= --objetivo with risk --delta (Learn then
Test, fixed-sequence testing). One gate per family whose own data certify, plus the pooled
gate '*', which publishes a family only where the batch covers it (enough approvals of its own
at the pooled threshold, none showing its precision below the objective): that family gets a
covered record beside it. Too few labels: the gate stays closed (exit 0, with the reason).

SELECTION BIAS: calibrate only on unbiased data: `fichas evaluar --modo evaluador` on the
labelled set, decisions taken in shadow mode (gate closed: every ficha goes to review with its
score), and the random sample of published fichas. NEVER on the review queue alone while a gate
is open: the queue then holds only what the gate held back, so the data say nothing about the
fichas the gate lets through.

For offline data and audits: in production the reviewer app's certifier opens gates.
--recalificar: a new evaluator (prompt, rubric, signal) certified on people's old labels.
The loop retries a ficha its judge rejects, so each labelled ficha's whole history is replayed
under the running FICHAS_* judge, and only the fichas the new loop would end on, from the same
inputs, count (the rest is counted by reason). Sources: the stored decided fichas
(--desde-almacen), and the labelled set (--casos: hand-written, no history; only with
FICHAS_MAX_INTENTOS=1). Refused when the generator (model, generator prompt, criteria) changed,
or when nothing is kept because the loop can retry: new fichas need new labels (shadow mode).
Every run, --dry-run included, is recorded in the reviewer store: the summary, the audit file
and the Puertas page say how many evaluator variants were tried on the same labels.

Exit 0 done (gate open or closed); 2 bad usage, unreadable input or refused; 3 LLM down;
4 Kafka unreachable."""


class Entrada(Exception):
    """Input that cannot be used: unreadable, not the expected format, or inconsistent."""


@dataclass
class Datos:
    """Labelled candidates gathered from every source, and what they came from."""

    candidatas: list[Candidata] = field(default_factory=list)
    origen: dict[str, Any] = field(default_factory=dict)
    avisos: list[str] = field(default_factory=list)
    claves: list[ClavePuerta] = field(default_factory=list)  # keys the files were measured with
    metodos: list[str] = field(default_factory=list)  # ORIGEN_*: how each source was certified


# -- fichas evaluar files ---------------------------------------------------------------------


def _puntuacion(registro: Mapping[str, Any]) -> float | None:
    """The candidate's score, at the top of the record or inside ``evaluador``."""
    if "puntuacion" in registro:
        valor = registro["puntuacion"]
    else:
        valor = (registro.get("evaluador") or {}).get("puntuacion")
    if valor is None:
        return None
    if isinstance(valor, bool) or not isinstance(valor, int | float) or not 0 <= valor <= 1:
        raise Entrada(f"candidate {registro.get('id')}: puntuacion {valor!r} is not in [0, 1]")
    return float(valor)


def _tiene_puntuacion(registro: Mapping[str, Any]) -> bool:
    """Whether the record was written by a version of ``fichas evaluar`` that scores."""
    return "puntuacion" in registro or "puntuacion" in (registro.get("evaluador") or {})


def candidata_de_registro(registro: Mapping[str, Any]) -> Candidata:
    """One evaluator-mode record as a candidate: vetoed or invalid ones are never approved."""
    try:
        humana = bool(registro["humano"]["aprobada"])
        familia = str(registro["familia"])
    except (KeyError, TypeError) as exc:
        raise Entrada(f"candidate {registro.get('id')}: missing {exc}") from exc
    puntuacion = _puntuacion(registro)
    if registro.get("codigo") or registro.get("invalida"):
        puntuacion = None
    return Candidata(puntuacion, humana, familia, str(registro.get("caso") or registro.get("id")))


def clave_de_configuracion(config: Mapping[str, Any]) -> ClavePuerta:
    """The gate key a ``fichas evaluar`` run was measured with, from its ``configuracion``."""
    try:
        return ClavePuerta(
            modelo=config["modelo"],
            prompt_evaluador_sha256=config["prompt_evaluador_sha256"],
            criterios_version=config["criterios_version"],
            modo_evaluador=config.get("evaluador")
            or ("rubrica" if config.get("evaluador_rubrica") else "veredicto"),
        )
    except (KeyError, ValueError) as exc:
        raise Entrada(f"configuracion without the gate key's fields ({exc})") from exc


def leer_evaluar(path: Path, datos: Datos) -> None:
    """Add the candidates of one evaluator-mode result file."""
    try:
        crudo = path.read_bytes()
        doc = json.loads(crudo)
    except (OSError, ValueError) as exc:
        raise Entrada(f"{path}: cannot read it as JSON ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("formato") != FORMATO_EVALUAR:
        raise Entrada(f"{path}: not a `fichas evaluar` result ({FORMATO_EVALUAR})")
    if doc.get("modo") != "evaluador":
        raise Entrada(f"{path}: mode {doc.get('modo')!r}; calibration needs --modo evaluador")
    registros = doc.get("registros") or []
    if registros and not any(_tiene_puntuacion(r) for r in registros):
        raise Entrada(
            f"{path}: no record has a `puntuacion`: run `fichas evaluar --modo evaluador` "
            "with a version that records the evaluator's score"
        )
    nuevas = [candidata_de_registro(r) for r in registros]
    datos.candidatas += nuevas
    datos.claves.append(clave_de_configuracion(doc.get("configuracion") or {}))
    datos.metodos.append(ORIGEN_LTT_CONJUNTO)
    datos.origen.setdefault("ficheros", []).append(
        {
            "ruta": str(path),
            "sha256": hashlib.sha256(crudo).hexdigest(),
            "candidatas": len(nuevas),
            "casos_sha256": (doc.get("configuracion") or {}).get("casos_sha256"),
        }
    )


# -- decisions on Kafka: keyed evidence ---------------------------------------------------

AVISO_SESGO = (
    "selection bias: some decisions are on the sample of fichas a gate published, so the "
    "review-queue decisions of this key hold only what that gate held back; calibrate on "
    "shadow-mode decisions and the random sample (docs/puerta.md)"
)

# Why a decision is left out of a certification; every count is printed and kept in the audit.
FUERA = {
    "otra_clave": "evidence of another key (another loop's fichas never count for this one)",
    "sin_evidencia": "no evidence: the decided ficha carried no score",
    "anterior_v1_3": "written before v1.3 (no evidence; its ficha carries no key, so it can "
    "never count for a v1.3 key)",
    "obsoletas": "obsolete (closed by a newer version: nobody judged the ficha)",
    "desconocidas": "a value this version does not know (a later contract's decision kind, "
    "tipo or key): not a label it can read",
    "invalidas": "not a DecisionRevision",
}

# What of a decision a certification reads: a value this version does not know in one of them
# (a later decision kind, tipo, or a key with a field it does not know) makes it no label.
LEIDOS = ("decision", "tipo", "evidencia")


def seleccionar_evidencia(
    decisiones: Sequence[Mapping[str, Any]], clave: ClavePuerta
) -> tuple[list[Candidata], dict[str, Any], list[str]]:
    """The candidates ``clave``'s decisions prove, each on its own evidence; no join.

    Pure. A v1.3 decision carries its ``evidencia`` (family, key, the decided attempt's score,
    whether its code checks passed): only decisions of ``clave`` count, so evidence from
    another configuration of the loop is never pooled. The newest decision per event wins.
    Returns the candidates, the counts (``usadas`` and one per reason in ``FUERA``, with the
    other keys seen) and warnings. Nothing is left out silently: the caller prints the counts.

    Decisions written before v1.3 are left out, not joined with ``fichas.revision_manual`` as
    before: their fichas carry no key (no ``prompt_generador_sha256``), which never equals a
    running v1.3 key, so they could only certify a gate no v1.3 worker applies; and the join
    depended on a topic kept 30 days, so evidence expired without a word. Each decision is read
    through the contract's decode (``esquemas.decode``): a later version's fields are ignored,
    and one whose ``LEIDOS`` hold a value this version does not know is ``desconocidas``.
    """
    ultima: dict[str, tuple[Mapping[str, Any], Decoded[DecisionRevision]]] = {}
    cuentas: dict[str, Any] = {"decisiones": 0, "usadas": 0, **dict.fromkeys(FUERA, 0)}
    for d in decisiones:
        try:
            leida = decode(DecisionRevision, d)
        except ValidationError:
            cuentas["invalidas"] += 1
            continue
        ultima[leida.value.event_id] = (d, leida)
    cuentas["decisiones"] = len(ultima) + cuentas["invalidas"]
    otras: dict[str, int] = {}
    candidatas: list[Candidata] = []
    tipos: set[str] = set()
    for event_id, (d, leida) in ultima.items():
        decision = leida.value
        if not all(map(leida.understood, LEIDOS)):
            cuentas["desconocidas"] += 1
        elif decision.decision == DECISION_OBSOLETA or decision.decision not in BUENAS | MALAS:
            cuentas["obsoletas"] += 1
        elif "evidencia" not in d:
            cuentas["anterior_v1_3"] += 1
        elif decision.evidencia is None:
            cuentas["sin_evidencia"] += 1
        elif decision.evidencia.clave != clave:
            cuentas["otra_clave"] += 1
            texto = decision.evidencia.clave.texto()
            otras[texto] = otras.get(texto, 0) + 1
        else:
            ev = decision.evidencia
            puntuacion = ev.puntuacion if ev.codigo_ok else None  # a code veto never approves
            buena = decision.decision in BUENAS
            candidatas.append(Candidata(puntuacion, buena, ev.familia, event_id))
            cuentas["usadas"] += 1
            tipos.add(decision.tipo)
    cuentas["otras_claves"] = otras
    avisos = [AVISO_SESGO] if {TIPO_MUESTRA, TIPO_REVISION} <= tipos else []
    return candidatas, cuentas, avisos


def leer_decisiones(bootstrap: str, settings: Any, clave: ClavePuerta, datos: Datos) -> None:
    """Add the candidates of ``clave``'s decisions on ``fichas.decisiones``."""
    from infra.kafka.read import read_to_end

    topic = settings.topic_decisiones
    en_kafka = con_brokers(settings, bootstrap)
    registros, faltan = asyncio.run(read_to_end(en_kafka, [topic], client_id="fichas-calibrar"))
    if faltan:
        raise Entrada(f"topic {topic} does not exist on {bootstrap} (FICHAS_TOPIC_DECISIONES)")
    valores = [v for v in map(_json, registros) if v is not None]
    candidatas, cuentas, avisos = seleccionar_evidencia(valores, clave)
    cuentas["invalidas"] += len(registros) - len(valores)
    cuentas["decisiones"] += len(registros) - len(valores)
    datos.candidatas += candidatas
    datos.avisos += avisos
    datos.metodos.append(ORIGEN_LTT_DECISIONES)
    datos.origen["decisiones"] = {"kafka": bootstrap, "topic": topic, **cuentas}


def _json(registro: Any) -> dict[str, Any] | None:
    """A record's value as a JSON object, or None when it is not one (counted as invalid)."""
    try:
        valor = json.loads(registro.value) if registro.value is not None else None
    except ValueError:
        return None
    return valor if isinstance(valor, dict) else None


# -- the key ----------------------------------------------------------------------------------


def clave_desde_config(settings: Any, espera_llm: float) -> ClavePuerta:
    """The running configuration's key, exactly as the worker computes it: the served model's
    identity is asked of the LLM server (``grafo.LLMUnavailable`` when it stays down)."""
    from grafo import Backoff
    from stream.gobierno.identidad import clave_servida

    return asyncio.run(clave_servida(settings, Backoff(max_wait_s=espera_llm)))


def elegir_clave(args: argparse.Namespace, settings: Any, datos: Datos) -> ClavePuerta:
    """The key to certify for: from the options, the configuration, or the files' own key.

    Result files record the evaluator side of the key they were measured with (modelo, evaluator
    prompt, criteria version, mode): a key given by hand must match it, because a threshold
    certified on one evaluator says nothing about another. They record no generator side (the
    labelled candidates were not written by the loop): that comes from the configuration
    (``--clave-desde-config``) or ``--prompt-generador-sha``.
    """
    campos = (args.modelo, args.prompt_sha, args.criterios_version, args.modo_evaluador)
    if args.clave_desde_config or args.recalificar:
        clave = clave_desde_config(settings, args.espera_llm)
    elif all(campos):
        clave = ClavePuerta(
            modelo=args.modelo,
            prompt_evaluador_sha256=args.prompt_sha,
            criterios_version=args.criterios_version,
            modo_evaluador=args.modo_evaluador,
            prompt_generador_sha256=args.prompt_generador_sha,
        )
    elif any(campos):
        raise Entrada(
            "give all four of --modelo, --prompt-sha, --criterios-version, --modo-evaluador"
        )
    elif datos.claves:
        clave = datos.claves[0].model_copy(
            update={"prompt_generador_sha256": args.prompt_generador_sha}
        )
    else:
        raise Entrada(
            "no gate key: give --modelo, --prompt-sha, --criterios-version and "
            "--modo-evaluador, or --clave-desde-config"
        )
    distintas = [c for c in datos.claves if c != _lado_evaluador(clave)]
    if distintas:
        raise Entrada(
            f"the result files were measured with another evaluator key ({distintas[0]!r}) "
            f"than the one to certify ({_lado_evaluador(clave)!r})"
        )
    return clave


def _lado_evaluador(clave: ClavePuerta) -> ClavePuerta:
    """The key's four evaluator fields alone: what an evaluator-mode result file records (the
    generator side and the v1.5 served model and settings are the running configuration's)."""
    return clave.model_copy(
        update={
            "prompt_generador_sha256": None,
            "modelo_servido": None,
            "muestreo_generador": None,
            "muestreo_evaluador": None,
        }
    )


# -- re-scoring (--recalificar) ---------------------------------------------------------------


def leer_recalificadas(
    args: argparse.Namespace, settings: Any, clave: ClavePuerta, datos: Datos
) -> None:
    """Add the stored decided fichas and/or the labelled set whose history the running
    evaluator's loop would end on, scored by it (``recalificar.SinPoblacion`` when nothing is
    kept because the loop can retry)."""
    lotes = []
    if args.casos is not None:
        from herramientas.evaluar.casos import CASOS_POR_DEFECTO

        ruta = Path(args.casos or CASOS_POR_DEFECTO)
        lotes.append(recalificar.lote_del_conjunto(ruta, settings.max_intentos))
    if args.desde_almacen:
        from infra import eventloop

        cerrados = eventloop.run(recalificar.leer_almacen(settings))
        fuente = "almacen " + ("postgres" if settings.postgres_dsn else str(settings.data_dir))
        lotes.append(recalificar.lote_del_almacen(cerrados, clave, fuente))
    base = args.salida or Path("calibrar")
    cache = base.with_name(base.name + ".recalificar.parcial.jsonl")
    fuentes = datos.origen.setdefault("recalificado", [])
    for lote in lotes:
        registros = recalificar.recalificar(
            settings, lote, clave, cache, args.concurrencia, args.espera_llm
        )
        nuevas = [candidata_de_registro(r) for r in registros]
        datos.candidatas += nuevas
        fuentes.append(
            {
                "fuente": lote.fuente,
                "etiquetas": lote.etiquetas,
                "candidatas": len(nuevas),
                "cache": str(cache),
                **lote.fuera,
            }
        )
        if {TIPO_MUESTRA, TIPO_REVISION} <= lote.tipos:
            datos.avisos.append(AVISO_SESGO)
    porque = recalificar.sin_poblacion(fuentes, settings.max_intentos)
    if porque is not None:
        raise recalificar.SinPoblacion(porque)
    datos.metodos.append(ORIGEN_LTT_RECALIFICADO)


def registrar_variante(
    args: argparse.Namespace,
    settings: Any,
    clave: ClavePuerta,
    datos: Datos,
    conjunta: Certificacion,
    ahora: datetime,
) -> None:
    """Record this run in the reviewer store (published or not: a try is a try) and keep in
    ``datos.origen["variantes"]`` how many evaluator variants were tried on the same labels,
    with the union bound on the chance that one passed by luck (docs/puerta.md, "Re-scoring")."""
    import uuid

    from infra import eventloop
    from revision.almacen.recalificaciones import Corrida

    fuentes = datos.origen.get("recalificado", [])
    no_cuentas = {"fuente", "etiquetas", "candidatas", "cache"}
    descartadas: dict[str, int] = {}
    for fuente in fuentes:
        for motivo, n in fuente.items():
            if motivo not in no_cuentas and n:
                descartadas[motivo] = descartadas.get(motivo, 0) + n
    corrida = Corrida(
        corrida=uuid.uuid4().hex,
        etiquetas=tuple(f["etiquetas"] for f in fuentes),
        clave=clave,
        hecha_en=ahora.timestamp(),
        conservadas=sum(f["candidatas"] for f in fuentes),
        descartadas=descartadas,
        resultado=conjunta.motivo,
        publicar=bool(args.publicar and not args.dry_run),
        delta=args.delta,
    )
    variantes = eventloop.run(recalificar.registrar_corrida(settings, corrida))
    datos.origen["variantes"] = {
        "etiquetas": list(variantes.etiquetas),
        "variantes": variantes.n,
        "claves": list(variantes.claves),
        "corridas": variantes.corridas,
        "delta": args.delta,
        "azar": variantes.azar,
    }


# -- command line -----------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    """Arguments of ``fichas calibrar``."""
    p = argparse.ArgumentParser(
        prog="fichas calibrar",
        description=AYUDA,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "entradas",
        nargs="*",
        type=Path,
        metavar="EVALUACION.json",
        help="`fichas evaluar --modo evaluador` result files (with puntuacion per candidate)",
    )
    p.add_argument(
        "--desde-decisiones",
        action="store_true",
        help="also read people's decisions (FICHAS_TOPIC_DECISIONES), each with its own "
        "evidence (v1.3); only the certified key's count; needs --kafka",
    )
    p.add_argument("--kafka", metavar="BOOTSTRAP", help="brokers to read the decisions from")
    p.add_argument(
        "--recalificar",
        action="store_true",
        help="replay people-labelled fichas' histories under the RUNNING evaluator (FICHAS_* "
        "settings) and certify the running key on (new score, old label) of those the new loop "
        "would end on; needs --desde-almacen and/or --casos and the reviewer store (every run is "
        "counted there); refused when the generator side of the key changed or nothing is kept",
    )
    p.add_argument(
        "--desde-almacen",
        action="store_true",
        help="with --recalificar: the decided fichas in the reviewer app's store "
        "(FICHAS_POSTGRES_DSN, or FICHAS_DATA_DIR's SQLite)",
    )
    p.add_argument(
        "--casos",
        nargs="?",
        const="",  # the default set, resolved when used (herramientas.evaluar.principal is heavy)
        metavar="CASOS.jsonl",
        help="with --recalificar: the labelled set (default ejemplos/evaluacion/casos.jsonl)",
    )
    p.add_argument("--concurrencia", type=int, default=1, help="re-scoring: parallel LLM calls")
    p.add_argument(
        "--espera-llm",
        type=float,
        default=300.0,
        help="re-scoring and --clave-desde-config (which asks the server which model it "
        "serves): seconds to keep retrying an LLM that does not answer (300)",
    )
    p.add_argument("--objetivo", type=float, default=OBJETIVO_PUERTA, help="precision (0.9)")
    p.add_argument("--delta", type=float, default=DELTA_PUERTA, help="risk (0.05)")
    p.add_argument("--modelo", help="gate key: the model name")
    p.add_argument("--prompt-sha", help="gate key: sha256 of the evaluator's system prompt")
    p.add_argument("--criterios-version", help="gate key: the criteria version")
    p.add_argument(
        "--modo-evaluador",
        choices=("veredicto", "rubrica", "citas", "lector"),
        help="gate key: evaluator mode",
    )
    p.add_argument(
        "--prompt-generador-sha",
        help="gate key: the generator side (grafo.fuente_puerta.configuracion_generador's sha256); "
        "without it a key given by hand or read from result files applies to no v1.3 worker",
    )
    p.add_argument(
        "--clave-desde-config",
        action="store_true",
        help="gate key of the running FICHAS_* configuration, as the worker computes it (the "
        "served model's identity is read from the LLM server's /v1/models: it must answer)",
    )
    p.add_argument("--salida", type=Path, help="write the JSON audit file here")
    p.add_argument(
        "--publicar", metavar="BOOTSTRAP", help="write the gate states to FICHAS_TOPIC_PUERTA"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="compute and print the states; write no audit file and nothing to the topic (a "
        "--recalificar run is still counted in the reviewer store: a try is a try)",
    )
    return p


def _error(mensaje: str) -> int:
    """One line on stderr, exit 2."""
    print(f"fichas calibrar: {mensaje}", file=sys.stderr)
    return EXIT_USAGE


def _uso(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, or None."""
    if not 0 < args.objetivo < 1 or not 0 < args.delta < 1:
        return "--objetivo and --delta must be in (0, 1)"
    if args.recalificar:
        if args.entradas or args.desde_decisiones:
            return (
                "--recalificar certifies the running key on fichas it re-scores itself; it "
                "takes no result files nor --desde-decisiones (their scores are another key's)"
            )
        if not args.desde_almacen and args.casos is None:
            return "--recalificar needs --desde-almacen and/or --casos"
        if any((args.modelo, args.prompt_sha, args.criterios_version, args.modo_evaluador)):
            return "--recalificar certifies the running key: give no key options"
        return None
    if args.desde_almacen or args.casos is not None:
        return "--desde-almacen and --casos go with --recalificar"
    if not args.entradas and not args.desde_decisiones:
        return "nothing to calibrate on: give result files, --desde-decisiones or --recalificar"
    if args.desde_decisiones and not args.kafka:
        return "--desde-decisiones needs --kafka BOOTSTRAP"
    return None


def main(argv: list[str]) -> int:
    """Entry point of ``fichas calibrar``."""
    args = _parser().parse_args(argv)
    problema = _uso(args)
    if problema:
        return _error(problema)
    from grafo import LLMUnavailable
    from infra.config import ConfigError, load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        return _error("; ".join(exc.lines))
    datos = Datos()
    try:
        for entrada in args.entradas:
            leer_evaluar(entrada, datos)
        if args.recalificar:  # the labels, and where every variant tried is counted
            recalificar.comprobar_almacen(settings)
        clave = elegir_clave(args, settings, datos)
        if args.desde_decisiones:
            leer_decisiones(args.kafka, settings, clave, datos)
        if args.recalificar:
            leer_recalificadas(args, settings, clave, datos)
    except (Entrada, ValueError) as exc:
        return _error(str(exc))
    except (recalificar.GeneradorDistinto, recalificar.SinPoblacion) as exc:
        return _error(f"--recalificar refused: {exc}")
    except LLMUnavailable as exc:
        print(
            f"fichas calibrar: {exc} (what was scored stays in the cache; run the same command "
            "again to go on)",
            file=sys.stderr,
        )
        return EXIT_LLM_UNAVAILABLE
    except Exception as exc:  # the broker or the store: unreachable (4) or refusing (2)
        from migraciones.conexion import rechazo_postgres

        if (rechazo := rechazo_postgres(exc, settings.postgres_dsn)) is not None:
            return _error(rechazo)
        codigo = _fallo_de_kafka(exc, con_brokers(settings, args.kafka or settings.kafka_brokers))
        if codigo is None:
            raise
        return codigo
    return _certificar_y_escribir(args, settings, clave, datos)


def _certificar_y_escribir(
    args: argparse.Namespace, settings: Any, clave: ClavePuerta, datos: Datos
) -> int:
    """Certify per family and pooled, print the summary, write the audit file and the topic."""
    ahora = datetime.now(UTC)
    certificaciones = certificar_por_familia(datos.candidatas, args.objetivo, args.delta)
    if args.recalificar:  # counted before anything is shown: a dry run is a try too
        registrar_variante(args, settings, clave, datos, certificaciones[FAMILIA_TODAS], ahora)
    origen_datos = describir_origen(datos)
    estados = [
        estado_puerta(f, clave, c, origen_datos, ahora, ABIERTA_POR_CALIBRAR)
        for f, c in certificaciones.items()
    ]
    # v1.5: the pooled record governs no family by itself; a family the batch covers gets its
    # covered record beside it (puerta.certificacion.cubrir_por_lote).
    coberturas = cubrir_por_lote(datos.candidatas, certificaciones, args.objetivo, args.delta)
    conjunta = next(e for e in estados if e.familia == FAMILIA_TODAS)
    estados += [
        estado_cubierto_lote(cob, conjunta, origen_datos)
        for cob in coberturas.values()
        if cob.cubierta
    ]
    try:
        if args.publicar and not args.dry_run:
            cubiertas = {f for f, cob in coberturas.items() if cob.cubierta}
            estados += asyncio.run(
                _cerrar_propias_que_ya_no_certifican(
                    con_brokers(settings, args.publicar),
                    clave,
                    datos,
                    certificaciones.keys() | cubiertas,
                    args,
                    ahora,
                )
            )
    except Exception as exc:
        codigo = _fallo_de_kafka(exc, con_brokers(settings, args.publicar))
        if codigo is None:
            raise
        return codigo
    origen = {
        **datos.origen,
        "avisos": datos.avisos,
        "clave": clave.model_dump(),
        "cobertura": {f: dataclasses.asdict(c) for f, c in coberturas.items()},
    }
    doc = auditoria.documento(estados, certificaciones, origen, ahora)
    print(resumen(estados, certificaciones, datos, args.objetivo, args.delta, clave))
    print("\n".join(lineas_cobertura(coberturas, args.delta)))
    if args.dry_run:
        print(json.dumps([e.model_dump(mode="json") for e in estados], ensure_ascii=False))
        return 0
    if args.salida:
        auditoria.escribir(args.salida, doc)
        print(f"audit file: {args.salida}")
    if args.publicar:
        try:
            asyncio.run(_publicar(args.publicar, settings, estados))
        except Exception as exc:
            codigo = _fallo_de_kafka(exc, con_brokers(settings, args.publicar))
            if codigo is None:
                raise
            return codigo
        print(f"published {len(estados)} gate state(s) to {settings.topic_puerta}")
    return 0


async def _publicar(bootstrap: str, settings: Any, estados: Sequence[EstadoPuerta]) -> None:
    """Write the states to the gate topic; a missing topic is created by the worker's own
    ``ensure_topics`` (every topic of the contract, with its settings), never by hand here."""
    from infra.kafka.topics import ensure_topics
    from puerta.topico import escribir_estados

    en_kafka = con_brokers(settings, bootstrap)
    await ensure_topics(en_kafka)
    await escribir_estados(en_kafka, estados, settings.topic_puerta)


def con_brokers(settings: Any, brokers: str) -> Any:
    """The settings with the Kafka of ``--kafka`` or ``--publicar`` in ``FICHAS_KAFKA_BROKERS``:
    every other connection option (``infra.kafka.clients.client_options``) stays the
    environment's."""
    return settings.model_copy(update={"kafka_brokers": brokers})


def _fallo_de_kafka(exc: BaseException, settings: Any) -> int | None:
    """Say on stderr what a Kafka failure means and return the exit code: 2 when Kafka
    refused this client (a login, a certificate, an ACL: ``infra.kafka.access``), 4 when it
    could not be reached; None when ``exc`` is not Kafka's."""
    from infra.kafka.access import KafkaRefused
    from infra.kafka.clients import explain_refusal

    if not (_es_de_kafka(exc) or isinstance(exc, KafkaRefused)):
        return None
    rechazo = asyncio.run(explain_refusal(exc, settings))
    if rechazo is not None:
        print(f"fichas calibrar: {rechazo}", file=sys.stderr)
        return EXIT_USAGE
    print(f"fichas calibrar: Kafka unreachable: {exc}", file=sys.stderr)
    return EXIT_BROKER_UNREACHABLE


def _es_de_kafka(exc: BaseException) -> bool:
    """Whether an exception is the broker's (unreachable, timed out)."""
    from aiokafka.errors import KafkaError

    from infra.kafka.clients import BrokerUnreachable

    return isinstance(exc, KafkaError | TimeoutError | ConnectionError | BrokerUnreachable)


async def _cerrar_propias_que_ya_no_certifican(
    settings: Any,
    clave: ClavePuerta,
    datos: Datos,
    escritas: Collection[str],
    args: argparse.Namespace,
    ahora: datetime,
) -> list[EstadoPuerta]:
    """Closed states for families whose own gate is open on the topic but no longer certifies
    (``escritas``: the families this run writes an own or covered record for already).

    Without them an old open record would keep governing the family (since v1.5 such a family
    is published by the pooled gate only when the batch covers it, which writes its covered
    record instead). A family closed by the online bound is left closed (re-certifying it alone
    reopens it; the pooled gate does not).
    """
    from puerta.topico import leer_estados

    actuales = await leer_estados(settings, settings.topic_puerta)
    cerrar = []
    for estado in actuales.values():
        if (
            estado.clave != clave
            or estado.familia == FAMILIA_TODAS
            or estado.familia in escritas
            or estado.retencion
            or not estado.abierta
            or estado.motivo == MOTIVO_PUERTA_COTA_BAJA
        ):
            continue
        propias = [c for c in datos.candidatas if c.familia == estado.familia]
        cert = certificar(propias, args.objetivo, args.delta)
        cerrar.append(
            estado_puerta(
                estado.familia, clave, cert, describir_origen(datos), ahora, ABIERTA_POR_CALIBRAR
            )
        )
    return cerrar


RAZONES_COBERTURA = {
    "cubierta": "covered by the pooled gate",
    "propia": "has its own gate",
    "conjunta_cerrada": "not covered: the pooled gate did not certify",
    "excluida": "not covered: its own approvals at the pooled threshold show its precision "
    "below the objective",
    "umbral_propio": "not covered: without its own data the pooled walk certifies another "
    "threshold, so its own test there would not be at a threshold fixed before its labels",
    "sin_certificar": "not covered: its own approvals at the pooled threshold do not certify it",
}


def lineas_cobertura(coberturas: Mapping[str, CoberturaLote], delta: float) -> list[str]:
    """One line per family of the batch without its own gate: covered by the pooled gate or
    not, and why (v1.5: the pooled gate alone publishes no family; v1.6: the family's own
    approvals certify the pooled λ, which the walk picks without them). The p is that of its
    own certification, or for an excluded family that of the exclusion."""
    lineas = []
    for familia, cob in sorted(coberturas.items()):
        if cob.razon == "propia":
            continue
        p = cob.p_exclusion if cob.razon == "excluida" else cob.p
        cifras = (
            f" (own approvals at λ {cob.umbral:.6g}: n={cob.n}, k={cob.k}, p={p:.4g} "
            f"against δ {delta})"
            if cob.umbral is not None
            else ""
        )
        lineas.append(f"family {familia}: {RAZONES_COBERTURA[cob.razon]}{cifras}")
    return lineas


def describir_origen(datos: Datos) -> str:
    """``EstadoPuerta.origen_datos``: the method, then the data (v1.3); the audit file has
    the details. E.g. ``ltt:recalificado; conjunto ejemplos/evaluacion/casos.jsonl (188)``."""
    metodos = "+".join(dict.fromkeys(datos.metodos))
    partes = [
        f"fichas evaluar {Path(f['ruta']).name} sha256:{f['sha256'][:12]} "
        f"({f['candidatas']} candidatas)"
        for f in datos.origen.get("ficheros", [])
    ]
    if "decisiones" in datos.origen:
        d = datos.origen["decisiones"]
        partes.append(f"decisiones {d['topic']} ({d['usadas']} de {d['decisiones']})")
    partes += [f"{r['fuente']} ({r['candidatas']})" for r in datos.origen.get("recalificado", [])]
    if "variantes" in datos.origen:
        n = datos.origen["variantes"]["variantes"]
        partes.append(f"variantes del evaluador en estas etiquetas: {n}")
    return "; ".join([metodos, *partes])


def fuera_de_la_cuenta(datos: Datos) -> list[str]:
    """One line per source saying what was left out and why: evidence never expires silently."""
    lineas = []
    if "decisiones" in datos.origen:
        d = datos.origen["decisiones"]
        lineas.append(
            f"decisions on {d['topic']}: {d['decisiones']} read, {d['usadas']} used for this key"
        )
        lineas += [
            f"  left out: {d[motivo]} {texto}" for motivo, texto in FUERA.items() if d[motivo]
        ]
        if d["otras_claves"]:
            claves = ", ".join(f"{k} ({n})" for k, n in sorted(d["otras_claves"].items()))
            lineas.append(f"  other keys seen: {claves}")
    if datos.origen.get("recalificado"):
        lineas += _fuera_de_la_repeticion(datos.origen["recalificado"])
    if "variantes" in datos.origen:
        v = datos.origen["variantes"]
        lineas.append(
            f"evaluator variants tried on these labels: {v['variantes']} (keys "
            f"{', '.join(v['claves'])}; {v['corridas']} run(s) of --recalificar). The guarantee "
            f"is per variant (δ {v['delta']} each): the chance that one of them passed by luck "
            f"is up to {v['azar']:.3g}"
        )
    return lineas


def _fuera_de_la_repeticion(fuentes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per re-scored source: what was kept, and every item left out by reason, those the
    replay dropped (``grafo.repeticion.MOTIVOS``) included."""
    from grafo.repeticion import MOTIVOS

    lineas = []
    for r in fuentes:
        lineas.append(
            f"re-scored by the running evaluator: {r['candidatas']} from {r['fuente']} "
            "(the labelled attempt of every history the new loop would end on)"
        )
        lineas += [
            f"  left out: {r[motivo]} {texto}"
            for motivo, texto in (recalificar.FUERA | MOTIVOS).items()
            if r.get(motivo)
        ]
    return lineas


def resumen(
    estados: Sequence[EstadoPuerta],
    certificaciones: Mapping[str, Certificacion],
    datos: Datos,
    objetivo: float,
    delta: float,
    clave: ClavePuerta,
) -> str:
    """A few lines for the terminal: what was left out, each gate open or closed, n, k, λ."""
    minimo = minimo_aprobaciones(objetivo, delta)
    puntuadas = sum(1 for c in datos.candidatas if c.puntuacion is not None)
    lineas = [f"key {clave.texto()}: {clave.model_dump_json(exclude_none=True)}"]
    if clave.prompt_generador_sha256 is None:
        lineas.append(
            "warning: this key has no generator side (prompt_generador_sha256): no v1.3 worker "
            "applies it; give --clave-desde-config or --prompt-generador-sha"
        )
    lineas += fuera_de_la_cuenta(datos)
    lineas += [
        f"candidates: {len(datos.candidatas)} labelled, {puntuadas} scored and approvable; "
        f"objective {objetivo}, delta {delta} (at least {minimo} people-approved needed)"
    ]
    for estado in estados:
        cert = certificaciones.get(estado.familia)
        if estado.motivo == MOTIVO_PUERTA_CUBIERTA:
            lineas.append(
                f"gate {estado.familia}: OPEN through the pooled gate from score "
                f"{estado.umbral:.6g} (covered: n={estado.n} approvals of its own there, "
                f"k={estado.k} rejected by people)"
            )
        elif estado.abierta:
            p = f", p={cert.p:.4f}" if cert else ""
            lineas.append(
                f"gate {estado.familia}: OPEN from score {estado.umbral:.6g} "
                f"(n={estado.n} approvals, k={estado.k} rejected by people{p})"
            )
        elif estado.motivo == "sin_datos_suficientes":
            limpias = cert.aprobadas_por_personas if cert else 0
            lineas.append(
                f"gate {estado.familia}: CLOSED, too few labels: {limpias} people-approved "
                f"scored candidates, {minimo} needed to certify precision {objetivo}"
            )
        else:
            lineas.append(
                f"gate {estado.familia}: CLOSED ({estado.motivo}): no threshold certifies "
                f"precision {objetivo} (all scored: n={estado.n}, k={estado.k})"
            )
    lineas += [f"warning: {a}" for a in datos.avisos]
    return "\n".join(lineas)
