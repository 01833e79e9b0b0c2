"""``fichas puerta promover --de CLAVE --a CLAVE``: the last step of a candidate's promotion.

Run once the workers run the candidate's configuration as the live one (their key is now the
candidate's, whose gates the reviewer app opened from its shadow evidence). It writes, on
``fichas.puerta``, a closed record (motivo ``sustituida``, ``origen_datos`` ``promocion:<new
key id>; <reason>``, the old record's n and k) for every open gate of the old key, so that nothing
publishes under it any more and the opener never reopens it; and a copy (same person, same
reason) of every active hold of the old key under the new key, where the new key has no hold
record of that gate yet. Invariants: idempotent (a second run writes nothing); refuses (exit 2)
when the new key has no open gate, unless ``--forzar``; writes no label and opens nothing.
Exit 0 done; 2 bad usage or refused; 4 Kafka unreachable. Runbook: docs/operacion.md,
"Promoting a candidate".
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from esquemas.constantes import MOTIVO_PUERTA_RETENIDA, MOTIVO_PUERTA_SUSTITUIDA, ORIGEN_PROMOCION
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_retencion

EXIT_USAGE = 2
EXIT_BROKER_UNREACHABLE = 4
MOTIVO_POR_DEFECTO = "promovida"
MAX_MOTIVO = 200  # characters of the reason kept in a closed record's origen_datos

AYUDA = """\
Promote a candidate key: close the old key's open gates, copy its holds to the new key
(docs/operacion.md, "Promoting a candidate").

Run it after the workers were rolled with the candidate's settings as the live ones. Every open
gate of --de is written closed (motivo sustituida: the reviewer app will not reopen it); every
gate of --de a person holds is held under --a too (same person and reason), unless --a already
has a hold or release record for that gate. A second run writes nothing. Refused (exit 2) when
--a has no open gate on the topic (nothing certified to promote to), unless --forzar.

Exit 0 done (also when nothing needed writing); 2 bad usage or refused (also by Kafka: an ACL,
Read and Write on FICHAS_TOPIC_PUERTA are needed); 4 Kafka unreachable."""


class Rechazo(ValueError):
    """The promotion is refused: the reason, in one line."""


@dataclass(frozen=True)
class Plan:
    """What a promotion writes, and one line per record saying why."""

    registros: list[EstadoPuerta]
    lineas: list[str]


def _parser() -> argparse.ArgumentParser:
    """Arguments of ``fichas puerta promover``."""
    p = argparse.ArgumentParser(
        prog="fichas puerta promover",
        description=AYUDA,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--de", required=True, metavar="CLAVE_ID", help="the old (live) key id")
    p.add_argument("--a", required=True, metavar="CLAVE_ID", help="the promoted candidate key id")
    p.add_argument(
        "--motivo",
        default=MOTIVO_POR_DEFECTO,
        help="why, in a few words: kept in the closed records' origen_datos after the new key "
        f"id (at most {MAX_MOTIVO} characters; default: {MOTIVO_POR_DEFECTO})",
    )
    p.add_argument(
        "--forzar",
        action="store_true",
        help="promote even when the new key has no open gate (everything goes to review)",
    )
    p.add_argument("--kafka", metavar="BOOTSTRAP", help="brokers (default FICHAS_KAFKA_BROKERS)")
    return p


def claves(estados: Mapping[str, EstadoPuerta]) -> dict[str, ClavePuerta]:
    """Every key with a record on the topic, by id."""
    return {e.clave.texto(): e.clave for e in estados.values()}


def abiertas(clave: ClavePuerta, estados: Mapping[str, EstadoPuerta]) -> list[EstadoPuerta]:
    """The key's gate records that are open (a family's own, covered, or the pooled one)."""
    return sorted(
        (e for e in estados.values() if e.clave == clave and not e.retencion and e.abierta),
        key=lambda e: e.id,
    )


def cerrada(estado: EstadoPuerta, nueva_id: str, ahora: datetime, motivo: str) -> EstadoPuerta:
    """The closed record of a gate whose key a promotion replaced; ``origen_datos`` names the
    new key and the operator's reason. Pure."""
    return EstadoPuerta(
        familia=estado.familia,
        clave=estado.clave,
        abierta=False,
        umbral=None,
        objetivo=estado.objetivo,
        delta=estado.delta,
        n=estado.n,
        k=estado.k,
        origen_datos=f"{ORIGEN_PROMOCION}:{nueva_id}; {motivo.strip()[:MAX_MOTIVO]}",
        motivo=MOTIVO_PUERTA_SUSTITUIDA,
        actualizada_en=ahora,
    )


