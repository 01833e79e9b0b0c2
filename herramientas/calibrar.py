"""``fichas calibrar``: certify the publication gate's threshold against people's labels.

Reads scored candidates that people labelled, certifies a threshold per family (where that
family's data certify alone) and pooled (``*``) with ``puerta.certificacion``, and writes the
gate states: to a JSON audit file (``--salida``) and/or to ``fichas.puerta`` (``--publicar``).

Two sources, combinable:

- ``fichas evaluar --modo evaluador`` result files: every labelled candidate with the
  evaluator's ``puntuacion`` and the human label (``humano.aprobada``). A candidate a code
  check vetoes (``codigo`` not empty) or whose evaluation was invalid is never approved by the
  gate, whatever its score: its score counts as absent.
- ``--desde-decisiones --kafka BOOTSTRAP``: the reviewer app's decisions on
  ``fichas.decisiones`` joined by ``event_id`` with what was decided: a ``FichaEnRevision``
  (score of its last attempt; approvable by the gate only if its motivo is ``sin_garantia``,
  i.e. the code checks passed) or a sampled ``FichaPublicada`` (its ``puntuacion``). Labels:
  ``aprobada``/``correcta`` good; ``rechazada``/``incorrecta``/``editada`` bad (a ficha a
  person had to edit was not publishable as generated); ``obsoleta`` skipped.

The selection-bias trap (docs/puerta.md): calibrate only on data whose scores were not chosen
by a gate: the labelled set, shadow mode (the gate closed: everything goes to review with its
score), and the random sample. Never on the review queue alone while a gate is open: the queue
then holds only what the gate held back (low scores), so above the threshold there is nothing
to measure, and what is there is not representative.

Exit codes: 0 done (the gate may be open or closed: a gate that does not certify is a result,
not an error); 2 bad usage or unreadable input; 4 no Kafka broker answered.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_CORRECTA,
    DECISION_EDITADA,
    DECISION_INCORRECTA,
    DECISION_OBSOLETA,
    DECISION_RECHAZADA,
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_COTA_BAJA,
    MOTIVO_SIN_GARANTIA,
    OBJETIVO_PUERTA,
)
from esquemas.puerta import ClavePuerta, EstadoPuerta
from puerta import auditoria
from puerta.certificacion import (
    Candidata,
    Certificacion,
    certificar,
    certificar_por_familia,
    estado_puerta,
    minimo_aprobaciones,
)

EXIT_USAGE = 2
EXIT_BROKER_UNREACHABLE = 4
FORMATO_EVALUAR = "fichas-evaluar/1"
BUENAS = {DECISION_APROBADA, DECISION_CORRECTA}
MALAS = {DECISION_RECHAZADA, DECISION_INCORRECTA, DECISION_EDITADA}

AYUDA = """\
Certify the publication gate's threshold against people (docs/puerta.md).

From scored, people-labelled candidates it picks the most lenient evaluator score λ at which
the precision of automatic approvals is certified >= --objetivo with risk --delta (Learn then
Test, fixed-sequence testing). One gate per family whose own data certify, plus the pooled
gate '*' for the rest. Too few labels: the gate stays closed (exit 0, with the reason).

SELECTION BIAS: calibrate only on unbiased data: `fichas evaluar --modo evaluador` on the
labelled set, decisions taken in shadow mode (gate closed: every ficha goes to review with its
score), and the random sample of published fichas. NEVER on the review queue alone while a gate
is open: the queue then holds only what the gate held back, so the data say nothing about the
fichas the gate lets through.

