"""What ``fichas calibrar`` certifies on: people's labels, each source read and counted.

Three sources of scored, people-labelled candidates gathered into one ``Datos``: ``fichas
evaluar --modo evaluador`` result files (``leer_evaluar``), people's decisions on
``fichas.decisiones`` each on its own v1.3 evidence (``leer_decisiones``, the pure
``seleccionar_evidencia``), and the stored histories replayed under the running evaluator
(``leer_recalificadas``, each run recorded by ``registrar_variante``); and the gate key they
are certified for (``elegir_clave``). Invariants: only the certified key's evidence counts,
every candidate left out is counted by reason (``FUERA``, ``recalificar.FUERA``) in
``Datos.origen`` for the summary and the audit file; input that cannot be used raises
``Entrada`` with one line saying why. docs/puerta.md, "fichas calibrar".
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from esquemas.constantes import (
    DECISION_OBSOLETA,
    ORIGEN_LTT_CONJUNTO,
    ORIGEN_LTT_DECISIONES,
    ORIGEN_LTT_RECALIFICADO,
    TIPO_MUESTRA,
    TIPO_REVISION,
)
from esquemas.decode import Decoded, decode
from esquemas.estado_puerta import ClavePuerta
from esquemas.salidas import DecisionRevision
from herramientas.calibrar import recalificar
from herramientas.calibrar.recalificar import ETIQUETAS
from puerta.certificacion import Candidata, Certificacion

FORMATO_EVALUAR = "fichas-evaluar/1"
BUENAS = {d for d, buena in ETIQUETAS.items() if buena}
MALAS = {d for d, buena in ETIQUETAS.items() if not buena}


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


def con_brokers(settings: Any, brokers: str) -> Any:
    """The settings with the Kafka of ``--kafka`` or ``--publicar`` in ``FICHAS_KAFKA_BROKERS``:
    every other connection option (``infra.kafka.clients.client_options``) stays the
    environment's."""
    return settings.model_copy(update={"kafka_brokers": brokers})


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