def planear(
    de_id: str,
    a_id: str,
    estados: Mapping[str, EstadoPuerta],
    ahora: datetime,
    forzar: bool = False,
    motivo: str = MOTIVO_POR_DEFECTO,
) -> Plan:
    """What ``fichas puerta promover`` writes. Pure; ``Rechazo`` when it must not run."""
    if de_id == a_id:
        raise Rechazo("--de and --a name the same key")
    en_topic = claves(estados)
    if de_id not in en_topic:
        vistas = ", ".join(sorted(en_topic)) or "none"
        raise Rechazo(f"no key {de_id} on the gate topic (keys seen: {vistas})")
    vieja, nueva = en_topic[de_id], en_topic.get(a_id)
    if not forzar and (nueva is None or not abiertas(nueva, estados)):
        raise Rechazo(
            f"key {a_id} has no open gate on the gate topic: nothing certified to promote to "
            "(wait until the reviewer app opens its gates, or pass --forzar)"
        )
    registros, lineas = [], []
    for estado in abiertas(vieja, estados):
        registros.append(cerrada(estado, a_id, ahora, motivo))
        lineas.append(f"gate {estado.id} closed (sustituida by {a_id})")
    for hold in sorted(estados.values(), key=lambda e: e.id):
        if hold.clave != vieja or hold.motivo != MOTIVO_PUERTA_RETENIDA:
            continue
        if nueva is None:
            raise Rechazo(
                f"key {a_id} is not on the gate topic: the hold of {hold.id} cannot be copied"
            )
        if id_retencion(hold.familia, nueva) in estados:
            continue  # held or released under the new key already: a person's last word
        copia = hold.model_copy(update={"clave": nueva, "actualizada_en": ahora})
        registros.append(copia)
        lineas.append(f"hold {hold.id} copied to {copia.id} (held by {hold.retenida_por})")
    return Plan(registros, lineas)


def _error(mensaje: str, code: int = EXIT_USAGE) -> int:
    """One line on stderr, and the exit code."""
    print(f"fichas puerta promover: {mensaje}", file=sys.stderr)
    return code


def main(argv: Sequence[str]) -> int:
    """Entry point of ``fichas puerta promover``."""
    args = _parser().parse_args(list(argv))
    from herramientas.arranque import cargar_ajustes
    from infra.config import ConfigError

    try:
        settings = cargar_ajustes()
    except ConfigError as exc:
        return _error("; ".join(exc.lines))
    if args.kafka:
        settings = settings.model_copy(update={"kafka_brokers": args.kafka})
    try:
        return asyncio.run(_ejecutar(args, settings))
    except Exception as exc:
        from herramientas.retencion import rechazo_kafka

        return rechazo_kafka(exc, settings, "fichas puerta promover")


async def _ejecutar(args: argparse.Namespace, settings: Any) -> int:
    """Read the topic, plan, write, say what happened."""
    from datetime import UTC

    from infra.kafka.clients import BrokerUnreachable
    from infra.kafka.topics import ensure_topics
    from puerta.topico import escribir_estados, leer_estados

    try:
        await ensure_topics(settings)
        estados = await leer_estados(settings, settings.topic_puerta)
    except (BrokerUnreachable, TimeoutError, ConnectionError) as exc:
        return _error(f"Kafka unreachable: {exc}", EXIT_BROKER_UNREACHABLE)
    try:
        plan = planear(args.de, args.a, estados, datetime.now(UTC), args.forzar, args.motivo)
    except Rechazo as exc:
        return _error(str(exc))
    if plan.registros:
        try:
            await escribir_estados(settings, plan.registros, settings.topic_puerta)
        except (TimeoutError, ConnectionError) as exc:
            return _error(f"Kafka unreachable: {exc}", EXIT_BROKER_UNREACHABLE)
    for linea in plan.lineas:
        print(linea)
    if plan.registros:
        print(
            f"written to {settings.topic_puerta}: key {args.de} publishes "
            f"nothing any more; key {args.a} is the live one"
        )
    else:
        print(f"nothing to write: key {args.de} has no open gate and no hold left to copy")
    return 0