Exit 0 done (gate open or closed); 2 bad usage or unreadable input; 4 Kafka unreachable."""


class Entrada(Exception):
    """Input that cannot be used: unreadable, not the expected format, or inconsistent."""


@dataclass
class Datos:
    """Labelled candidates gathered from every source, and what they came from."""

    candidatas: list[Candidata] = field(default_factory=list)
    origen: dict[str, Any] = field(default_factory=dict)
    avisos: list[str] = field(default_factory=list)
    claves: list[ClavePuerta] = field(default_factory=list)  # keys the files were measured with


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
            modo_evaluador="rubrica" if config.get("evaluador_rubrica") else "veredicto",
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
    datos.origen.setdefault("ficheros", []).append(
        {
            "ruta": str(path),
            "sha256": hashlib.sha256(crudo).hexdigest(),
            "candidatas": len(nuevas),
            "casos_sha256": (doc.get("configuracion") or {}).get("casos_sha256"),
        }
    )


# -- decisions on Kafka -----------------------------------------------------------------------


async def _leer_topics(bootstrap: str, topics: Sequence[str]) -> dict[str, list[Any]]:
    """Every committed record of ``topics`` up to the end offsets seen at the start."""
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="fichas-calibrar")
    await admin.start()
    try:
        descripciones = await admin.describe_topics(list(topics))
    finally:
        await admin.close()
    particiones = [
        TopicPartition(d["topic"], p["partition"])
        for d in descripciones
        if not d.get("error_code")
        for p in d.get("partitions") or []
    ]
    salida: dict[str, list[Any]] = {t: [] for t in topics}
    if not particiones:
        return salida
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        client_id="fichas-calibrar",
    )
    await consumer.start()
    try:
        consumer.assign(particiones)
        await consumer.seek_to_beginning(*particiones)
        finales = await consumer.end_offsets(particiones)
        pendientes = {tp for tp in particiones if finales[tp] > 0}
        limite = time.monotonic() + 120
        while pendientes:
            if time.monotonic() > limite:
                raise TimeoutError(f"could not read {sorted(str(tp) for tp in pendientes)}")
            lotes = await consumer.getmany(*pendientes, timeout_ms=1000)
            for tp, registros in lotes.items():
                salida[tp.topic] += [r for r in registros if r.offset < finales[tp]]
            for tp in list(pendientes):
                if await consumer.position(tp) >= finales[tp]:
                    pendientes.discard(tp)
    finally:
        await consumer.stop()
    return salida


def _json(registro: Any) -> dict[str, Any] | None:
    """A record's value as a JSON object, or None when it is not one (skipped, counted)."""
    try:
        valor = json.loads(registro.value) if registro.value is not None else None
    except ValueError:
        return None
    return valor if isinstance(valor, dict) else None


def unir_decisiones(
    decisiones: Sequence[Mapping[str, Any]],
    revision: Sequence[Mapping[str, Any]],
    muestra: Sequence[Mapping[str, Any]],
) -> tuple[list[Candidata], dict[str, int], list[str]]:
    """Join people's decisions with the scores of what they decided, by ``event_id``.

    Pure. Returns the candidates, counts for the audit, and warnings (selection bias). The
    newest decision per event wins; ``obsoleta`` means nobody judged the ficha.
    """
    ultima: dict[str, Mapping[str, Any]] = {}
    for d in decisiones:
        if "event_id" in d and "decision" in d:
            ultima[str(d["event_id"])] = d
    en_revision = {str(r["event_id"]): r for r in revision if "event_id" in r}
    en_muestra = {str(r["event_id"]): r for r in muestra if "event_id" in r}
    candidatas: list[Candidata] = []
    cuentas = {"decisiones": len(ultima), "revision": 0, "muestra": 0, "sin_ficha": 0}
    cuentas["obsoletas"] = 0
    publicadas_por_puerta = False
    for event_id, d in ultima.items():
        decision = d["decision"]
        if decision == DECISION_OBSOLETA or decision not in BUENAS | MALAS:
            cuentas["obsoletas"] += 1
            continue
        buena = decision in BUENAS
        if event_id in en_muestra:
            ficha = en_muestra[event_id]
            publicadas_por_puerta |= ficha.get("puerta") is not None
            puntuacion = ficha.get("puntuacion")
            cuentas["muestra"] += 1
        elif event_id in en_revision:
            ficha = en_revision[event_id]
            historial = ficha.get("historial") or [{}]
            puntuacion = historial[-1].get("puntuacion")
            if ficha.get("motivo") != MOTIVO_SIN_GARANTIA:
                puntuacion = None  # code checks failed or invalid output: never approvable
            cuentas["revision"] += 1
        else:
            cuentas["sin_ficha"] += 1
            continue
        familia = str(ficha.get("familia") or FAMILIA_TODAS)
        candidatas.append(Candidata(puntuacion, buena, familia, event_id))
    avisos = []
    if publicadas_por_puerta and cuentas["revision"]:
        avisos.append(
            "selection bias: some sampled fichas were published by an open gate, so the review "
            "queue in these data holds only what that gate held back; calibrate on shadow-mode "
            "decisions and the random sample (docs/puerta.md)"
        )
    return candidatas, cuentas, avisos


def leer_decisiones(bootstrap: str, settings: Any, datos: Datos) -> None:
    """Add the candidates joined from the decisions and the output topics."""
    topics = [settings.topic_decisiones, settings.topic_revision, settings.topic_muestra]
    leidos = asyncio.run(_leer_topics(bootstrap, topics))
    valores = {t: [v for v in map(_json, leidos[t]) if v is not None] for t in topics}
    candidatas, cuentas, avisos = unir_decisiones(
        valores[settings.topic_decisiones],
        valores[settings.topic_revision],
        valores[settings.topic_muestra],
    )
    datos.candidatas += candidatas
    datos.avisos += avisos
    datos.origen["decisiones"] = {"kafka": bootstrap, "topics": topics, **cuentas}


# -- the key ----------------------------------------------------------------------------------


