"""Every command block of docs/despliegue.md and docs/operacion.md is run, or says why it cannot be.

Each fenced block carries a mark on the line before it: ``<!-- runbook: orden -->`` (the guide's
apply steps, walked by tests/deploy/test_orden.py), ``<!-- runbook: prueba NAME -->`` (run here)
or ``<!-- runbook: clúster: REASON -->`` (needs a real cluster). A block without a mark fails.

A ``prueba`` block runs as written, against a secured broker (SCRAM over TLS, the contract's
default topic and group names, each user with exactly its ``KafkaUser``'s ACLs), the fake LLM
and the suite's PostgreSQL. ``kubectl -n fichas exec TARGET [-c C] -- CMD`` runs CMD as that
container of the rendered production manifests would: its environment (the ConfigMap, the
Secrets' keys), its mounted files (the Secret of its Kafka user, the CA, the DSN and the LLM key
of ``fichas-secretos``, its ConfigMaps) under a folder of the test, whose paths replace the
mount paths in the command and the files; so the identity is the one the manifests give that
pod, and a command its ACLs refuse fails here.
What differs from a cluster, on purpose: the broker's, the LLM's and PostgreSQL's addresses;
``fichas`` runs as ``python -m herramientas.cli``; ``/opt/kafka/bin/NAME.sh`` is the same main
class from the project's Kafka jars (``scripts/kafka.sh bin``); example ids in a block (a key
id, a date) are replaced by the test's.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.structs import OffsetAndMetadata, TopicPartition
from psycopg.conninfo import make_conninfo

from esquemas import EventoInvalido
from harness import forkserver
from harness.acls import acl_commands, kafka_users
from harness.estados_puerta import clave_fake, estado, leer
from harness.eventos import evento_json
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import SCRIPT, SecuredKafkaBroker
from harness.kustomize import renderizar
from harness.pki import CertificateAuthority
from harness.procesos import REPO
from harness.topicos import committed_offsets, partitions_of, produce, read_all, settings_for
from infra.kafka.topics import ensure_topics
from puerta.topico import escribir_estados
from stream.flow.rechazo import evento_rechazado

DOCS = [REPO / "docs" / "despliegue.md", REPO / "docs" / "operacion.md"]
MARCA = re.compile(r"^<!-- runbook: (orden|prueba [\w-]+|clúster: \S.*) -->$")
K8S = REPO / "k8s" / "overlays" / "produccion"
USUARIOS = sorted(kafka_users())
CLAVE_EJEMPLO = "6fcbb2b40f6be958"  # the key id the docs show
CLAVE_NUEVA_EJEMPLO = "0d1f3c5e7a9b2d4f"


@dataclass(frozen=True)
class Bloque:
    """A fenced block of a document, its mark, and where it is."""

    doc: str
    linea: int
    marca: str | None
    texto: str

    @property
    def prueba(self) -> str | None:
        """The scenario a ``prueba`` block names."""
        return self.marca.split()[1] if self.marca and self.marca.startswith("prueba") else None


def bloques(path: Path) -> list[Bloque]:
    """Every fenced block of ``path`` with the mark on the line before it (None if none)."""
    lineas = path.read_text(encoding="utf-8").splitlines()
    encontrados, i = [], 0
    while i < len(lineas):
        if lineas[i].strip().startswith("```"):
            inicio = i
            i += 1
            while not lineas[i].strip().startswith("```"):
                i += 1
            previa = next((x.strip() for x in reversed(lineas[:inicio]) if x.strip()), "")
            marca = MARCA.match(previa)
            texto = "\n".join(x.strip() for x in lineas[inicio + 1 : i])
            encontrados.append(
                Bloque(path.name, inicio + 1, marca.group(1) if marca else None, texto)
            )
        i += 1
    return encontrados


def ordenes(texto: str) -> list[str]:
    """The block's commands: continuation lines joined, comments and blank lines dropped."""
    unidas = re.sub(r"\\\n\s*", " ", texto)
    return [o.strip() for o in unidas.splitlines() if o.strip() and not o.lstrip().startswith("#")]


BLOQUES = [b for doc in DOCS for b in bloques(doc)]


