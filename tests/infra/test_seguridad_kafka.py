"""Every Kafka client of the product against a secured broker, each with only its documented ACLs.

One broker for the module, started by the project's script in its secured mode
(``harness.kafka_broker.SecuredKafkaBroker``): SCRAM-SHA-512 over TLS and mutual TLS listeners,
certificates made here with openssl (``harness.pki``), SCRAM users written by
``kafka-storage format --add-scram``, the standard authorizer, and for each component exactly
the ACLs of its ``KafkaUser`` in ``k8s/base/kafka-usuarios/`` added with ``kafka-acls``
(``harness.acls``; the deployment guide's table is the same list, tests/deploy checks it).
The harness itself (topics, test input, reading outputs) is the PLAINTEXT listener's super user.

- ``fichas worker``, ``fichas revisor`` and ``fichas calibrar --publicar`` do their whole job
  over SCRAM and over mutual TLS: an event is processed, reviewed, approved over HTTP and
  published by the worker, and calibrar publishes gate states.
- The KEDA scaler's user reads the group's lag with its two ACLs.
- A wrong password, an untrusted CA and a missing ACL each end the command with exit 2 and one
  line naming the setting, nothing consumed or written, the password never in the output.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiokafka.errors import GroupCoordinatorNotAvailableError
from aiokafka.structs import TopicPartition

from harness import forkserver
from harness.acls import acl_commands
from harness.entorno import entorno
from harness.eventos import evento_json
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import SecuredKafkaBroker
from harness.nucleo import until
from harness.pki import CertificateAuthority
from harness.procesos import REPO
from harness.revisor import RevisorProcess, revisor_env
from harness.revisor_http import RevisorHttp
from harness.topicos import Topics, end_offsets, produce, read_all
from harness.worker import WorkerProcess, settings_from_env, worker_env
from infra.config import Settings
from infra.kafka.clients import build_admin, build_reader, committed_points
from infra.kafka.topics import ensure_topics
from infra.network import free_port

pytestmark = [pytest.mark.kafka, pytest.mark.xdist_group("kafka_seguro")]

USUARIOS = ("fichas-worker", "fichas-revisor", "fichas-calibrar", "fichas-keda")
# The worker's ACLs but the transactional ids', for a group of its own (a KafkaUser that forgot
# the prefix): the refusal meets the worker inside a retried step, not at start-up.
SIN_TX = "fichas-worker-sin-tx"
# A downstream team's subscriber (ejemplos/consumidor.py): Read on fichas.publicadas, no group.
SUSCRIPTOR = "catalogo"
REVISOR, CLAVE_REVISOR = "ana", "clave-de-ana-1"
SHA = "c" * 64


@dataclass
class Seguro:
    """The secured broker, its certificates, the users' password files and the topics."""

    broker: SecuredKafkaBroker
    pki: CertificateAuthority
    ajena: CertificateAuthority  # a CA the broker's certificate does not come from
    claves: dict[str, Path]
    topics: Topics
    carpeta: Path

    def entorno(self, modo: str, usuario: str) -> dict[str, str]:
        """The ``FICHAS_KAFKA_*`` variables of ``usuario`` over SCRAM or mutual TLS."""
        comunes = {"FICHAS_KAFKA_CA_ARCHIVO": str(self.pki.cert)}
        if modo == "scram":
            return comunes | {
                "FICHAS_KAFKA_BROKERS": self.broker.sasl_ssl_bootstrap,
                "FICHAS_KAFKA_SEGURIDAD": "SASL_SSL",
                "FICHAS_KAFKA_SASL_MECANISMO": "SCRAM-SHA-512",
                "FICHAS_KAFKA_USUARIO": usuario,
                "FICHAS_KAFKA_CONTRASENA_ARCHIVO": str(self.claves[usuario]),
            }
        par = self.pki.issue(usuario)
        return comunes | {
            "FICHAS_KAFKA_BROKERS": self.broker.ssl_bootstrap,
            "FICHAS_KAFKA_SEGURIDAD": "SSL",
            "FICHAS_KAFKA_CERTIFICADO_ARCHIVO": str(par.cert),
            "FICHAS_KAFKA_CLAVE_PRIVADA_ARCHIVO": str(par.key),
        }

    def settings(self, modo: str, usuario: str) -> Settings:
        """The product's settings of ``usuario`` for these topics."""
        return settings_from_env(self.topics.env() | self.entorno(modo, usuario))

    def contrasenas(self) -> list[str]:
        """Every user's password, to check no output shows one."""
        return [p.read_text().strip() for p in self.claves.values()]


