"""``fichas revisor``: run the web app; ``fichas revisor usuarios NOMBRE``: add a reviewer.

The app's security settings are options of this command (``--host``, 127.0.0.1 by default;
``--cookie-segura``, ``--proxies``, ``--inactividad-min``; ``usuarios --baja``), not
``FICHAS_*`` variables, since only this process reads them; ``--apertura``,
``--apertura-familias`` and ``--sin-puerta-conjunta`` say what the certifier opens by itself.
A store PostgreSQL refuses (``migraciones.conexion.rechazo_postgres``) is one line and exit 2.
``crear_app`` wires every route to its handler in one list; the handlers live in the web
layer's modules (``revision.web.base`` says which does what). Why: docs/revision.md,
"Decisiones de diseño" and "El certificador".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import logging
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files

from aiohttp import web
from aiokafka.errors import KafkaConnectionError

from esquemas.estado_puerta import EstadoPuerta
from infra.config import Settings, load_settings_or_report
from infra.kafka.access import refusal
from infra.kafka.clients import BrokerUnreachable, check_access
from infra.kafka.topics import ensure_topics
from migraciones.conexion import rechazo_postgres
from puerta.alcance import Alcance
from puerta.topico import LectorPuertas, escribir_estado
from revision.almacen.cola import Almacen
from revision.almacen.cuentas import Cuentas
from revision.almacen.database import open_database
from revision.almacen.flujo import Flujo
from revision.almacen.recalificaciones import Recalificaciones
from revision.certificador.apertura import APERTURA_AUTOMATICA, APERTURAS, REVISAR_S, Apertura
from revision.certificador.lease import Lease
from revision.certificador.rondas import sin_propagar
from revision.certificador.vigilancia import Vigilancia
from revision.web import acciones, operacion, paginas
from revision.web import pagina_puertas as puertas
from revision.web.acceso import ACCESO, Acceso, exigir_sesion, login_get, login_post, logout
from revision.web.base import CTX, ENVIO_S, Contexto, cabeceras
from revision.web.metricas import metricas_revision
from revision.web.seguridad import INACTIVIDAD_S, Red, hash_clave, redes
from versiones.almacen import open_version_store

log = logging.getLogger("fichas.revisor")

HOST = "127.0.0.1"
PUERTO = 8080
MIN_CLAVE = 8
EXIT_FALLO = 1
EXIT_USAGE = 2
EXIT_BROKER_UNREACHABLE = 4


@dataclass(frozen=True)
class Seguridad:
    """The command's security options, as the web app's context takes them
    (``metricas_puerto``: where /metrics and /health/* go, None: with the pages)."""

    cookie_segura: bool = False
    proxies: tuple[Red, ...] = ()
    inactividad_s: float = INACTIVIDAD_S
    apertura: str = APERTURA_AUTOMATICA
    alcance: Alcance = field(default_factory=Alcance)
    ronda_s: float = REVISAR_S
    envio_s: float = ENVIO_S
    metricas_puerto: int | None = None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fichas revisor",
        description="Reviewer web app: the queue of fichas.revision_manual and "
        "fichas.muestra_revision, decisions to fichas.decisiones, approvals to "
        "fichas.publicadas. Configuration from FICHAS_* variables. "
        "'fichas revisor usuarios NOMBRE' adds a reviewer (password from stdin or a prompt).",
    )
    parser.add_argument("--host", default=HOST, help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=PUERTO, help="port (default 8080)")
    parser.add_argument(
        "--metricas-puerto",
        type=int,
        default=None,
        metavar="PUERTO",
        help="serve /metrics and /health/* on this port only, not on --port (which then answers "
        "404 for them): behind an Ingress that routes --port, they stay inside the cluster "
        "(default: on --port, with the pages)",
    )
    parser.add_argument(
        "--cookie-segura",
        action="store_true",
        help="mark the session cookie Secure (when served over HTTPS)",
    )
    parser.add_argument(
        "--proxies",
        type=_redes,
        default=(),
        metavar="RED[,RED...]",
        help="trusted reverse proxies (addresses or networks, e.g. 10.0.0.0/8): only requests "
        "from these have their X-Forwarded-For read for the login limits (default: none, the "
        "TCP peer is the client)",
    )
    parser.add_argument(
        "--inactividad-min",
        type=float,
        default=INACTIVIDAD_S / 60,
        help=f"minutes without a request after which a session ends (default "
        f"{INACTIVIDAD_S // 60:.0f}; sessions end 12 h after login in any case)",
    )
    parser.add_argument(
        "--apertura",
        choices=APERTURAS,
        default=APERTURA_AUTOMATICA,
        help="automatica (default): the app opens a gate on fichas.puerta as soon as the "
        "shadow-mode decisions certify it (anytime-valid, in arrival order); manual: the "
        "'Puertas' page shows it ready to open and a reviewer opens it with one click",
    )
    parser.add_argument(
        "--apertura-familias",
        default=None,
        metavar="FAMILIA[,FAMILIA...]",
        help="the families the app opens and covers by itself (default: every family); a "
        "family outside the list shows its evidence and a reviewer opens it with one click",
    )
    parser.add_argument(
        "--sin-puerta-conjunta",
        action="store_true",
        help="never open the pooled gate (*), so no family is covered by it",
    )
    parser.add_argument(
        "--ronda-s",
        type=float,
        default=REVISAR_S,
        help=f"seconds between the certifier's and the online bound's rounds (default "
        f"{REVISAR_S:.0f})",
    )
    parser.add_argument(
        "--envio-s",
        type=float,
        default=ENVIO_S,
        help=f"seconds a reviewer's decision waits for Kafka's acknowledgement before the page "
        f"says it is stored and will be sent once Kafka answers (default {ENVIO_S:.0f})",
    )
    return parser


def _redes(texto: str) -> tuple[Red, ...]:
    """``--proxies``: a malformed entry is a usage error, never a silently ignored proxy."""
    try:
        return redes(texto)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``fichas revisor``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["usuarios"]:
        return usuarios(argv[1:])
    args = _parser().parse_args(argv)
    settings = load_settings_or_report("fichas revisor")
    if settings is None:
        return EXIT_USAGE
    from infra import eventloop, logs

    logs.configure(settings.log_nivel)
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

    if args.inactividad_min <= 0:
        print("fichas revisor: --inactividad-min must be positive", file=sys.stderr)
        return EXIT_USAGE
    if args.ronda_s <= 0:
        print("fichas revisor: --ronda-s must be positive", file=sys.stderr)
        return EXIT_USAGE
    if args.envio_s <= 0:
        print("fichas revisor: --envio-s must be positive", file=sys.stderr)
        return EXIT_USAGE
    try:
        alcance = Alcance.de_texto(args.apertura_familias, not args.sin_puerta_conjunta)
    except ValueError as exc:
        print(f"fichas revisor: --apertura-familias: {exc}", file=sys.stderr)
        return EXIT_USAGE
    seguridad = Seguridad(
        args.cookie_segura,
        args.proxies,
        args.inactividad_min * 60,
        args.apertura,
        alcance,
        args.ronda_s,
        args.envio_s,
        args.metricas_puerto,
    )
    try:
        eventloop.run(servir(settings, args.host, args.port, seguridad))
    except BrokerUnreachable as exc:
        log.critical("%s; exiting", exc)
        return EXIT_BROKER_UNREACHABLE
    except KafkaConnectionError as exc:  # the broker went away between two start-up steps
        log.critical(
            "Kafka at %s (FICHAS_KAFKA_BROKERS) lost: %s; exiting", settings.kafka_brokers, exc
        )
        return EXIT_BROKER_UNREACHABLE
    except Exception as exc:
        rechazo = refusal(exc, settings)  # a login, a certificate or an ACL: exit 2, one line
        if rechazo is None:
            raise
        log.critical("%s; exiting", rechazo)
        return EXIT_USAGE
    return 0


def usuarios(argv: Sequence[str]) -> int:
    """Add a reviewer, or set a new password (the password is read, never an argument); or,
    with ``--baja``, disable one. Either way the reviewer's open sessions end."""
    parser = argparse.ArgumentParser(
        prog="fichas revisor usuarios",
        description="Add a reviewer (or change their password, which ends their sessions). The "
        "password comes from standard input when it is not a terminal, else from a prompt. "
        "--baja disables the reviewer and ends their sessions; adding them again enables them.",
    )
    parser.add_argument("nombre")
    parser.add_argument(
        "--baja", action="store_true", help="disable this reviewer and end their sessions"
    )
    args = parser.parse_args(argv)
    if args.baja:
        return _baja(args.nombre)
    if sys.stdin.isatty():
        clave = getpass.getpass(f"Password for {args.nombre}: ")
    else:
        clave = sys.stdin.readline().rstrip("\n")
    if len(clave) < MIN_CLAVE:
        print(
            f"fichas revisor usuarios: the password needs {MIN_CLAVE} characters or more",
            file=sys.stderr,
        )
        return 2
    settings = load_settings_or_report("fichas revisor usuarios")
    if settings is None:
        return EXIT_USAGE
    try:
        asyncio.run(guardar_usuario(settings, args.nombre, hash_clave(clave)))
    except Exception as exc:
        return _fallo_almacen(exc, settings)
    print(f"reviewer {args.nombre} saved")
    return 0


def _baja(nombre: str) -> int:
    """``--baja``: 0 when the reviewer is now disabled, 1 when there was no such reviewer."""
    settings = load_settings_or_report("fichas revisor usuarios")
    if settings is None:
        return EXIT_USAGE
    try:
        existia = asyncio.run(_dar_de_baja(settings, nombre))
    except Exception as exc:
        return _fallo_almacen(exc, settings)
    if not existia:
        print(f"fichas revisor usuarios: no reviewer named {nombre}", file=sys.stderr)
        return 1
    print(f"reviewer {nombre} disabled; their sessions ended")
    return 0


def _fallo_almacen(exc: Exception, settings: Settings) -> int:
    """``fichas revisor usuarios`` could not reach or use the accounts' store: one line, exit 2
    when PostgreSQL refused the DSN (a login, a database, a privilege), else exit 1."""
    rechazo = rechazo_postgres(exc, settings.postgres_dsn)
    if rechazo is not None:
        print(f"fichas revisor usuarios: {rechazo}", file=sys.stderr)
        return EXIT_USAGE
    print(
        f"fichas revisor usuarios: the store could not be used: {type(exc).__name__}: {exc}",
        file=sys.stderr,
    )
    return EXIT_FALLO


async def _dar_de_baja(settings: Settings, nombre: str) -> bool:
    """Open the accounts, disable the reviewer, close them."""
    cuentas = await Cuentas.abrir(settings.postgres_dsn, settings.data_dir)
    try:
        return await cuentas.dar_de_baja(nombre)
    finally:
        await cuentas.cerrar()


async def guardar_usuario(settings: Settings, nombre: str, hash_: str) -> None:
    """Open the accounts (migrated under the schema lock), save the reviewer, close them."""
    cuentas = await Cuentas.abrir(settings.postgres_dsn, settings.data_dir)
    try:
        await cuentas.guardar_usuario(nombre, hash_)
    finally:
        await cuentas.cerrar()


async def vigilancia_de(
    settings: Settings,
    almacen: Almacen,
    lector: LectorPuertas,
    lease: Lease | None = None,
    cada_s: float = REVISAR_S,
) -> Vigilancia:
    """The gate monitor, its sequences rebuilt from the stored verdicts, writing closures to
    the gate topic (each once, on the lease holder); started once the reader has read the
    gates that exist, so a restart never publishes a closure the topic already has."""

    async def escribir(estado: EstadoPuerta) -> None:
        await escribir_estado(settings, estado, topic=settings.topic_puerta)

    vigilancia = Vigilancia(
        lector.estados,
        escribir,
        almacen=almacen,
        titular=(lambda: lease.held) if lease is not None else (lambda: True),
        cada_s=cada_s,
    )
    await vigilancia.refrescar()
    await lector.al_dia()
    return vigilancia


def crear_app(ctx: Contexto, acceso: Acceso, internas: bool = True) -> web.Application:
    """The aiohttp application: every route and the handler that answers it, the session
    middleware in front of them (``revision.web.acceso``) and the security headers on every
    response (``revision.web.base.cabeceras``). ``internas`` False: without /metrics and
    /health/*, which ``crear_app_interna`` serves on a port of their own."""
    app = web.Application(middlewares=[exigir_sesion], client_max_size=256 * 1024)
    app[CTX] = ctx
    app[ACCESO] = acceso
    app.on_response_prepare.append(cabeceras)
    app.router.add_get("/", paginas.cola)
    app.router.add_get("/item", paginas.item_get)
    app.router.add_post("/item/aprobar", acciones.aprobar)
    app.router.add_post("/item/rechazar", acciones.rechazar)
    app.router.add_post("/item/muestra", acciones.muestra)
    app.router.add_post("/item/corregir", acciones.corregir)
    app.router.add_get("/puertas", puertas.puertas_ver)
    app.router.add_post("/puertas/abrir", puertas.puertas_abrir)
    app.router.add_post("/puertas/retener", puertas.puertas_retener)
    app.router.add_post("/puertas/liberar", puertas.puertas_liberar)
    app.router.add_get("/login", login_get)
    app.router.add_post("/login", login_post)
    app.router.add_post("/logout", logout)
    app.router.add_get("/favicon.ico", operacion.favicon)
    if internas:
        _rutas_internas(app)
    app.router.add_static("/estatico/", str(files("revision.web") / "estatico"))
    return app


def crear_app_interna(ctx: Contexto) -> web.Application:
    """/metrics and /health/* alone, for ``--metricas-puerto``: Prometheus and the kubelet's
    probes reach them, an Ingress that routes the pages' port does not."""
    app = web.Application()
    app[CTX] = ctx
    _rutas_internas(app)
    return app


def _rutas_internas(app: web.Application) -> None:
    """The machine endpoints: no session (``revision.web.acceso.PUBLICAS``)."""
    app.router.add_get("/metrics", operacion.metrics)
    app.router.add_get("/health/live", operacion.live)
    app.router.add_get("/health/ready", operacion.ready)


async def servir(settings: Settings, host: str, port: int, seguridad: Seguridad) -> None:
    """Database, stream, gate monitor and certifier, web server; until SIGTERM or SIGINT.

    One database for both stores (the queue and the accounts): on SQLite they share its one
    connection and lock, as when they were one store, so no second connection ever finds the
    file busy."""
    database = await open_database(settings.postgres_dsn, settings.data_dir)
    almacen = Almacen(database)
    lector = LectorPuertas(settings.topic_puerta, client_id="fichas-revisor-puerta")
    # The consumer marks an arriving item shadow-mode evidence on the reader's view of the gates.
    flujo = Flujo(settings, almacen, lector.estados)

    async def escribir(estado: EstadoPuerta) -> None:
        await escribir_estado(settings, estado, topic=settings.topic_puerta)

    lease = Lease(database)
    apertura = Apertura(
        almacen,
        lector.estados,
        escribir,
        seguridad.apertura,
        alcance=seguridad.alcance,
        lease=lease,
        cada_s=seguridad.ronda_s,
    )
    log.info(
        "certifier: apertura %s; %s; lease holder id %s",
        seguridad.apertura,
        seguridad.alcance.describir(),
        lease.holder,
    )
    parar = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, parar.set)
    try:
        await check_access(settings)  # a refused login or certificate: one line, before any client
        # Topics before the gate reader, as the worker (docs/revision.md, «La vista existe
        # antes de la primera vuelta»); no broker: one line and exit 4 after FICHAS_KAFKA_ESPERA_S.
        await ensure_topics(settings)
        await lector.start(settings)
        vigilancia = await vigilancia_de(settings, almacen, lector, lease, seguridad.ronda_s)
        async with open_version_store(settings.postgres_dsn, settings.data_dir) as versiones:
            ctx = Contexto(
                almacen=almacen,
                flujo=flujo,
                versiones=versiones,
                metricas=metricas_revision(
                    almacen,
                    vigilancia,
                    settings.muestra_proporcion,
                    apertura,
                    lease,
                    settings.sombra_proporcion,
                ),
                modelo=settings.llm_modelo,
                vigilancia=vigilancia,
                muestra_proporcion=settings.muestra_proporcion,
                sombra_proporcion=settings.sombra_proporcion,
                apertura=apertura,
                envio_s=seguridad.envio_s,
                recalificaciones=Recalificaciones(database),
            )
            acceso = Acceso(
                cuentas=Cuentas(database),
                cookie_segura=seguridad.cookie_segura,
                proxies=seguridad.proxies,
                inactividad_s=seguridad.inactividad_s,
            )
            interno = seguridad.metricas_puerto
            aplicacion = crear_app(ctx, acceso, internas=interno is None)
            runner = web.AppRunner(aplicacion, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, host, port)
            await site.start()
            runners = [runner]
            if interno is not None:
                runners.append(web.AppRunner(crear_app_interna(ctx), access_log=None))
                await runners[-1].setup()
                await web.TCPSite(runners[-1], host, interno).start()
            # The lease is tried before the first rounds, so a sole replica writes at once.
            with contextlib.suppress(Exception):
                await lease.renew()
            tareas = [asyncio.create_task(lease.keep(), name="revisor-lease")]
            try:
                # Restart points of closures that happened while the app was down are written
                # before the consumer stores anything (docs/puerta.md, "Reinicio tras un
                # cierre"); the rounds that write gates start once the topics exist.
                await sin_propagar(apertura.reiniciar, "writing the gates' restart points")
                await flujo.start()
                tareas.append(asyncio.create_task(vigilancia.vigilar(), name="revisor-puerta"))
                tareas.append(asyncio.create_task(apertura.vigilar(), name="revisor-apertura"))
                print(f"fichas revisor serving http://{host}:{port}/", flush=True)
                await _primero(parar, flujo.rechazada)
                if flujo.rechazo is not None:
                    raise flujo.rechazo
            finally:
                for tarea in tareas:
                    tarea.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await tarea
                await lease.stop()
                for corredor in runners:
                    await corredor.cleanup()
                await flujo.stop()
    finally:
        await lector.stop()
        with contextlib.suppress(Exception):
            await database.close()


async def _primero(*eventos: asyncio.Event) -> None:
    """Return once any of the events is set (a signal, or Kafka refusing the app)."""
    esperas = [asyncio.create_task(evento.wait()) for evento in eventos]
    try:
        await asyncio.wait(esperas, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for espera in esperas:
            espera.cancel()


if __name__ == "__main__":
    raise SystemExit(main())