def test_cada_bloque_de_ordenes_lleva_su_marca() -> None:
    """A block without a mark, or a ``prueba`` this file does not run, fails the suite."""
    sin_marca = [f"{b.doc}:{b.linea}" for b in BLOQUES if b.marca is None]
    assert not sin_marca, f"blocks without a runbook mark: {sin_marca}"
    nombradas = {b.prueba for b in BLOQUES if b.prueba}
    assert nombradas == set(ESCENARIOS), nombradas ^ set(ESCENARIOS)


# ---------------------------------------------------------------- the pods of the manifests


@dataclass
class Contexto:
    """The secured broker, its users' files and the services the commands reach."""

    broker: SecuredKafkaBroker
    pki: CertificateAuthority
    claves: dict[str, Path]
    carpeta: Path
    llm: FakeLLM | None = None
    dsn: str = ""
    objetos: list[dict[str, Any]] = field(default_factory=list)

    def secreto(self, nombre: str, clave: str) -> str:
        """The value a Secret of the guide holds under ``clave``, as this test made it."""
        if nombre == "fichas-kafka-ca":
            return self.pki.cert.read_text()
        if nombre.startswith("fichas-kafka-"):
            usuario = "fichas-" + nombre.removeprefix("fichas-kafka-")
            if clave == "username":
                return usuario
            return self.claves[usuario].read_text().strip()
        valores = {"llm-api-key": "EMPTY", "postgres-dsn": self.dsn}
        return valores[clave]

    def contenedor(self, objetivo: str, nombre: str | None) -> tuple[dict[str, Any], Any]:
        """The container ``kubectl exec OBJETIVO [-c NOMBRE]`` reaches, and its pod spec."""
        tipo, _, quien = objetivo.rpartition("/")
        kind = {"deploy": "Deployment", "job": "Job", "": "Pod", "pod": "Pod"}[tipo]
        (objeto,) = [
            o for o in self.objetos if o["kind"] == kind and o["metadata"]["name"] == quien
        ]
        plantilla = objeto["spec"] if kind == "Pod" else objeto["spec"]["template"]["spec"]
        anotaciones = (objeto.get("spec", {}).get("template", {}).get("metadata") or {}).get(
            "annotations", {}
        )
        nombre = nombre or anotaciones.get("kubectl.kubernetes.io/default-container")
        contenedores = plantilla["containers"]
        (c,) = [c for c in contenedores if c["name"] == nombre] if nombre else contenedores[:1]
        return c, plantilla

    def pod(self, objetivo: str, nombre: str | None) -> Pod:
        """The environment and files of that container, materialised under the test's folder."""
        contenedor, plantilla = self.contenedor(objetivo, nombre)
        raiz = self.carpeta / "pods" / f"{objetivo.replace('/', '-')}-{contenedor['name']}"
        volumenes = {v["name"]: v for v in plantilla.get("volumes", [])}
        rutas: dict[str, str] = {}
        for montaje in contenedor.get("volumeMounts", []):
            local = raiz / montaje["mountPath"].lstrip("/")
            local.mkdir(parents=True, exist_ok=True)
            rutas[montaje["mountPath"]] = str(local)
        for montaje in contenedor.get("volumeMounts", []):
            self._llenar(volumenes[montaje["name"]], Path(rutas[montaje["mountPath"]]), rutas)
        env: dict[str, str] = {}
        for origen in contenedor.get("envFrom", []):
            env |= self._configmap(origen["configMapRef"]["name"])
        for var in contenedor.get("env", []):
            if "value" in var:
                env[var["name"]] = var["value"]
            else:
                ref = var["valueFrom"]["secretKeyRef"]
                env[var["name"]] = self.secreto(ref["name"], ref["key"])
        env = {k: reescribir(v, rutas) for k, v in env.items()}
        env |= {"FICHAS_KAFKA_BROKERS": self.broker.sasl_ssl_bootstrap}
        if self.llm is not None and "FICHAS_LLM_URL" in env:
            env |= {"FICHAS_LLM_URL": self.llm.url}
        return Pod(env, rutas, self)

    def _configmap(self, nombre: str) -> dict[str, str]:
        """The data of the ConfigMap ``nombre`` (the Job's and the toolbox's overlays render
        the deployment's ConfigMaps again, the same ones)."""
        cm = next(
            o for o in self.objetos if o["kind"] == "ConfigMap" and o["metadata"]["name"] == nombre
        )
        return dict(cm.get("data", {}))

    def _llenar(self, volumen: dict[str, Any], carpeta: Path, rutas: dict[str, str]) -> None:
        """Write what the volume holds: a Secret's items, a ConfigMap's keys, nothing."""
        if "secret" in volumen:
            nombre = volumen["secret"]["secretName"]
            for item in volumen["secret"].get("items", []):
                (carpeta / item["path"]).write_text(self.secreto(nombre, item["key"]))
        elif "configMap" in volumen:
            for clave, valor in self._configmap(volumen["configMap"]["name"]).items():
                (carpeta / clave).write_text(reescribir(valor, rutas))


