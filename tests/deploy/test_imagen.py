"""The production image, built by ``scripts/imagen.sh`` and run as real containers.

Each container runs as ``k8s/base`` runs it (``harness.contenedor``: its user and group, a
read-only root, no capabilities, no privilege escalation, its emptyDirs, its command and
arguments, its ConfigMap), on the host's network so that it reaches the session's broker,
PostgreSQL and fake LLM on 127.0.0.1; what points at the cluster (brokers, the LLM, the
Secrets' files, replication for one broker) the test points at its own services. The image is
built once per session (the ``imagen`` fixture; marker ``imagen``); docs/despliegue.md, "The
image", says how and what it costs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from esquemas.constantes import MOTIVO_SIN_GARANTIA
from esquemas.estado_puerta import ClavePuerta
from grafo.retry import Backoff
from harness import contenedor as c
from harness.basedatos import base_nueva
from harness.eventos import evento_json
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.revisor import ficha_en_revision
from harness.topicos import Topics, create_input_topic, produce, read_all, wait_records
from harness.worker import settings_from_env
from infra.network import free_port
from revision.almacen.cola import Almacen, Cierre, Llegada
from revision.almacen.decisiones import decision_de
from revision.almacen.filas import ItemNuevo
from revision.almacen.migrations import ESQUEMA as ESQUEMA_REVISION
from stream.gobierno.identidad import clave_servida

Objetos = list[dict[str, Any]]

# The first test's setup builds the image when nothing did before (a cold build on a busy
# machine took over 10 min; `make test` builds it before pytest, and the fixture finds it).
pytestmark = pytest.mark.timeout(1800)


@pytest.fixture(scope="module")
def objetos() -> Objetos:
    """``k8s/base`` rendered once for the module."""
    return c.manifiestos()


@pytest.fixture
def base_migrada(postgres_dsn: str) -> Iterator[str]:
    """A new database on the suite's PostgreSQL, for one test."""
    with base_nueva(postgres_dsn, prefijo="fichas_imagen") as dsn:
        yield dsn


def _servicios(dsn: str, **mas: str) -> dict[str, str]:
    """What a container gets from its cluster, pointed at this session's services instead: the
    DSN and the key as variables, in place of the manifests' files of the Secret (not mounted)."""
    return {
        "FICHAS_POSTGRES_DSN": dsn,
        "FICHAS_POSTGRES_DSN_ARCHIVO": "",
        "FICHAS_LLM_API_KEY_ARCHIVO": "",
        "FICHAS_KAFKA_SEGURIDAD": "PLAINTEXT",
        "FICHAS_KAFKA_SASL_MECANISMO": "",
        "FICHAS_KAFKA_CONTRASENA_ARCHIVO": "",
        "FICHAS_KAFKA_CA_ARCHIVO": "",
        "FICHAS_REPLICACION": "1",
        "FICHAS_PARTICIONES": "2",
        "FICHAS_LLM_MODELO": "fake",
        "FICHAS_LLM_API_KEY": "clave-de-prueba",
        **mas,
    }


def _en_contenedor(
    objetos: Objetos,
    kind: str,
    nombre: str,
    cual: str,
    cambios: dict[str, str],
    log: Path,
    puerto: int = 0,
    argumentos: list[str] | None = None,
) -> c.Contenedor:
    """Container ``cual`` of workload ``nombre`` as the manifest runs it, not started."""
    spec = c.pod(objetos, kind, nombre)
    uno = c.contenedor(spec, cual)
    return c.Contenedor(
        c.opciones(spec, uno),
        argumentos if argumentos is not None else c.argumentos(uno),
        c.entorno(objetos, uno, cambios),
        log,
        puerto,
    )


def _migrar(objetos: Objetos, dsn: str, log: Path) -> str:
    """The worker pod's ``migrar`` init container, run to its end: its output."""
    init = _en_contenedor(objetos, "Deployment", "fichas", "migrar", _servicios(dsn), log)
    init.start()
    try:
        assert init.wait(timeout=300) == 0, init.log_tail()
    finally:
        init.close()
    return init.salida()