@pytest.fixture(scope="module")
def seguro(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seguro]:
    """The module's secured broker, with the topics created and every user's ACLs added."""
    carpeta = tmp_path_factory.mktemp("seguro")
    pki = CertificateAuthority(carpeta / "pki")
    pki.broker_keystore()
    ajena = CertificateAuthority(carpeta / "ajena", "otra-ca")
    usuarios = (*USUARIOS, SIN_TX, SUSCRIPTOR)
    broker, claves = SecuredKafkaBroker.con_usuarios(carpeta, pki.folder, usuarios)
    broker.start()
    try:
        topics = Topics()
        admin = settings_from_env(topics.env() | {"FICHAS_KAFKA_BROKERS": broker.bootstrap})
        asyncio.run(ensure_topics(admin))  # as Strimzi's KafkaTopics would: nobody else may
        sin_tx = [
            comando
            for comando in acl_commands("fichas-worker", _grupo_sin_tx(admin), f"User:{SIN_TX}")
            if "--transactional-id" not in comando
        ]
        suscriptor = ["--add", "--allow-principal", f"User:{SUSCRIPTOR}", "--operation", "Read"]
        suscriptor += ["--topic", admin.topic_publicadas]
        comandos = [c for u in USUARIOS for c in acl_commands(u, admin)]
        broker.add_acls([*comandos, *sin_tx, suscriptor])
        yield Seguro(broker, pki, ajena, claves, topics, carpeta)
    finally:
        broker.kill()  # a throwaway broker: a clean shutdown would test nothing


def _grupo_sin_tx(settings: Settings) -> Settings:
    """The settings with the group of the user without transactional ids."""
    return settings.model_copy(update={"grupo": f"{settings.grupo}-sin-tx"})


def _json(path: Path) -> list[dict[str, Any]]:
    """The JSON log lines of a process's output (the app also prints its URL)."""
    lineas = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(linea) for linea in lineas if linea.startswith("{")]