def reescribir(texto: str, rutas: dict[str, str]) -> str:
    """``texto`` with each mount path replaced by the folder that stands for it, in one pass
    (a folder of the test under /tmp is not a mount path again)."""
    if not rutas:
        return texto
    montajes = "|".join(re.escape(m) for m in sorted(rutas, key=len, reverse=True))
    patron = re.compile(rf"(?<![\w./-])({montajes})(?=/|$|[^\w./-])")
    return patron.sub(lambda m: rutas[m.group(1)], texto)


@dataclass
class Pod:
    """A container of the manifests, as this test runs commands in it."""

    env: dict[str, str]
    rutas: dict[str, str]
    ctx: Contexto

    def ejecutar(self, args: list[str], entrada: str = "") -> subprocess.CompletedProcess[str]:
        """Run ``args`` as the container would (``fichas``, or a tool of Kafka's bin/)."""
        args = [reescribir(a, self.rutas) for a in args]
        args = [
            a.replace("kafka-kafka-bootstrap.kafka.svc:9093", self.env["FICHAS_KAFKA_BROKERS"])
            for a in args
        ]
        base = {k: v for k, v in os.environ.items() if not k.startswith("FICHAS_")}
        if args[0] == "fichas":
            return forkserver.run(
                [sys.executable, "-m", "herramientas.cli", *args[1:]],
                env=base | self.env,
                cwd=REPO,
                input=entrada,
                capture_output=True,
                text=True,
                timeout=180,
            )
        assert args[0].startswith("/opt/kafka/bin/"), args
        herramienta = args[0].removeprefix("/opt/kafka/bin/")
        return subprocess.run(
            ["bash", str(SCRIPT), "bin", herramienta, *args[1:]],
            env=base | self.ctx.broker._env(),
            input=entrada,
            capture_output=True,
            text=True,
            timeout=180,
        )


def exec_de(orden: str) -> tuple[str, str | None, list[str], str | None]:
    """``kubectl -n fichas exec [-i] TARGET [-c C] -- CMD [< FILE]``: target, container,
    command and the file standard input comes from."""
    entrada = None
    if " < " in orden:
        orden, entrada = (p.strip() for p in orden.rsplit(" < ", 1))
    partes = shlex.split(orden)
    assert partes[:4] == ["kubectl", "-n", "fichas", "exec"], orden
    corte = partes.index("--")
    opciones, comando = partes[4:corte], partes[corte + 1 :]
    contenedor = opciones[opciones.index("-c") + 1] if "-c" in opciones else None
    objetivos = [
        o for i, o in enumerate(opciones) if not o.startswith("-") and opciones[i - 1] != "-c"
    ]
    (objetivo,) = objetivos
    return objetivo, contenedor, comando, entrada


def correr(ctx: Contexto, bloque: Bloque, cambios: dict[str, str] | None = None) -> list[Any]:
    """Run every command of ``bloque`` (example values replaced by ``cambios``); each must
    exit 0. The results, in order."""
    resultados = []
    for orden in ordenes(bloque.texto):
        for viejo, nuevo in (cambios or {}).items():
            orden = orden.replace(viejo, nuevo)
        objetivo, contenedor, comando, fichero = exec_de(orden)
        entrada = (ctx.carpeta / fichero).read_text() if fichero else ""
        resultado = ctx.pod(objetivo, contenedor).ejecutar(comando, entrada)
        assert resultado.returncode == 0, (
            f"{bloque.doc}:{bloque.linea}: {orden}\nexit {resultado.returncode}\n"
            f"{resultado.stdout[-2000:]}\n{resultado.stderr[-3000:]}"
        )
        assert "Traceback" not in resultado.stderr, resultado.stderr[-3000:]
        resultados.append(resultado)
    return resultados