async def _worker(
    objetos: Objetos,
    dsn: str,
    kafka: KafkaBroker,
    llm: FakeLLM,
    topics: Topics,
    eventos: list[tuple[bytes, bytes]],
    tmp_path: Path,
    **mas: str,
) -> c.Contenedor:
    """The worker pod: its init container run, ``eventos`` on a new input topic, the worker
    container started and ready."""
    _migrar(objetos, dsn, tmp_path / "migrar.log")
    await create_input_topic(kafka.bootstrap, topics.entrada)
    await produce(kafka.bootstrap, topics.entrada, eventos)
    puerto = free_port()
    cambios = _servicios(
        dsn,
        FICHAS_KAFKA_BROKERS=kafka.bootstrap,
        FICHAS_LLM_URL=llm.url,
        FICHAS_METRICAS_PUERTO=str(puerto),
        **topics.env(),
        **mas,
    )
    worker = _en_contenedor(
        objetos, "Deployment", "fichas", "worker", cambios, tmp_path / "w.log", puerto
    )
    worker.start()
    try:
        worker.wait_ready()
    except BaseException:
        worker.close()
        raise
    return worker


def _gracia(objetos: Objetos, kind: str, nombre: str) -> int:
    """The pod's ``terminationGracePeriodSeconds``: what the kubelet waits after SIGTERM."""
    return int(c.pod(objetos, kind, nombre)["terminationGracePeriodSeconds"])


def _con_marca(capas: list[Path], marca: bytes) -> list[str]:
    """Every regular file of these layer folders that holds ``marca``."""
    return [
        str(f)
        for capa in capas
        for f in capa.rglob("*")
        if f.is_file() and not f.is_symlink() and marca in f.read_bytes()
    ]


def test_ninguna_capa_guarda_la_ca_de_la_maquina(imagen: str, tmp_path: Path) -> None:
    """The build had the machine's CA bundle as a secret (marked by a line of its own); no
    layer of the image, the base's included, holds that line (each layer read as the image
    store keeps it, files a later layer deletes included), and the image runs as the
    manifests expect: user 10001, ``fichas worker`` by default, its health check kept."""
    datos = json.loads(c.podman("image", "inspect", imagen).stdout)[0]
    assert datos["GraphDriver"]["Name"] == "overlay"
    rutas = datos["GraphDriver"]["Data"]
    capas = [Path(rutas["UpperDir"]), *map(Path, rutas.get("LowerDir", "").split(":"))]
    assert len(capas) == len(datos["RootFS"]["Layers"]) >= 3
    marca = c.marca_ca().encode()
    prueba = tmp_path / "capa" / "etc" / "ssl"
    prueba.mkdir(parents=True)
    (prueba / "ca.pem").write_bytes(marca + b"\n")
    assert _con_marca([tmp_path / "capa"], marca), "the search finds a baked-in bundle"
    assert _con_marca(capas, marca) == []
    config = datos["Config"]
    assert config["User"] == "10001:10001"
    assert config["Entrypoint"] == ["fichas"] and config["Cmd"] == ["worker"]
    assert config["StopSignal"] == "SIGTERM"
    assert "/health/live" in " ".join(datos["Healthcheck"]["Test"])


def test_la_construccion_falla_si_importa_el_arbol_de_fuentes(imagen: str, tmp_path: Path) -> None:
    """The Dockerfile's check of where ``herramientas`` comes from, run on the built image with
    the source tree at /src as the builder has it: from ``/`` it passes; from /src, where
    ``python -c`` imports the source tree (the trap of issue 50), it stops the build."""
    ins = c.instrucciones_dockerfile()
    (n,) = [n for n, (i, r) in enumerate(ins) if i == "RUN" and "herramientas.__file__" in r]
    paso, directorio = ins[n][1], [r for i, r in ins[:n] if i == "WORKDIR"][-1]
    fuentes = f"--volume={c.REPO}:/src:ro"
    comun = ["--pull=never", "--user=0", fuentes, "--entrypoint=/bin/sh", imagen]
    bien = c.ejecutar(*comun, "-c", f"cd {directorio} && {paso}")
    assert bien.returncode == 0, bien.stderr
    trampa = c.ejecutar(*comun, "-c", f"cd /src && {paso}")
    assert trampa.returncode != 0
    assert "herramientas se importa de /src, no del venv" in trampa.stderr


