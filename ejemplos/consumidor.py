"""A subscriber of ``fichas.publicadas``: rebuild the current catalogue, then stay live.

    pip install aiokafka jsonschema rfc3339-validator
    python ejemplos/consumidor.py --brokers localhost:9092 --salida catalogo.json

What every subscriber of the topic has to do (docs/contrato.md, "Subscribing"):

1. Read from the beginning. The topic is compacted by SKU, so the newest ficha of every SKU is
   there however old; older versions may also still be there until the broker compacts them.
2. Route on the headers without parsing: skip a record whose ``esquema`` is not
   ``FichaPublicada`` or whose major ``esquema_version`` is not the one this code knows.
3. Validate the value against ``contrato/esquemas/FichaPublicada.json`` tolerantly: ignore the
   fields you do not know at every level (the files never say ``additionalProperties: false``,
   and this reader would ignore it if one did), and read a value a later minor version adds to
   a closed list (``enum``: a decision kind, an evaluator mode) as unknown, not as an invalid
   record (counted in ``desconocidos``; docs/contrato.md, "Readers never fail open").
4. Keep, per SKU, the highest ``version``; an ``event_id`` already applied is a redelivery
   (at-least-once delivery repeats an outcome byte for byte) and is ignored.
5. Stay subscribed: later fichas update the catalogue as they come.

The catalogue lives in memory and is written to ``--salida`` (sku -> ficha, atomically) once the
reader has caught up with the end of the topic and after every later change. Standard output
gets one JSON line when caught up, then one per change. SIGTERM or SIGINT stop it (exit 0).
This reader joins no consumer group and commits nothing: each start rebuilds from the
beginning, which is what compaction is for. A service that keeps the catalogue in a database
would instead store ``(sku, version, event_id)`` with each row and apply the same rules there.
A secured cluster: ``--seguridad``, ``--usuario``, ``--contrasena-archivo``... named after the
product's ``FICHAS_KAFKA_*`` variables, their defaults (docs/contrato.md, "Kafka security").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import jsonschema
from aiokafka import AIOKafkaConsumer, ConsumerRecord
from aiokafka.errors import KafkaError
from aiokafka.helpers import create_ssl_context

ESQUEMA = "FichaPublicada"
VERSION_MAYOR = "1"  # the major schema version this code was written for
ESQUEMAS = Path(__file__).resolve().parents[1] / "contrato" / "esquemas"

log = logging.getLogger("consumidor")


def validador_tolerante(esquema: dict[str, Any], nuevos: list[str]) -> Any:
    """A draft-07 validator of ``esquema`` that reads a later minor version's records.

    ``enum``: a text value the list does not hold is a value a later version added; it passes
    and is appended to ``nuevos``. ``additionalProperties: false`` is not enforced: fields are
    only ever added within a major version. Everything else is checked as draft-07 says.
    """
    base = jsonschema.Draft7Validator

    def enum(validador: Any, valores: list[Any], valor: Any, subesquema: Any) -> Any:
        if isinstance(valor, str) and all(isinstance(v, str) for v in valores):
            if valor not in valores:
                nuevos.append(valor)
            return
        yield from base.VALIDATORS["enum"](validador, valores, valor, subesquema)

    def campos(validador: Any, extra: Any, valor: Any, subesquema: Any) -> Any:
        if extra is not False:
            yield from base.VALIDATORS["additionalProperties"](validador, extra, valor, subesquema)

    tolerante = jsonschema.validators.extend(base, {"enum": enum, "additionalProperties": campos})
    return tolerante(esquema, format_checker=base.FORMAT_CHECKER)


class Catalogo:
    """The newest ficha of every SKU, and counts of what was skipped and why."""

    def __init__(self, esquema: dict[str, Any]) -> None:
        self.fichas: dict[str, dict[str, Any]] = {}
        self.cuentas = {
            "leidos": 0,
            "duplicados": 0,
            "antiguos": 0,
            "ajenos": 0,
            "invalidos": 0,
            "desconocidos": 0,
        }
        self._nuevos: list[str] = []
        self._validador = validador_tolerante(esquema, self._nuevos)

    def aplicar(self, record: ConsumerRecord) -> dict[str, Any] | None:
        """Apply one record; return the ficha if the catalogue changed, else None."""
        self.cuentas["leidos"] += 1
        cabeceras = {k: bytes(v).decode("utf-8", "replace") for k, v in record.headers or ()}
        mayor = cabeceras.get("esquema_version", VERSION_MAYOR).split(".")[0]
        if cabeceras.get("esquema", ESQUEMA) != ESQUEMA or mayor != VERSION_MAYOR:
            self.cuentas["ajenos"] += 1  # another schema or major version: not for this code
            return None
        por_cabecera = self.fichas.get(cabeceras.get("sku", ""))
        if por_cabecera is not None and por_cabecera["event_id"] == cabeceras.get("event_id"):
            self.cuentas["duplicados"] += 1  # a redelivery, known without parsing the value
            return None
        try:
            ficha: dict[str, Any] = json.loads(record.value if record.value is not None else "")
            self._nuevos.clear()
            self._validador.validate(ficha)
        except (ValueError, jsonschema.ValidationError) as exc:
            log.warning("skipping offset %s: %s", record.offset, str(exc).splitlines()[0])
            self.cuentas["invalidos"] += 1
            return None
        if self._nuevos:  # a later minor version's values: the ficha is read all the same
            log.info("offset %s: values this code does not know: %s", record.offset, self._nuevos)
            self.cuentas["desconocidos"] += 1
        actual = self.fichas.get(ficha["sku"])
        if actual is not None and actual["event_id"] == ficha["event_id"]:
            self.cuentas["duplicados"] += 1
            return None
        if actual is not None and actual["version"] > ficha["version"]:
            self.cuentas["antiguos"] += 1
            return None
        self.fichas[ficha["sku"]] = ficha
        return ficha


def escribir(ruta: Path | None, catalogo: Catalogo) -> None:
    """Replace the output file at once, so a reader never sees half a catalogue."""
    if ruta is None:
        return
    temporal = ruta.with_name(ruta.name + ".tmp")
    temporal.write_text(json.dumps(catalogo.fichas, ensure_ascii=False), encoding="utf-8")
    temporal.replace(ruta)


def imprimir(linea: dict[str, Any]) -> None:
    """One JSON line on standard output, flushed at once."""
    print(json.dumps(linea, ensure_ascii=False), flush=True)


async def seguir(args: argparse.Namespace, parar: asyncio.Event) -> None:
    """Read from the beginning to the end offsets seen at start, report, then keep reading."""
    esquema = json.loads((args.esquemas / f"{ESQUEMA}.json").read_text(encoding="utf-8"))
    catalogo = Catalogo(esquema)
    consumer = AIOKafkaConsumer(
        args.topic,
        **opciones_de_conexion(args),
        group_id=None,  # no group: every partition, from the beginning, nothing committed
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        # The worker writes in transactions: read only committed ones (docs/contrato.md).
        isolation_level="read_committed",
    )
    await consumer.start()
    try:
        espera = asyncio.get_running_loop().time() + 30
        while not consumer.assignment():  # assigned once the topic's metadata arrives
            if asyncio.get_running_loop().time() > espera:
                raise SystemExit(f"topic {args.topic} not found")
            await asyncio.sleep(0.1)
        fin = await consumer.end_offsets(list(consumer.assignment()))
        al_dia = False
        while not parar.is_set():
            lote = await consumer.getmany(timeout_ms=500)
            registros = [r for records in lote.values() for r in records]
            cambios = [f for r in registros if (f := catalogo.aplicar(r)) is not None]
            if not al_dia and all([await consumer.position(tp) >= fin[tp] for tp in fin]):
                al_dia = True
                escribir(args.salida, catalogo)
                imprimir({"evento": "al_dia", "skus": len(catalogo.fichas), **catalogo.cuentas})
            elif al_dia and cambios:
                escribir(args.salida, catalogo)
                for f in cambios:
                    imprimir({"evento": "cambio", "sku": f["sku"], "version": f["version"]})
    finally:
        await consumer.stop()


def opciones_de_conexion(args: argparse.Namespace) -> dict[str, Any]:
    """aiokafka's connection options from the security options (checked by ``main``)."""
    opciones: dict[str, Any] = {
        "bootstrap_servers": args.brokers,
        "security_protocol": args.seguridad,
    }
    if args.seguridad.startswith("SASL_"):
        clave = Path(args.contrasena_archivo).read_text(encoding="utf-8").rstrip("\r\n")
        opciones |= {
            "sasl_mechanism": args.sasl_mecanismo,
            "sasl_plain_username": args.usuario,
            "sasl_plain_password": clave,
        }
    if args.seguridad in ("SSL", "SASL_SSL"):
        opciones["ssl_context"] = create_ssl_context(
            cafile=args.ca_archivo or None,
            certfile=args.certificado_archivo or None,
            keyfile=args.clave_privada_archivo or None,
        )
    return opciones