def un_bloque(nombre: str) -> Bloque:
    """The one block marked ``prueba NAME``."""
    (bloque,) = [b for b in BLOQUES if b.prueba == nombre]
    return bloque


# ---------------------------------------------------------------- the broker and the scenarios


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Contexto]:
    """A secured broker with the contract's names and every KafkaUser's ACLs."""
    carpeta = tmp_path_factory.mktemp("runbook")
    pki = CertificateAuthority(carpeta / "pki")
    pki.broker_keystore()
    broker, claves = SecuredKafkaBroker.con_usuarios(carpeta, pki.folder, USUARIOS)
    broker.start()
    try:
        contrato = settings_for(broker.bootstrap)  # the contract's default names
        asyncio.run(ensure_topics(contrato))  # as Strimzi's KafkaTopics would
        broker.add_acls([c for u in USUARIOS for c in acl_commands(u, contrato)])
        objetos = renderizar(K8S) + renderizar(K8S / "operador") + renderizar(K8S / "calibrar")
        yield Contexto(broker, pki, claves, carpeta, objetos=objetos)
    finally:
        broker.kill()


@pytest.fixture
def con_llm(ctx: Contexto, fake_llm: FakeLLM, postgres_dsn: str) -> Contexto:
    """The context with the fake LLM answering and the suite's PostgreSQL in the DSN file of
    ``fichas-secretos`` (a pod refuses to start on an empty one, as in a cluster)."""
    ctx.llm = fake_llm
    ctx.dsn = postgres_dsn
    return ctx


pytestmark = [pytest.mark.kafka, pytest.mark.xdist_group("kafka_seguro")]


def escenario_reprocesar(ctx: Contexto) -> None:
    """docs/despliegue.md, "Reprocesar un topic": the group's offsets moved back, as
    ``fichas-operador`` with the toolbox's client.properties."""
    super_usuario, topic, grupo = ctx.broker.bootstrap, "proveedor.cambios", "fichas"
    skus = [f"REP-{uuid.uuid4().hex[:6]}-{i}" for i in range(3)]
    asyncio.run(
        produce(super_usuario, topic, [(s.encode(), evento_json(s).encode()) for s in skus])
    )
    asyncio.run(_confirmar_al_final(super_usuario, topic, grupo))
    simulacro, hecho = correr(ctx, un_bloque("reprocesar"))
    assert "proveedor.cambios" in simulacro.stdout, simulacro.stdout
    assert "proveedor.cambios" in hecho.stdout, hecho.stdout
    puntos = asyncio.run(_confirmados(super_usuario, topic, grupo))
    assert puntos and all(p == 0 for p in puntos.values()), puntos  # back before 2026-11-28


async def _confirmar_al_final(bootstrap: str, topic: str, grupo: str) -> None:
    """Commit the group at the end of every partition (a worker that read everything)."""
    particiones = [TopicPartition(topic, p) for p in await partitions_of(bootstrap, topic)]
    consumidor = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=grupo, enable_auto_commit=False
    )
    await consumidor.start()
    try:
        consumidor.assign(particiones)
        finales = await consumidor.end_offsets(particiones)
        await consumidor.commit({tp: OffsetAndMetadata(o, "") for tp, o in finales.items()})
    finally:
        await consumidor.stop()


async def _confirmados(bootstrap: str, topic: str, grupo: str) -> dict[int, int]:
    """The group's committed offset per partition (those it has)."""
    puntos = await committed_offsets(bootstrap, grupo, topic)
    return {p: o for p, o in puntos.items() if o is not None}


def escenario_dlq(ctx: Contexto) -> None:
    """docs/despliegue.md: the DLQ's payloads sent again to the input as ``fichas-operador``."""
    sku = f"DLQ-{uuid.uuid4().hex[:6]}"
    error = EventoInvalido("familia_desconocida", "familia no conocida entonces", "familia")
    rechazado = evento_rechazado(error, evento_json(sku), "proveedor.cambios", 0, 7)
    valor = json.dumps(rechazado, default=str).encode()
    asyncio.run(produce(ctx.broker.bootstrap, "proveedor.cambios.dlq", [(b"x", valor)]))
    (salida,) = correr(ctx, un_bloque("dlq"))
    assert "events sent to proveedor.cambios" in salida.stderr, salida.stderr
    entrada = asyncio.run(read_all(ctx.broker.bootstrap, "proveedor.cambios"))
    assert any(r["key"] == sku.encode() for r in entrada), entrada[-3:]