def test_migrar_como_contenedor_de_inicio(
    imagen: str, objetos: Objetos, base_migrada: str, tmp_path: Path
) -> None:
    """The init container migrates a new database, and a second pod's finds it current."""
    primera = _migrar(objetos, base_migrada, tmp_path / "migrar1.log")
    ultima = ESQUEMA_REVISION.ultima
    assert f"revision (postgres): schema version none -> {ultima} (migrated)" in primera
    assert "versiones (postgres): schema version none -> 1 (migrated)" in primera
    segunda = _migrar(objetos, base_migrada, tmp_path / "migrar2.log")
    assert f"revision (postgres): schema version {ultima} -> {ultima} (up to date)" in segunda
    with psycopg.connect(base_migrada) as conn:
        assert conn.execute("select count(*) from fichas_migraciones").fetchone()[0] >= 2


@pytest.mark.kafka
async def test_worker_convierte_eventos_de_un_topico_en_resultados(
    imagen: str,
    objetos: Objetos,
    base_migrada: str,
    kafka: KafkaBroker,
    fake_llm: FakeLLM,
    topics: Topics,
    tmp_path: Path,
) -> None:
    """Five events and a broken one on a real topic; the worker container sends the five to
    people (shadow mode: no gate is open for its key, the ConfigMap's FICHAS_PUERTA) and the
    broken one to the DLQ, then stops on SIGTERM with 0."""
    skus = [f"IMG-{n:03d}" for n in range(5)]
    eventos = [(s.encode(), evento_json(s).encode()) for s in skus]
    eventos.append((b"IMG-ROTO", b"{no es json"))
    worker = await _worker(objetos, base_migrada, kafka, fake_llm, topics, eventos, tmp_path)
    try:
        salidas = await wait_records(
            kafka.bootstrap, (topics.revision, topics.dlq), 6, 180, worker.log_tail
        )
        assert "fichas_events_total" in worker.metrics()
        assert worker.terminate(timeout=_gracia(objetos, "Deployment", "fichas")) == 0
    finally:
        worker.close()
    revision = [s["value"] for s in salidas if s["topic"] == topics.revision]
    assert sorted(r["sku"] for r in revision) == skus
    assert {r["motivo"] for r in revision} == {MOTIVO_SIN_GARANTIA}
    assert [s["key"] for s in salidas if s["topic"] == topics.dlq] == [b"IMG-ROTO"]
    assert "stopping: waiting up to" in worker.log_tail(400)


@pytest.mark.kafka
async def test_sigterm_termina_lo_empezado_dentro_de_la_gracia(
    imagen: str,
    objetos: Objetos,
    base_migrada: str,
    kafka: KafkaBroker,
    fake_llm: FakeLLM,
    topics: Topics,
    tmp_path: Path,
) -> None:
    """SIGTERM reaches ``fichas`` as the container's first process (podman passes it on, as
    the kubelet sends it): with fichas in flight on a slow LLM, the worker finishes the ones
    it started and exits 0 within the pod's terminationGracePeriodSeconds."""
    fake_llm.configure({"latency_ms": 1500})
    skus = [f"SIG-{n:03d}" for n in range(30)]
    eventos = [(s.encode(), evento_json(s).encode()) for s in skus]
    worker = await _worker(
        objetos, base_migrada, kafka, fake_llm, topics, eventos, tmp_path, FICHAS_CONCURRENCIA="4"
    )
    try:
        fake_llm.wait_for_requests(2, timeout=120, agent="generador")
        assert worker.terminate(timeout=_gracia(objetos, "Deployment", "fichas")) == 0
    finally:
        worker.close()
    empezadas = {r["sku"] for r in fake_llm.requests(agent="generador", bodies=False)}
    hechas = {r["value"]["sku"] for r in await read_all(kafka.bootstrap, topics.revision)}
    assert empezadas and hechas == empezadas, worker.log_tail()
    assert len(hechas) < len(skus)