def clave_desde_config() -> ClavePuerta:
    """The running configuration's key, as the worker computes it (``grafo.clave_puerta``)."""
    try:
        from grafo import clave_puerta  # type: ignore[attr-defined]
    except ImportError as exc:
        raise Entrada(
            "--clave-desde-config needs grafo.clave_puerta, which this version lacks; give "
            "--modelo, --prompt-sha, --criterios-version and --modo-evaluador"
        ) from exc
    from criterios import CRITERIOS_VERSION
    from stream.config import Settings

    settings = Settings()
    clave: ClavePuerta = clave_puerta(
        settings.llm_modelo, settings.evaluador_rubrica, CRITERIOS_VERSION, settings.evaluador_senal
    )
    return clave


def elegir_clave(args: argparse.Namespace, datos: Datos) -> ClavePuerta:
    """The key to certify for: from the options, the configuration, or the files' own key.

    Result files record the key they were measured with: a key given by hand must match it,
    because a threshold certified on one evaluator says nothing about another.
    """
    campos = (args.modelo, args.prompt_sha, args.criterios_version, args.modo_evaluador)
    if args.clave_desde_config:
        clave = clave_desde_config()
    elif all(campos):
        clave = ClavePuerta(
            modelo=args.modelo,
            prompt_evaluador_sha256=args.prompt_sha,
            criterios_version=args.criterios_version,
            modo_evaluador=args.modo_evaluador,
        )
    elif any(campos):
        raise Entrada(
            "give all four of --modelo, --prompt-sha, --criterios-version, --modo-evaluador"
        )
    elif datos.claves:
        clave = datos.claves[0]
    else:
        raise Entrada(
            "no gate key: give --modelo, --prompt-sha, --criterios-version and "
            "--modo-evaluador, or --clave-desde-config"
        )
    distintas = [c for c in datos.claves if c != clave]
    if distintas:
        raise Entrada(
            f"the result files were measured with another evaluator key ({distintas[0]!r}) "
            f"than the one to certify ({clave!r})"
        )
    return clave


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
        help="also read people's decisions (FICHAS_TOPIC_DECISIONES) joined with the scores on "
        "FICHAS_TOPIC_REVISION and FICHAS_TOPIC_MUESTRA; needs --kafka",
    )
    p.add_argument("--kafka", metavar="BOOTSTRAP", help="brokers to read the decisions from")
    p.add_argument("--objetivo", type=float, default=OBJETIVO_PUERTA, help="precision (0.9)")
    p.add_argument("--delta", type=float, default=DELTA_PUERTA, help="risk (0.05)")
    p.add_argument("--modelo", help="gate key: the evaluator's model name")
    p.add_argument("--prompt-sha", help="gate key: sha256 of the evaluator's system prompt")
    p.add_argument("--criterios-version", help="gate key: the criteria version")
    p.add_argument(
        "--modo-evaluador", choices=("veredicto", "rubrica"), help="gate key: evaluator mode"
    )
    p.add_argument(
        "--clave-desde-config",
        action="store_true",
        help="gate key of the running FICHAS_* configuration (as the worker computes it)",
    )
    p.add_argument("--salida", type=Path, help="write the JSON audit file here")
    p.add_argument(
        "--publicar", metavar="BOOTSTRAP", help="write the gate states to FICHAS_TOPIC_PUERTA"
    )
    p.add_argument(
        "--dry-run", action="store_true", help="compute and print the states; write nothing"
    )
    return p


def _error(mensaje: str) -> int:
    """One line on stderr, exit 2."""
    print(f"fichas calibrar: {mensaje}", file=sys.stderr)
    return EXIT_USAGE


def main(argv: list[str]) -> int:
    """Entry point of ``fichas calibrar``."""
    args = _parser().parse_args(argv)
    if not 0 < args.objetivo < 1 or not 0 < args.delta < 1:
        return _error("--objetivo and --delta must be in (0, 1)")
    if not args.entradas and not args.desde_decisiones:
        return _error("nothing to calibrate on: give result files and/or --desde-decisiones")
    if args.desde_decisiones and not args.kafka:
        return _error("--desde-decisiones needs --kafka BOOTSTRAP")
    from stream.config import ConfigError, load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        return _error("; ".join(exc.lines))
    datos = Datos()
    try:
        for entrada in args.entradas:
            leer_evaluar(entrada, datos)
        if args.desde_decisiones:
            leer_decisiones(args.kafka, settings, datos)
        clave = elegir_clave(args, datos)
    except Entrada as exc:
        return _error(str(exc))
    except Exception as exc:  # the broker: aiokafka's connection errors
        if _es_de_kafka(exc):
            print(f"fichas calibrar: Kafka unreachable: {exc}", file=sys.stderr)
            return EXIT_BROKER_UNREACHABLE
        raise
    ahora = datetime.now(UTC)
    certificaciones = certificar_por_familia(datos.candidatas, args.objetivo, args.delta)
    origen_datos = describir_origen(datos)
    estados = [estado_puerta(f, clave, c, origen_datos, ahora) for f, c in certificaciones.items()]
    try:
        if args.publicar and not args.dry_run:
            estados += asyncio.run(
                _cerrar_propias_que_ya_no_certifican(
                    args.publicar, settings.topic_puerta, clave, datos, certificaciones, args, ahora
                )
            )
    except Exception as exc:
        if _es_de_kafka(exc):
            print(f"fichas calibrar: Kafka unreachable: {exc}", file=sys.stderr)
            return EXIT_BROKER_UNREACHABLE
        raise
    origen = {**datos.origen, "avisos": datos.avisos, "clave": clave.model_dump()}
    doc = auditoria.documento(estados, certificaciones, origen, ahora)
    print(resumen(estados, certificaciones, datos, args.objetivo, args.delta))
    if args.dry_run:
        print(json.dumps([e.model_dump(mode="json") for e in estados], ensure_ascii=False))
        return 0
    if args.salida:
        auditoria.escribir(args.salida, doc)
        print(f"audit file: {args.salida}")
    if args.publicar:
        asyncio.run(_publicar(args.publicar, settings, estados))
        print(f"published {len(estados)} gate state(s) to {settings.topic_puerta}")
    return 0