def escenario_retener(ctx: Contexto) -> None:
    """docs/operacion.md, "Holding a gate": held and released from the toolbox (default key),
    held from the app's pod with ``--clave``."""
    retener, liberar, con_clave = ordenes(un_bloque("retener").texto)
    bloque = un_bloque("retener")
    correr(ctx, Bloque(bloque.doc, bloque.linea, bloque.marca, retener))
    estados = leer(ctx.broker.bootstrap, "fichas.puerta")
    (retencion,) = [e for e in estados.values() if e.retencion and e.familia == "zapatillas"]
    assert retencion.retenida_por == "ana"
    clave = retencion.clave.texto()
    correr(ctx, Bloque(bloque.doc, bloque.linea, bloque.marca, liberar))
    correr(ctx, Bloque(bloque.doc, bloque.linea, bloque.marca, con_clave), {CLAVE_EJEMPLO: clave})
    final = leer(ctx.broker.bootstrap, "fichas.puerta")[retencion.id]
    assert final.retencion and final.retenida_por == "ana"


def escenario_promover(ctx: Contexto) -> None:
    """docs/operacion.md, "Promoting a candidate": step 4 from the app's pod."""
    vieja, nueva = clave_fake(modelo="vieja"), clave_fake(modelo="nueva")
    abiertas = [estado(vieja, 0.9, "zapatillas"), estado(nueva, 0.9, "zapatillas")]
    asyncio.run(escribir_estados(settings_for(ctx.broker.bootstrap), abiertas, "fichas.puerta"))
    cambios = {CLAVE_EJEMPLO: vieja.texto(), CLAVE_NUEVA_EJEMPLO: nueva.texto()}
    (salida,) = correr(ctx, un_bloque("promover"), cambios)
    assert "publishes nothing any more" in salida.stdout, salida.stdout
    cerrada = leer(ctx.broker.bootstrap, "fichas.puerta")[abiertas[0].id]
    assert not cerrada.abierta and cerrada.motivo == "sustituida"


def escenario_calibrar_variantes(ctx: Contexto) -> None:
    """docs/operacion.md: the calibrar Job's other commands, as ``fichas-calibrar``."""
    bloque = un_bloque("calibrar-variantes")
    pod = ctx.pod("job/fichas-calibrar", None)
    for orden in ordenes(bloque.texto):
        args = shlex.split(orden)
        args = [a.replace("$FICHAS_KAFKA_BROKERS", pod.env["FICHAS_KAFKA_BROKERS"]) for a in args]
        resultado = pod.ejecutar(args)
        assert resultado.returncode == 0, (
            f"{orden}\n{resultado.stdout[-2000:]}\n{resultado.stderr[-3000:]}"
        )


def escenario_revisores(ctx: Contexto) -> None:
    """docs/despliegue.md, step 8: a reviewer added in the app's pod (its DSN, its user)."""
    (ctx.carpeta / "clave-de-ana.txt").write_text("clave-de-ana-1\n")
    (salida,) = correr(ctx, un_bloque("revisores"))
    assert "reviewer ana saved" in salida.stdout, salida.stdout