def _fichero_evaluar(path: Path) -> Path:
    """A small ``fichas evaluar`` file for calibrar (too few fichas to open a gate)."""
    registros = [
        {
            "id": f"zapatillas-{i}", "caso": f"EV-{i}", "familia": "zapatillas",
            "humano": {"aprobada": True, "criterios": []},
            "evaluador": {"aprobada": True, "criterios": [], "problemas": []},
            "codigo": [], "invalida": None, "puntuacion": 0.9,
        }
        for i in range(3)
    ]  # fmt: skip
    configuracion = {
        "modo": "evaluador", "modelo": "fake", "criterios_version": "9",
        "evaluador_rubrica": False, "prompt_evaluador_sha256": SHA, "casos_sha256": "d" * 64,
    }  # fmt: skip
    doc = {
        "formato": "fichas-evaluar/1",
        "modo": "evaluador",
        "configuracion": configuracion,
        "metricas": {},
        "registros": registros,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("modo", ["scram", "mtls"])
async def test_worker_app_y_calibrar_con_solo_sus_acl(
    seguro: Seguro, fake_llm: FakeLLM, modo: str, tmp_path: Path
) -> None:
    topics, super_usuario = seguro.topics, seguro.broker.bootstrap
    env = worker_env(
        seguro.broker, fake_llm, topics, tmp_path / "worker", FICHAS_PUERTA="certificada"
    )
    worker = WorkerProcess(env | seguro.entorno(modo, "fichas-worker"), tmp_path / "worker.log")
    app_env = revisor_env("", topics.env(), tmp_path / "revisor")
    app = RevisorProcess(
        app_env | seguro.entorno(modo, "fichas-revisor"), free_port(), tmp_path / "revisor.log"
    )
    app.add_user(REVISOR, CLAVE_REVISOR)
    worker.start()
    app.start()
    try:
        worker.wait_ready(timeout=120)
        app.wait_ready(timeout=120)
        sku = f"SEG-{modo}-{uuid.uuid4().hex[:6]}"
        await produce(super_usuario, topics.entrada, [(sku.encode(), evento_json(sku).encode())])
        # no gate for the running key: the ficha goes to review; a person approves it over HTTP
        # and the worker publishes the approval it reads from fichas.decisiones
        pendiente = await _esperar_sku(super_usuario, topics.revision, sku, worker)
        persona = RevisorHttp(app.url)
        persona.entrar(REVISOR, CLAVE_REVISOR)
        campos = await until(
            lambda: persona.formulario(pendiente["event_id"], "form-aprobar"),
            60,
            every=0.5,
            explain=app.log_tail,
        )
        assert persona.pedir("/item/aprobar", dict(campos))[0] == 303
        publicada = await _esperar_sku(super_usuario, topics.publicadas, sku, worker)
        assert publicada["event_id"] == pendiente["event_id"] and publicada["version"] == 1

        calibrar = _calibrar(seguro, modo, tmp_path)
        assert calibrar.returncode == 0, calibrar.stderr
        assert "published" in calibrar.stdout
        estados = await read_all(super_usuario, topics.puerta)
        assert any(e["value"]["clave"]["modelo"] == "fake" for e in estados if e["value"])
    finally:
        codigos = (worker.terminate(timeout=120), app.terminate(timeout=60))
    assert codigos == (0, 0), worker.log_tail() + app.log_tail()
    for log in (worker.log_path, app.log_path):
        texto = log.read_text(encoding="utf-8")
        assert "Traceback" not in texto and "AuthorizationFailed" not in texto, texto[-3000:]
        assert not [r for r in _json(log) if r["level"] in ("ERROR", "CRITICAL")], texto[-3000:]
        assert not any(clave in texto for clave in seguro.contrasenas())


async def _esperar_sku(
    bootstrap: str, topic: str, sku: str, worker: WorkerProcess
) -> dict[str, Any]:
    """The record of ``sku`` on ``topic`` once the worker wrote it."""

    async def escrito() -> dict[str, Any] | None:
        registros = await read_all(bootstrap, topic)
        return next((dict(r["value"]) for r in registros if r["value"].get("sku") == sku), None)

    return dict(await until(escrito, 90, every=0.5, explain=worker.log_tail))


def _calibrar(seguro: Seguro, modo: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``fichas calibrar FILE --publicar BROKERS`` as the calibrar Job's user."""
    kafka = seguro.entorno(modo, "fichas-calibrar")
    env = entorno()
    env |= seguro.topics.env() | kafka | {"FICHAS_DATA_DIR": str(tmp_path / "calibrar")}
    entrada = _fichero_evaluar(tmp_path / "evaluar.json")
    publicar = ["--publicar", kafka["FICHAS_KAFKA_BROKERS"]]
    return forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "calibrar", str(entrada), *publicar],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )


async def test_keda_lee_el_retraso_con_solo_sus_acl(seguro: Seguro) -> None:
    """What KEDA's Kafka scaler asks (metadata, the group's committed offsets, the end
    offsets), as the ``fichas-keda`` user with its two Describe ACLs."""
    settings = seguro.settings("scram", "fichas-keda")
    particiones = {TopicPartition(settings.topic_entrada, p) for p in range(4)}
    admin = build_admin(settings)
    await admin.start()
    try:
        (descripcion,) = await admin.describe_topics([settings.topic_entrada])
        assert descripcion["error_code"] == 0 and len(descripcion["partitions"]) == 4
        puntos = await _con_coordinador(
            lambda: committed_points(admin, settings.grupo, particiones)
        )
    finally:
        await admin.close()
    lector = build_reader(settings)
    await lector.start()
    try:
        finales = await lector.end_offsets(list(particiones))
    finally:
        await lector.stop()
    assert set(finales) == particiones
    assert set(puntos) <= particiones


