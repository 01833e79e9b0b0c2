"""``fichas calibrar``: certify the publication gate's threshold against people's labels.

Reads scored candidates that people labelled (``herramientas.calibrar.entradas``: result files,
people's decisions, the re-scored histories), certifies a threshold per family and pooled
(``*``) with the fixed-n Learn-then-Test of ``puerta.certificacion``, decides which families the
pooled certification covers (``cubrir_por_lote``: since v1.5 the pooled record alone publishes
no family, so each covered family gets its covered record beside it), prints the summary
(``herramientas.calibrar.resumen``) and writes the states to a JSON audit file (``--salida``)
and, only when asked, to ``fichas.puerta`` (``--publicar``, closing the family gates open there
that no longer certify; ``--dry-run`` prints them). Here: the parser, ``main`` and that
certify-and-write path. The tool for offline data and audits: production gates are opened by
the reviewer app's certifier. Calibrate only on data no gate selected (the labelled set, shadow
mode, the random sample). Exit 0 done (a gate that does not certify is a result); 2 bad usage,
unreadable input, or --recalificar refused; 3 the LLM did not answer; 4 Kafka unreachable.
Why, and the selection-bias trap: docs/puerta.md, "fichas calibrar".
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from esquemas.constantes import (
    ABIERTA_POR_CALIBRAR,
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_COTA_BAJA,
    OBJETIVO_PUERTA,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from herramientas.calibrar import recalificar
from herramientas.calibrar.entradas import (
    Datos,
    Entrada,
    con_brokers,
    elegir_clave,
    leer_decisiones,
    leer_evaluar,
    leer_recalificadas,
    registrar_variante,
)
from herramientas.calibrar.resumen import describir_origen, lineas_cobertura, resumen
from puerta import auditoria
from puerta.certificacion import (
    certificar,
    certificar_por_familia,
    cubrir_por_lote,
    estado_cubierto_lote,
    estado_puerta,
)

EXIT_USAGE = 2
EXIT_LLM_UNAVAILABLE = 3
EXIT_BROKER_UNREACHABLE = 4

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
    from herramientas.arranque import cargar_ajustes
    from infra.config import ConfigError

    try:
        settings = cargar_ajustes()
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


# -- certify, write, publish ------------------------------------------------------------------


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