@pytest.mark.kafka
def test_revisor_responde_listo(
    imagen: str,
    objetos: Objetos,
    base_migrada: str,
    kafka: KafkaBroker,
    topics: Topics,
    tmp_path: Path,
) -> None:
    """The review app's container, with the Deployment's arguments (its ports moved to free
    ones: the network is the host's), answers ``/health/ready`` on the probes' port, and stops
    on SIGTERM with 0 within its pod's grace."""
    _migrar(objetos, base_migrada, tmp_path / "migrar.log")
    spec = c.pod(objetos, "Deployment", "fichas-revisor")
    args = c.argumentos(c.contenedor(spec, "revisor"))
    # The pages' port and the one of /metrics and /health (the probes'), both moved.
    args[args.index("--port") + 1] = str(free_port())
    sondas = free_port()
    args[args.index("--metricas-puerto") + 1] = str(sondas)
    cambios = _servicios(base_migrada, FICHAS_KAFKA_BROKERS=kafka.bootstrap, **topics.env())
    log = tmp_path / "r.log"
    app = _en_contenedor(
        objetos, "Deployment", "fichas-revisor", "revisor", cambios, log, sondas, args
    )
    app.start()
    try:
        app.wait_ready()
        assert app.terminate(timeout=_gracia(objetos, "Deployment", "fichas-revisor")) == 0
    finally:
        app.close()


async def _guardar_decididas(dsn: str, clave: ClavePuerta, n: int, data_dir: Path) -> None:
    """``n`` fichas of the running generator under ``clave`` (an older evaluator), sent to
    people in shadow mode and approved by them: what ``--recalificar`` scores again."""
    almacen = await Almacen.abrir(dsn, data_dir)
    try:
        for i in range(n):
            sku = f"CAL-{i:03d}"
            # One attempt: the new judge (the fake LLM approves) would end the new loop on it,
            # the labelled ficha, so --recalificar keeps it (docs/puerta.md, "Re-scoring").
            datos = ficha_en_revision(
                sku, event_id=sku, motivo=MOTIVO_SIN_GARANTIA, puntuaciones=(0.4,)
            ) | {"intentos": 1}
            datos["clave"] = clave.model_dump(mode="json")
            llegada = Llegada(clave, 0.4, True, True)
            nuevo = ItemNuevo(sku, "revision", MOTIVO_SIN_GARANTIA, sku, 1, "zapatillas", [], datos)
            await almacen.guardar_item(nuevo, i, llegada)
            item = await almacen.item(sku)
            assert item is not None
            registro = decision_de(item, "aprobada", "ana", 1000.0 + i)
            await almacen.decidir(item, Cierre("aprobada", [], "ana", 1000.0 + i, registro, None))
    finally:
        await almacen.cerrar()


def test_el_job_calibrar_recalifica_el_almacen(
    imagen: str,
    objetos: Objetos,
    base_migrada: str,
    fake_llm: FakeLLM,
    tmp_path: Path,
) -> None:
    """The calibrar Job's command (``/bin/sh -c`` and its script, as the manifest writes it):
    people's decisions in the review store, taken under an older evaluator, scored again by
    the running one (the fake LLM), printed as an audit and written nowhere (``--dry-run``)."""
    _migrar(objetos, base_migrada, tmp_path / "migrar.log")
    # Kafka stays the cluster's (the ConfigMap's): this variant of the Job never reaches it.
    cambios = _servicios(base_migrada, FICHAS_LLM_URL=fake_llm.url)
    job = _en_contenedor(objetos, "Job", "fichas-calibrar", "calibrar", cambios, tmp_path / "j.log")
    viva = asyncio.run(clave_servida(settings_from_env(job.env), Backoff(max_wait_s=30)))
    vieja = viva.model_copy(update={"prompt_evaluador_sha256": "a" * 64})
    asyncio.run(_guardar_decididas(base_migrada, vieja, 6, tmp_path))
    fake_llm.configure({"default": {"evaluador": {"accion": "aprobar", "puntuacion": 0.97}}})
    fake_llm.reset()
    job.start()
    try:
        assert job.wait(timeout=300) == 0, job.log_tail()
    finally:
        job.close()
    salida = job.salida()
    assert "re-scored by the running evaluator: 6 from almacen" in salida, salida
    assert int(fake_llm.stats()["by_agent"].get("evaluador", 0)) == 6
    # --dry-run: the states printed (for the running key, not the older one), no audit file.
    assert "audit file:" not in salida
    estados = json.loads(salida.strip().splitlines()[-1])
    claves = {json.dumps(e["clave"], sort_keys=True) for e in estados}
    assert claves == {json.dumps(viva.model_dump(mode="json"), sort_keys=True)}