def escenario_sql_postgres(ctx: Contexto) -> None:
    """docs/despliegue.md, step 3: the role and the database as written (other names), then
    ``fichas migrar`` with that DSN."""
    sufijo = uuid.uuid4().hex[:8]
    rol, base = f"fichas_rb_{sufijo}", f"fichas_rb_{sufijo}"
    sentencias = [s.strip() for s in un_bloque("sql-postgres").texto.split(";") if s.strip()]
    with psycopg.connect(ctx.dsn, autocommit=True) as conn:
        for sentencia in sentencias:
            conn.execute(re.sub(r"\bfichas\b", rol, sentencia))
    dsn = make_conninfo(ctx.dsn, user=rol, password="cambiar-esta-clave", dbname=base)
    try:
        pod = ctx.pod("deploy/fichas", None)  # step 3's Secret, holding this DSN
        (Path(pod.rutas["/etc/fichas/secretos"]) / "postgres-dsn").write_text(dsn + "\n")
        migrar = pod.ejecutar(["fichas", "migrar"])
        assert migrar.returncode == 0, migrar.stderr[-3000:]
    finally:
        with psycopg.connect(ctx.dsn, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{base}" with (force)')
            conn.execute(f"drop role if exists {rol}")


ESCENARIOS: dict[str, Callable[[Contexto], None]] = {
    "reprocesar": escenario_reprocesar,
    "dlq": escenario_dlq,
    "retener": escenario_retener,
    "promover": escenario_promover,
    "calibrar-variantes": escenario_calibrar_variantes,
    "revisores": escenario_revisores,
    "sql-postgres": escenario_sql_postgres,
}


@pytest.mark.parametrize("nombre", sorted(ESCENARIOS))
def test_el_bloque_corre_con_la_identidad_de_los_manifiestos(
    con_llm: Contexto, nombre: str
) -> None:
    ESCENARIOS[nombre](con_llm)


def test_un_bloque_bajo_otra_identidad_falla(con_llm: Contexto) -> None:
    """The same hold from a worker pod (the old runbook's advice): ``fichas-worker`` may only
    read ``fichas.puerta``, so the command is refused, in one line with exit 2."""
    pod = con_llm.pod("deploy/fichas", None)
    args = ["fichas", "puerta", "retener", "*", "--motivo", "prueba", "--por", "ana"]
    resultado = pod.ejecutar(args)
    assert resultado.returncode == 2, resultado.stderr[-3000:]
    lineas = [x for x in resultado.stderr.splitlines() if x.strip() and not x.startswith("{")]
    assert len(lineas) == 1 and "denied user fichas-worker" in lineas[0], resultado.stderr[-3000:]
    assert "access to topic fichas.puerta" in lineas[0], lineas[0]
    assert "Traceback" not in resultado.stderr


# Every command a person runs, as a user whose ACLs do not cover it (fichas-keda: Describe of
# the input and of the group, nothing else): one line naming the setting, exit 2, no traceback.
RECHAZADAS = {
    "puerta retener": ["fichas", "puerta", "retener", "*", "--clave", "0" * 16, "--motivo", "x"],
    "puerta promover": ["fichas", "puerta", "promover", "--de", "0" * 16, "--a", "1" * 16],
    "calibrar --desde-decisiones": [
        "fichas", "calibrar", "--desde-decisiones", "--kafka", "BROKERS", "--clave-desde-config",
    ],
    "informe --kafka": ["fichas", "informe", "--kafka", "BROKERS"],
    "producir": ["fichas", "producir", "-"],
    "producir --desde-dlq": ["fichas", "producir", "--desde-dlq"],
}  # fmt: skip


@pytest.mark.parametrize("orden", sorted(RECHAZADAS))
def test_cada_orden_rechazada_por_kafka_una_linea_y_salida_2(con_llm: Contexto, orden: str) -> None:
    pod = con_llm.pod("fichas-operador", "fichas")
    carpeta = Path(pod.rutas["/etc/fichas/kafka/usuario"])
    (carpeta / "username").write_text("fichas-keda")
    (carpeta / "password").write_text(con_llm.claves["fichas-keda"].read_text().strip())
    pod.env["FICHAS_KAFKA_USUARIO"] = "fichas-keda"
    args = [a.replace("BROKERS", pod.env["FICHAS_KAFKA_BROKERS"]) for a in RECHAZADAS[orden]]
    try:
        resultado = pod.ejecutar(args, evento_json("NUNCA-1") + "\n")
    finally:  # the toolbox's own user again, for the other tests
        (carpeta / "username").write_text("fichas-operador")
        (carpeta / "password").write_text(con_llm.claves["fichas-operador"].read_text().strip())
    lineas = [x for x in resultado.stderr.splitlines() if x.strip() and '"level": "INFO"' not in x]
    assert resultado.returncode == 2, resultado.stderr[-3000:]
    assert "Traceback" not in resultado.stderr, resultado.stderr[-3000:]
    assert len(lineas) == 1, resultado.stderr[-3000:]
    assert "denied user fichas-keda (FICHAS_KAFKA_USUARIO)" in lineas[0], lineas[0]
    assert con_llm.claves["fichas-keda"].read_text().strip() not in resultado.stderr