async def test_el_suscriptor_de_ejemplo_lee_el_catalogo_con_scram(seguro: Seguro) -> None:
    """ejemplos/consumidor.py with its own security options (the product's names), as a user
    that may only read the published topic: it catches up with the topic, then stops on
    SIGTERM."""
    topics, kafka = seguro.topics, seguro.entorno("scram", SUSCRIPTOR)
    skus = {r["key"] for r in await read_all(seguro.broker.bootstrap, topics.publicadas)}
    env = entorno()
    opciones = [
        "--topic", topics.publicadas, "--brokers", kafka["FICHAS_KAFKA_BROKERS"],
        "--seguridad", "SASL_SSL", "--sasl-mecanismo", "SCRAM-SHA-512", "--usuario", SUSCRIPTOR,
        "--contrasena-archivo", kafka["FICHAS_KAFKA_CONTRASENA_ARCHIVO"],
        "--ca-archivo", kafka["FICHAS_KAFKA_CA_ARCHIVO"],
    ]  # fmt: skip
    proceso = subprocess.Popen(
        [sys.executable, str(REPO / "ejemplos" / "consumidor.py"), *opciones],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proceso.stdout is not None
        primera = json.loads(proceso.stdout.readline() or "{}")
    finally:
        proceso.send_signal(signal.SIGTERM)
        _, stderr = proceso.communicate(timeout=60)
    assert primera.get("evento") == "al_dia", stderr[-3000:]
    assert primera["skus"] == len(skus)
    assert proceso.returncode == 0, stderr[-3000:]
    assert not any(clave in stderr for clave in seguro.contrasenas())


async def _con_coordinador(pedir: Any) -> Any:
    """Await ``pedir``, retried while the broker creates its offsets topic (a fresh broker has
    no group coordinator for a few seconds; KEDA polls again too)."""
    for _ in range(60):
        try:
            return await pedir()
        except GroupCoordinatorNotAvailableError:
            await asyncio.sleep(0.5)
    return await pedir()


def _fichas(
    seguro: Seguro, args: list[str], kafka: dict[str, str], datos: Path
) -> subprocess.Popen[str]:
    """A ``fichas`` command with these Kafka settings, its output captured."""
    env = entorno()
    env |= seguro.topics.env() | kafka
    env |= {"FICHAS_DATA_DIR": str(datos), "FICHAS_METRICAS_PUERTO": "0"}
    return forkserver.popen(
        [sys.executable, "-m", "herramientas.cli", *args],
        env=env,
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_tres_errores_de_configuracion_una_linea_y_salida_2(
    seguro: Seguro, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """A wrong password (the worker), an untrusted CA (the app), a missing ACL (the worker
    whose FICHAS_GRUPO has no KafkaUser ACL; ``fichas producir`` as a user that may not write
    the input): exit 2, one line naming the setting, nothing consumed, nothing written."""
    topics, super_usuario = seguro.topics, seguro.broker.bootstrap
    mala = tmp_path / "mala.clave"
    mala.write_text("no-es-la-clave\n")
    salidas = [topics.entrada, topics.publicadas, topics.revision, topics.dlq, topics.decisiones]
    antes = {t: await end_offsets(super_usuario, t) for t in salidas}
    grupo_ajeno = f"{topics.prefix}-otro"
    grupo_sin_tx = _grupo_sin_tx(seguro.settings("scram", "fichas-worker")).grupo

    llm = {"FICHAS_LLM_URL": fake_llm.url, "FICHAS_LLM_MODELO": "fake"}
    worker = seguro.entorno("scram", "fichas-worker") | llm
    procesos = {
        "contrasena": _fichas(
            seguro, ["worker"], worker | {"FICHAS_KAFKA_CONTRASENA_ARCHIVO": str(mala)},
            tmp_path / "a",
        ),
        "ca": _fichas(
            seguro, ["revisor", "--port", str(free_port())],
            seguro.entorno("mtls", "fichas-revisor")
            | {"FICHAS_KAFKA_CA_ARCHIVO": str(seguro.ajena.cert)},
            tmp_path / "b",
        ),
        "acl_grupo": _fichas(
            seguro, ["worker"], worker | {"FICHAS_GRUPO": grupo_ajeno}, tmp_path / "c"
        ),
        "acl_topic": _fichas(
            seguro, ["producir", "-"], seguro.entorno("scram", "fichas-revisor"), tmp_path / "d"
        ),
        "acl_tx": _fichas(
            seguro, ["worker"],
            seguro.entorno("scram", SIN_TX) | llm | {"FICHAS_GRUPO": grupo_sin_tx},
            tmp_path / "e",
        ),
    }  # fmt: skip
    entrada = evento_json("SEG-NUNCA") + "\n"
    salida = {
        n: p.communicate(entrada if n == "acl_topic" else "", 240) for n, p in procesos.items()
    }

    esperado = {
        "contrasena": f"Kafka at {seguro.broker.sasl_ssl_bootstrap} refused the SASL login of "
        "user fichas-worker (FICHAS_KAFKA_USUARIO / FICHAS_KAFKA_CONTRASENA_ARCHIVO): ",
        "ca": f"Kafka at {seguro.broker.ssl_bootstrap} presented a certificate that "
        f"{seguro.ajena.cert} (FICHAS_KAFKA_CA_ARCHIVO) does not trust: ",
        "acl_grupo": f"Kafka at {seguro.broker.sasl_ssl_bootstrap} denied user fichas-worker "
        f"(FICHAS_KAFKA_USUARIO) access to consumer group {grupo_ajeno}: an ACL is missing",
        "acl_topic": f"fichas producir: Kafka at {seguro.broker.sasl_ssl_bootstrap} denied user "
        f"fichas-revisor (FICHAS_KAFKA_USUARIO) access to topic {topics.entrada}: an ACL is "
        "missing",
        "acl_tx": f"Kafka at {seguro.broker.sasl_ssl_bootstrap} denied user {SIN_TX} "
        f"(FICHAS_KAFKA_USUARIO) the transactional id {grupo_sin_tx}.{topics.entrada}.",
    }
    for nombre, proceso in procesos.items():
        _, stderr = salida[nombre]
        assert proceso.returncode == 2, f"{nombre}: {proceso.returncode}\n{stderr[-3000:]}"
        assert "Traceback" not in stderr, stderr[-3000:]
        assert not any(clave in stderr for clave in [*seguro.contrasenas(), "no-es-la-clave"])
        lineas = _lineas_de_error(stderr)
        assert len(lineas) == 1, f"{nombre}:\n{stderr[-3000:]}"
        assert lineas[0].startswith(esperado[nombre]), f"{nombre}: {lineas[0]}"

    # nothing consumed by the refused worker's group, nothing written anywhere
    assert {t: await end_offsets(super_usuario, t) for t in salidas} == antes
    admin = build_admin(settings_from_env({"FICHAS_KAFKA_BROKERS": super_usuario}))
    await admin.start()
    try:
        particiones = {TopicPartition(topics.entrada, p) for p in range(4)}
        for grupo in (grupo_ajeno, grupo_sin_tx):
            puntos = await committed_points(admin, grupo, particiones)
            assert all(p.offset < 0 for p in puntos.values()), (grupo, puntos)
    finally:
        await admin.close()


def _lineas_de_error(stderr: str) -> list[str]:
    """The lines a person acts on: JSON log lines at ERROR or above, and plain lines."""
    lineas = []
    for linea in stderr.splitlines():
        if linea.startswith("{"):
            registro = json.loads(linea)
            if registro["level"] in ("ERROR", "CRITICAL"):
                lineas.append(registro["message"])
        elif linea.strip():
            lineas.append(linea)
    return lineas