def problemas_de_seguridad(args: argparse.Namespace) -> list[str]:
    """What is missing or unreadable among the security options, one line each."""
    problemas = []
    sasl, tls = args.seguridad.startswith("SASL_"), args.seguridad in ("SSL", "SASL_SSL")
    if args.seguridad not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        problemas.append(
            f"--seguridad {args.seguridad}: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"
        )
    for opcion, valor, hace_falta in (
        ("--sasl-mecanismo", args.sasl_mecanismo, sasl),
        ("--usuario", args.usuario, sasl),
        ("--contrasena-archivo", args.contrasena_archivo, sasl),
    ):
        if hace_falta and not valor:
            problemas.append(f"{opcion} is needed with --seguridad {args.seguridad}")
    if bool(args.certificado_archivo) != bool(args.clave_privada_archivo):
        problemas.append("--certificado-archivo and --clave-privada-archivo go together")
    for opcion, valor in (
        ("--contrasena-archivo", args.contrasena_archivo if sasl else ""),
        ("--ca-archivo", args.ca_archivo if tls else ""),
        ("--certificado-archivo", args.certificado_archivo if tls else ""),
        ("--clave-privada-archivo", args.clave_privada_archivo if tls else ""),
    ):
        if valor and not os.access(valor, os.R_OK):
            problemas.append(f"{opcion} {valor}: not a readable file")
    return problemas


