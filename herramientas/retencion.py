"""``fichas puerta retener|liberar FAMILIA|*``: a person holds a gate closed, or releases it.

A hold closes one gate (a family, or ``*`` and every family it covers) for every worker within
seconds, keeps the reviewer app's opener from opening it, survives restarts (it lives on the
compacted ``fichas.puerta``) and writes no label. The record (``puerta.retencion``) goes to the
gate's hold id, signed ``retenida_por`` (``--por``, default the OS user) with the reason in
``nota``. Which key: the running configuration's by default (as the worker computes it, so the
LLM server is asked which model it serves), ``--clave ID`` for a key seen on the topic, or
``--todas-las-claves`` for every key there. Holding a held gate, or releasing one that is not
held, writes nothing and says so. Exit 0 done; 2 bad usage (unknown family or key, a reason too
long; Kafka refused the command's user, ``rechazo_kafka``); 3 the LLM did not answer (default key);
4 Kafka unreachable. Runbook: docs/operacion.md, "Holding a gate".
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta

EXIT_USAGE = 2
EXIT_LLM_UNAVAILABLE = 3
EXIT_BROKER_UNREACHABLE = 4
ACCIONES = ("retener", "liberar")

AYUDA = """\
Hold a publication gate closed, or release it (docs/operacion.md, "Holding a gate").

A held gate publishes nothing, whatever its evidence says, on every worker within seconds; the
reviewer app's automatic opener leaves it closed; it survives restarts of the app and the
workers; nothing is written as a label. FAMILIA is a family of the criteria or * (the pooled
gate: holding it closes every family it covers, not the families with a gate of their own).

A hold belongs to one key: after a deploy that changes the key (prompt, model, served weights,
criteria, settings), hold again under the new key.

Exit 0 done (also when nothing needed writing); 2 bad usage, or Kafka refused this user (an
ACL: Write on FICHAS_TOPIC_PUERTA is needed); 3 the LLM did not answer (the default key asks it
which model it serves); 4 Kafka unreachable.

The last step of a candidate's promotion is `fichas puerta promover --de ID --a ID` (its own
--help; docs/operacion.md, "Promoting a candidate")."""


def _parser() -> argparse.ArgumentParser:
    """Arguments of ``fichas puerta``."""
    p = argparse.ArgumentParser(
        prog="fichas puerta",
        description=AYUDA,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("accion", choices=ACCIONES, help="retener (hold) or liberar (release)")
    p.add_argument("familia", metavar="FAMILIA|*", help="a family, or * for the pooled gate")
    p.add_argument(
        "--motivo",
        required=True,
        help="why, in a few words (kept in the record's nota, at most 500 characters)",
    )
    p.add_argument(
        "--por",
        metavar="NOMBRE",
        help="who holds or releases it (default: the OS user running the command, "
        f"now {_usuario()!r})",
    )
    cual = p.add_mutually_exclusive_group()
    cual.add_argument(
        "--clave",
        metavar="ID",
        help="the gate key id (16 hex digits, as the Puertas page and the metrics show it) of a "
        "key seen on FICHAS_TOPIC_PUERTA; default: the running configuration's key",
    )
    cual.add_argument(
        "--todas-las-claves",
        action="store_true",
        help="this family under every key present on FICHAS_TOPIC_PUERTA",
    )
    p.add_argument("--kafka", metavar="BOOTSTRAP", help="brokers (default FICHAS_KAFKA_BROKERS)")
    p.add_argument(
        "--espera-llm",
        type=float,
        default=60.0,
        metavar="S",
        help="default key: seconds to keep asking an LLM server that does not answer which "
        "model it serves (60)",
    )
    return p


def _usuario() -> str:
    """The OS user running the command (``getpass.getuser``), or ``desconocido``."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "desconocido"


def _error(mensaje: str, code: int = EXIT_USAGE) -> int:
    """One line on stderr, and the exit code."""
    print(f"fichas puerta: {mensaje}", file=sys.stderr)
    return code


def claves_en_topic(estados: Mapping[str, EstadoPuerta]) -> dict[str, ClavePuerta]:
    """Every key on the topic, by id."""
    return {e.clave.texto(): e.clave for e in estados.values()}


def elegir_claves(
    clave_id: str | None, todas: bool, en_topic: Mapping[str, ClavePuerta]
) -> list[ClavePuerta]:
    """The keys ``--clave`` or ``--todas-las-claves`` name (``ValueError`` when none). Pure."""
    if todas:
        if not en_topic:
            raise ValueError("no key on the gate topic: --todas-las-claves holds nothing")
        return [en_topic[k] for k in sorted(en_topic)]
    assert clave_id is not None
    if clave_id not in en_topic:
        vistas = ", ".join(sorted(en_topic)) or "none"
        raise ValueError(f"no key {clave_id} on the gate topic (keys seen: {vistas})")
    return [en_topic[clave_id]]