async def _publicar(bootstrap: str, settings: Any, estados: Sequence[EstadoPuerta]) -> None:
    """Create the gate topic if missing (compacted, as the worker would), then write."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import TopicAlreadyExistsError

    from puerta.topico import escribir_estados
    from stream.kafka import topic_configs

    topic = settings.topic_puerta
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="fichas-calibrar")
    await admin.start()
    try:
        if topic not in set(await admin.list_topics()):
            nuevo = NewTopic(
                topic,
                settings.particiones,
                settings.replicacion,
                topic_configs=topic_configs(settings)[topic],
            )
            with contextlib.suppress(TopicAlreadyExistsError):
                await admin.create_topics([nuevo])
    finally:
        await admin.close()
    await escribir_estados(bootstrap, estados, topic)


def _es_de_kafka(exc: BaseException) -> bool:
    """Whether an exception is the broker's (unreachable, timed out)."""
    from aiokafka.errors import KafkaError

    return isinstance(exc, KafkaError | TimeoutError | ConnectionError)


async def _cerrar_propias_que_ya_no_certifican(
    bootstrap: str,
    topic: str,
    clave: ClavePuerta,
    datos: Datos,
    certificaciones: Mapping[str, Certificacion],
    args: argparse.Namespace,
    ahora: datetime,
) -> list[EstadoPuerta]:
    """Closed states for families whose own gate is open on the topic but no longer certifies.

    Without them an old open record would keep governing the family. A family closed by the
    online bound is left closed (re-certifying it alone reopens it; the pooled gate does not).
    """
    from puerta.topico import leer_estados

    actuales = await leer_estados(bootstrap, topic)
    cerrar = []
    for estado in actuales.values():
        if (
            estado.clave != clave
            or estado.familia == FAMILIA_TODAS
            or estado.familia in certificaciones
            or not estado.abierta
            or estado.motivo == MOTIVO_PUERTA_COTA_BAJA
        ):
            continue
        propias = [c for c in datos.candidatas if c.familia == estado.familia]
        cert = certificar(propias, args.objetivo, args.delta)
        cerrar.append(estado_puerta(estado.familia, clave, cert, describir_origen(datos), ahora))
    return cerrar


def describir_origen(datos: Datos) -> str:
    """A short text for ``EstadoPuerta.origen_datos``; the audit file has the details."""
    partes = [
        f"fichas evaluar {Path(f['ruta']).name} sha256:{f['sha256'][:12]} "
        f"({f['candidatas']} candidatas)"
        for f in datos.origen.get("ficheros", [])
    ]
    if "decisiones" in datos.origen:
        d = datos.origen["decisiones"]
        partes.append(
            f"decisiones {d['topics'][0]} ({d['revision']} revision, {d['muestra']} muestra)"
        )
    return "; ".join(partes)


def resumen(
    estados: Sequence[EstadoPuerta],
    certificaciones: Mapping[str, Certificacion],
    datos: Datos,
    objetivo: float,
    delta: float,
) -> str:
    """A few lines for the terminal: each gate open or closed, with n, k, λ and why."""
    minimo = minimo_aprobaciones(objetivo, delta)
    puntuadas = sum(1 for c in datos.candidatas if c.puntuacion is not None)
    lineas = [
        f"candidates: {len(datos.candidatas)} labelled, {puntuadas} scored and approvable; "
        f"objective {objetivo}, delta {delta} (at least {minimo} people-approved needed)"
    ]
    for estado in estados:
        cert = certificaciones.get(estado.familia)
        if estado.abierta:
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