def _opcion(parser: argparse.ArgumentParser, nombre: str, ayuda: str) -> None:
    """An option whose default is the product's ``FICHAS_KAFKA_<NAME>`` variable."""
    variable = "FICHAS_KAFKA_" + nombre.upper().replace("-", "_")
    parser.add_argument(
        f"--{nombre}", default=os.environ.get(variable, ""), help=f"{ayuda} ({variable})"
    )


def main() -> int:
    """Parse the options, stop cleanly on SIGTERM or SIGINT; exit 2 on bad options, 1 when
    Kafka refuses or cannot be reached (one line on standard error)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--brokers", default=os.environ.get("FICHAS_KAFKA_BROKERS", "localhost:9092")
    )
    parser.add_argument("--topic", default="fichas.publicadas")
    parser.add_argument("--esquemas", type=Path, default=ESQUEMAS, help="contrato/esquemas")
    parser.add_argument("--salida", type=Path, help="where to write the catalogue (JSON)")
    parser.set_defaults(seguridad=os.environ.get("FICHAS_KAFKA_SEGURIDAD") or "PLAINTEXT")
    parser.add_argument("--seguridad", help="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
    _opcion(parser, "sasl-mecanismo", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
    _opcion(parser, "usuario", "SASL user")
    _opcion(parser, "contrasena-archivo", "file holding the SASL password")
    _opcion(parser, "ca-archivo", "PEM file of the CA that signs the brokers' certificates")
    _opcion(parser, "certificado-archivo", "client certificate (mutual TLS)")
    _opcion(parser, "clave-privada-archivo", "its unencrypted private key")
    args = parser.parse_args()
    args.seguridad = args.seguridad.upper()
    problemas = problemas_de_seguridad(args)
    if problemas:
        parser.error("; ".join(problemas))
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(message)s")

    async def correr() -> None:
        parar = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(sig, parar.set)
        await seguir(args, parar)

    try:
        asyncio.run(correr())
    except KafkaError as exc:  # a refused login or ACL, or no broker: aiokafka's own words
        print(
            f"consumidor: Kafka at {args.brokers} as {args.usuario or args.seguridad}: {exc}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