def registros(
    accion: str,
    familia: str,
    claves: Sequence[ClavePuerta],
    estados: Mapping[str, EstadoPuerta],
    persona: str,
    motivo: str,
    ahora: datetime,
) -> tuple[list[EstadoPuerta], list[str]]:
    """The hold or release records to write, and one line per key saying what happens. Pure.

    A gate already held is not held again (its record, who and why, stays); a gate not held is
    not released. ``ValueError`` for a name or reason the contract refuses.
    """
    from puerta.retencion import registro_retencion, retencion

    retener = accion == "retener"
    nuevos, lineas = [], []
    for clave in claves:
        gate = f"{familia}|{clave.texto()}"
        actual = retencion(familia, clave, estados)
        if retener and actual is not None:
            lineas.append(
                f"gate {gate} already held by {actual.retenida_por} since "
                f"{actual.actualizada_en.isoformat()} ({actual.nota or 'no reason given'}): "
                "nothing written"
            )
            continue
        if not retener and actual is None:
            lineas.append(f"gate {gate} is not held: nothing written")
            continue
        registro = registro_retencion(familia, clave, retener, persona, motivo, ahora)
        nuevos.append(registro)
        que = "held" if retener else "released"
        lineas.append(
            f"gate {gate} {que} by {registro.retenida_por} at {ahora.isoformat()}: "
            f"{registro.nota or 'no reason given'}"
        )
    return nuevos, lineas


def main(argv: Sequence[str]) -> int:
    """Entry point of ``fichas puerta``."""
    args = _parser().parse_args(list(argv))
    from criterios import familias_conocidas
    from herramientas.arranque import cargar_ajustes
    from infra.config import ConfigError

    familias = sorted(familias_conocidas())
    if args.familia != FAMILIA_TODAS and args.familia not in familias:
        return _error(f"unknown family {args.familia!r}: one of {', '.join(familias)}, or *")
    try:
        settings = cargar_ajustes()
    except ConfigError as exc:
        return _error("; ".join(exc.lines))
    if args.kafka:
        settings = settings.model_copy(update={"kafka_brokers": args.kafka})
    persona = args.por if args.por is not None else _usuario()
    try:
        return asyncio.run(_ejecutar(args, settings, persona))
    except _Uso as exc:
        return _error(str(exc))
    except Exception as exc:
        return rechazo_kafka(exc, settings)


def rechazo_kafka(exc: Exception, settings: Any, programa: str = "fichas puerta") -> int:
    """Kafka refused this command (a login, a certificate, an ACL on ``fichas.puerta``): one
    line naming the setting, exit 2 (``infra.kafka.access``); anything else is raised again."""
    from infra.kafka.clients import explain_refusal

    rechazo = asyncio.run(explain_refusal(exc, settings))
    if rechazo is None:
        raise exc
    print(f"{programa}: {rechazo}", file=sys.stderr)
    return EXIT_USAGE


class _Uso(Exception):
    """Bad usage found once the topic or the server was read."""


async def _ejecutar(args: argparse.Namespace, settings: Any, persona: str) -> int:
    """Read the topic, choose the keys, write the records, say what happens."""
    from grafo import Backoff, LLMUnavailable
    from infra.kafka.clients import BrokerUnreachable
    from infra.kafka.topics import ensure_topics
    from puerta.topico import escribir_estados, leer_estados

    try:
        await ensure_topics(settings)
        estados = await leer_estados(settings, settings.topic_puerta)
    except (BrokerUnreachable, TimeoutError, ConnectionError) as exc:
        return _error(f"Kafka unreachable: {exc}", EXIT_BROKER_UNREACHABLE)
    if args.clave is None and not args.todas_las_claves:
        # Only here: asking the server which model it serves loads LangChain
        # (stream.gobierno.clave).
        from stream.gobierno.identidad import clave_servida

        try:
            claves = [await clave_servida(settings, Backoff(max_wait_s=args.espera_llm))]
        except LLMUnavailable as exc:
            return _error(
                f"{exc}; give the key with --clave ID (the Puertas page shows it)",
                EXIT_LLM_UNAVAILABLE,
            )
    else:
        try:
            claves = elegir_claves(args.clave, args.todas_las_claves, claves_en_topic(estados))
        except ValueError as exc:
            raise _Uso(str(exc)) from exc
    try:
        nuevos, lineas = registros(
            args.accion, args.familia, claves, estados, persona, args.motivo, datetime.now(UTC)
        )
    except ValueError as exc:
        raise _Uso(f"the record would not be valid: {exc}") from exc
    if nuevos:
        try:
            await escribir_estados(settings, nuevos, settings.topic_puerta)
        except (TimeoutError, ConnectionError) as exc:
            return _error(f"Kafka unreachable: {exc}", EXIT_BROKER_UNREACHABLE)
    for linea in lineas:
        print(linea)
    if nuevos:
        efecto = (
            "every worker closes it within seconds and the reviewer app will not open it"
            if args.accion == "retener"
            else "its own state on the topic governs it again (the reviewer app may open it)"
        )
        print(f"written to {settings.topic_puerta}: {efecto}")
    return 0
