"""``fichas calibrar`` through its entry point: certify, refuse, fail on bad input, publish."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from esquemas.salidas import DecisionRevision
from harness import forkserver
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, produce, settings_for
from infra.kafka.topics import COMPACTED
from puerta import auditoria
from puerta.resolucion import resolver
from puerta.topico import escribir_estado, leer_estados

REPO = Path(__file__).resolve().parents[3]
# The command as ``python -m herramientas.cli`` (a fork, harness.forkserver); the console script
# itself is tested in tests/herramientas/test_operacion_cli.py.
FICHAS = [sys.executable, "-m", "herramientas.cli"]
SHA = "c" * 64
CLAVE = ClavePuerta(
    modelo="fake", prompt_evaluador_sha256=SHA, criterios_version="9", modo_evaluador="veredicto"
)
OPCIONES_CLAVE = [
    "--modelo", "fake", "--prompt-sha", SHA, "--criterios-version", "9",
    "--modo-evaluador", "veredicto",
]  # fmt: skip


def _fichas(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("FICHAS_")}
    return forkserver.run(
        [*FICHAS, "calibrar", *args],
        env=base | {"PYTHONPATH": str(REPO)} | (env or {}),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _registro(i: int, familia: str, puntuacion: float | None, buena: bool, **extra: Any) -> dict:
    return {
        "id": f"{familia}-{i}",
        "caso": f"EV-{familia}-{i}",
        "familia": familia,
        "humano": {"aprobada": buena, "criterios": [] if buena else ["C05"]},
        "evaluador": {"aprobada": True, "criterios": [], "problemas": []},
        "codigo": [],
        "invalida": None,
        "puntuacion": puntuacion,
        **extra,
    }


def _fichero(path: Path, registros: list[dict], **config: Any) -> Path:
    configuracion = {
        "modo": "evaluador",
        "modelo": "fake",
        "criterios_version": "9",
        "evaluador_rubrica": False,
        "prompt_evaluador_sha256": SHA,
        "casos_sha256": "d" * 64,
        **config,
    }
    doc = {
        "formato": "fichas-evaluar/1",
        "modo": "evaluador",
        "configuracion": configuracion,
        "metricas": {},
        "registros": registros,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _certificables(familia: str = "zapatillas", buenas: int = 40) -> list[dict]:
    """``buenas`` good candidates scored 0.99 .. , one bad at 0.5, a vetoed one at 0.999."""
    registros = [_registro(i, familia, round(0.99 - i * 0.001, 4), True) for i in range(buenas)]
    registros.append(_registro(900, familia, 0.5, False))
    # scored highest but a code check vetoes it: the gate never approves it, label aside
    registros.append(_registro(901, familia, 0.999, False, codigo=["C01"]))
    return registros


def test_certifica_por_familia_y_conjunta_y_escribe_la_auditoria(tmp_path: Path) -> None:
    registros = _certificables("zapatillas", 40) + [
        _registro(i, "camisetas", 0.95, i % 2 == 0) for i in range(10)
    ]
    entrada = _fichero(tmp_path / "ev.json", registros)
    salida = tmp_path / "puerta.json"
    proc = _fichas([str(entrada), "--salida", str(salida)])
    assert proc.returncode == 0, proc.stderr
    assert "gate zapatillas: OPEN from score 0.951" in proc.stdout
    estados, doc = auditoria.leer(salida)
    por_familia = {e.familia: e for e in estados}
    assert set(por_familia) == {FAMILIA_TODAS, "zapatillas"}
    propia = por_familia["zapatillas"]
    assert propia.abierta and propia.umbral == pytest.approx(0.951)
    assert (propia.n, propia.k, propia.motivo) == (40, 0, "certificada")
    assert propia.clave == CLAVE  # taken from the file's configuracion
    assert "ev.json" in propia.origen_datos
    # pooled: the same 40 pass; at 0.95 the camisetas bring n = 50, k = 5 (p = 0.62): stop.
    # camisetas (10 labels) has no gate of its own, and none of its own approvals at the pooled
    # λ: the pooled gate does not cover it (v1.5), so no record publishes it.
    assert (
        "family camisetas: not covered: its own approvals at the pooled threshold do not "
        "certify it" in proc.stdout
    )
    conjunta = por_familia[FAMILIA_TODAS]
    assert conjunta.abierta and conjunta.umbral == pytest.approx(0.951)
    assert (conjunta.n, conjunta.k) == (40, 0)
    entrada_doc = next(p for p in doc["puertas"] if p["estado"]["familia"] == "zapatillas")
    assert entrada_doc["certificacion"]["curva"][0]["umbral"] == 0.99
    assert doc["origen"]["ficheros"][0]["candidatas"] == 52


def test_se_niega_a_certificar_con_pocas_etiquetas(tmp_path: Path) -> None:
    entrada = _fichero(tmp_path / "ev.json", _certificables("zapatillas", 28))
    salida = tmp_path / "puerta.json"
    proc = _fichas([str(entrada), "--salida", str(salida)])
    assert proc.returncode == 0, proc.stderr
    assert "CLOSED, too few labels: 28 people-approved scored candidates, 29 needed" in proc.stdout
    estados, _ = auditoria.leer(salida)
    assert [(e.familia, e.abierta, e.umbral, e.motivo) for e in estados] == [
        (FAMILIA_TODAS, False, None, "sin_datos_suficientes")
    ]


@pytest.mark.lento
def test_entrada_ilegible_sale_con_2(tmp_path: Path) -> None:
    basura = tmp_path / "basura.json"
    basura.write_text("{no", encoding="utf-8")
    sin_puntuacion = _fichero(
        tmp_path / "viejo.json",
        [{k: v for k, v in r.items() if k != "puntuacion"} for r in _certificables()],
    )
    bucle = _fichero(tmp_path / "bucle.json", _certificables())
    doc = json.loads(bucle.read_text())
    doc["modo"] = "bucle"
    bucle.write_text(json.dumps(doc))
    casos = [
        ([str(basura)], "cannot read it as JSON"),
        ([str(tmp_path / "no-existe.json")], "cannot read"),
        ([str(sin_puntuacion)], "no record has a `puntuacion`"),
        ([str(bucle)], "needs --modo evaluador"),
        ([], "nothing to calibrate on"),
        (["--desde-decisiones"], "needs --kafka"),
        (
            [str(_fichero(tmp_path / "ok.json", _certificables())), "--modelo", "otro",
             "--prompt-sha", SHA, "--criterios-version", "9", "--modo-evaluador", "veredicto"],
            "measured with another evaluator key",
        ),
    ]  # fmt: skip
    for args, mensaje in casos:
        proc = _fichas(args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert mensaje in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_dry_run_no_escribe(tmp_path: Path) -> None:
    entrada = _fichero(tmp_path / "ev.json", _certificables())
    salida = tmp_path / "puerta.json"
    proc = _fichas([str(entrada), "--salida", str(salida), "--dry-run"])
    assert proc.returncode == 0, proc.stderr
    assert not salida.exists()
    estados = [EstadoPuerta.model_validate(e) for e in json.loads(proc.stdout.splitlines()[-1])]
    assert {e.familia for e in estados} == {FAMILIA_TODAS, "zapatillas"}


def test_ficheros_con_la_clave_de_la_configuracion(fake_llm: FakeLLM, tmp_path: Path) -> None:
    """A result file records the evaluator side of the key only; --clave-desde-config adds the
    running generator side and (v1.5) the served model, read from the LLM server as the worker
    reads it, so the gate applies to the worker; without it the summary warns."""
    from harness.estados_puerta import clave_fake

    en_uso = clave_fake()
    lado = {
        "criterios_version": en_uso.criterios_version,
        "prompt_evaluador_sha256": en_uso.prompt_evaluador_sha256,
    }
    entrada = _fichero(tmp_path / "ev.json", _certificables(), **lado)
    env = {"FICHAS_LLM_MODELO": "fake", "FICHAS_LLM_URL": fake_llm.url}
    proc = _fichas([str(entrada), "--clave-desde-config", "--dry-run"], env)
    assert proc.returncode == 0, proc.stderr
    estados = [EstadoPuerta.model_validate(e) for e in json.loads(proc.stdout.splitlines()[-1])]
    assert {e.clave for e in estados} == {en_uso}
    assert {e.abierta_por for e in estados} == {"calibrar"}
    assert all(e.origen_datos.startswith("ltt:conjunto; fichas evaluar ev.json") for e in estados)
    assert "no generator side" not in proc.stdout

    proc = _fichas([str(entrada), "--dry-run"], env)
    assert proc.returncode == 0, proc.stderr
    assert "warning: this key has no generator side" in proc.stdout

    otra = _fichero(tmp_path / "otra.json", _certificables(), **lado, modelo="otro")
    proc = _fichas([str(otra), "--clave-desde-config", "--dry-run"], env)
    assert proc.returncode == 2 and "another evaluator key" in proc.stderr

    # Other weights served under the same name: another key, read from the server.
    fake_llm.serve_identity({"root": "fichas/otros-pesos"})
    proc = _fichas([str(entrada), "--clave-desde-config", "--dry-run"], env)
    assert proc.returncode == 0, proc.stderr
    estados = [EstadoPuerta.model_validate(e) for e in json.loads(proc.stdout.splitlines()[-1])]
    assert {e.clave for e in estados} == {clave_fake(identidad={"root": "fichas/otros-pesos"})}
    assert {e.clave.modelo_servido for e in estados} != {en_uso.modelo_servido}

    # A server that does not answer: exit 3 once --espera-llm is spent.
    fake_llm.down(60)
    proc = _fichas([str(entrada), "--clave-desde-config", "--espera-llm", "1", "--dry-run"], env)
    assert proc.returncode == 3, proc.stderr
    assert "which model it serves" in proc.stderr


@pytest.mark.kafka
def test_publica_en_el_topic_y_cierra_la_propia_que_ya_no_certifica(
    kafka: KafkaBroker, tmp_path: Path
) -> None:
    topics = Topics()
    env = {"FICHAS_TOPIC_PUERTA": topics.puerta}
    # an older open gate of another family under the same key, and one closed by the bound
    vieja = EstadoPuerta(
        familia="camisetas", clave=CLAVE, abierta=True, umbral=0.9, objetivo=0.9, delta=0.05,
        n=30, k=0, origen_datos="antes", motivo="certificada", actualizada_en=datetime.now(UTC),
    )  # fmt: skip
    vigilada = vieja.model_copy(
        update={"familia": "bolsos", "abierta": False, "umbral": None,
                "motivo": "cota_en_linea_bajo_objetivo"}
    )  # fmt: skip
    asyncio.run(_crear_compactado(kafka.bootstrap, topics.puerta))
    asyncio.run(escribir_estado(settings_for(kafka.bootstrap), vieja, topics.puerta))
    asyncio.run(escribir_estado(settings_for(kafka.bootstrap), vigilada, topics.puerta))

    registros = _certificables("zapatillas", 40) + [
        _registro(i, "camisetas", 0.2, True) for i in range(5)
    ]
    entrada = _fichero(tmp_path / "ev.json", registros)
    proc = _fichas([str(entrada), "--publicar", kafka.bootstrap], env)
    assert proc.returncode == 0, proc.stderr
    assert "published 3 gate state(s)" in proc.stdout
    estados = asyncio.run(leer_estados(settings_for(kafka.bootstrap), topics.puerta))
    por_familia = {e.familia: e for e in estados.values()}
    assert por_familia[FAMILIA_TODAS].abierta and por_familia["zapatillas"].abierta
    assert por_familia[FAMILIA_TODAS].umbral == pytest.approx(0.951)
    # camisetas no longer certifies alone, nor is it covered: closed
    assert not por_familia["camisetas"].abierta
    assert por_familia["camisetas"].motivo == "sin_datos_suficientes"
    # the family the online bound closed stays closed
    assert por_familia["bolsos"] == vigilada


def _lote_con_cobertura() -> list[dict]:
    """v1.6: zapatillas 200 good at 0.9995 (its own gate); camisetas 29 at 0.999 of which 3
    bad, then 60 good at 0.99: its own walk starts at 0.999 and fails there, while at the
    pooled λ 0.99 its 89 approvals with 3 rejected certify it (covered; without it the pooled
    walk still certifies 0.99); relojes 5 good and 5 bad at 0.99 (p = 0.0016: excluded);
    bolsos 3 good at 0.99 (its own 3 do not certify it). Pooled: n = 302, k = 8, at 0.99."""
    registros = [_registro(i, "zapatillas", 0.9995, True) for i in range(200)]
    registros += [_registro(i, "camisetas", 0.999, i >= 3) for i in range(29)]
    registros += [_registro(29 + i, "camisetas", 0.99, True) for i in range(60)]
    registros += [_registro(i, "relojes", 0.99, i < 5) for i in range(10)]
    registros += [_registro(i, "bolsos", 0.99, True) for i in range(3)]
    return registros


@pytest.mark.kafka
def test_la_conjunta_publica_solo_las_familias_que_cubre(
    kafka: KafkaBroker, tmp_path: Path
) -> None:
    """v1.5: a pooled gate alone publishes no family; calibrar writes a covered record for each
    family its batch covers (v1.6: whose own approvals certify the pooled λ), beside the pooled
    record, and says why the others are not."""
    topics = Topics()
    env = {"FICHAS_TOPIC_PUERTA": topics.puerta}
    entrada = _fichero(tmp_path / "ev.json", _lote_con_cobertura())
    proc = _fichas([str(entrada), "--dry-run"], env)
    assert proc.returncode == 0, proc.stderr
    impresos = [EstadoPuerta.model_validate(e) for e in json.loads(proc.stdout.splitlines()[-1])]
    assert {e.familia for e in impresos} == {FAMILIA_TODAS, "zapatillas", "camisetas"}
    for linea in (
        "gate camisetas: OPEN through the pooled gate from score 0.99 (covered: n=89",
        "family camisetas: covered by the pooled gate (own approvals at λ 0.99: n=89, k=3",
        "family relojes: not covered: its own approvals at the pooled threshold show its "
        "precision below the objective (own approvals at λ 0.99: n=10, k=5, p=0.001635",
        "family bolsos: not covered: its own approvals at the pooled threshold do not certify",
    ):
        assert linea in proc.stdout, proc.stdout
    assert not asyncio.run(leer_estados(settings_for(kafka.bootstrap), topics.puerta, 10))

    proc = _fichas([str(entrada), "--publicar", kafka.bootstrap], env)
    assert proc.returncode == 0, proc.stderr
    assert "published 3 gate state(s)" in proc.stdout
    estados = asyncio.run(leer_estados(settings_for(kafka.bootstrap), topics.puerta))
    por_familia = {e.familia: e for e in estados.values()}
    conjunta, cubierta = por_familia[FAMILIA_TODAS], por_familia["camisetas"]
    assert conjunta.abierta and (conjunta.n, conjunta.k) == (302, 8)
    assert cubierta.motivo == "cubierta_por_conjunta" and cubierta.abierta_por == "calibrar"
    assert cubierta.umbral == conjunta.umbral and (cubierta.n, cubierta.k) == (89, 3)
    assert cubierta.conjunta_actualizada_en == conjunta.actualizada_en
    assert cubierta.origen_datos.startswith("cobertura:lote; ltt:conjunto")
    razones = {
        f: resolver(f, CLAVE, estados).razon
        for f in ("zapatillas", "camisetas", "relojes", "bolsos")
    }
    assert razones == {
        "zapatillas": "propia", "camisetas": "conjunta", "relojes": "sin_registro",
        "bolsos": "sin_registro",
    }  # fmt: skip
    assert resolver("camisetas", CLAVE, estados).abierta


async def _crear_compactado(bootstrap: str, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 2, 1, topic_configs=COMPACTED)])
    finally:
        await admin.close()


async def _politica(bootstrap: str, topic: str) -> str:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (respuesta,) = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic)]
        )
    finally:
        await admin.close()
    (recurso,) = respuesta.resources
    return str({e[0]: e[1] for e in recurso[4]}["cleanup.policy"])


GENERADOR = "e" * 64
CLAVE_V13 = CLAVE.model_copy(update={"prompt_generador_sha256": GENERADOR})
OTRA = CLAVE_V13.model_copy(update={"modelo": "otro"})


def _decision(
    event_id: str,
    decision: str,
    puntuacion: float | None = None,
    *,
    tipo: str = "revision",
    clave: ClavePuerta = CLAVE_V13,
    codigo_ok: bool = True,
    evidencia: str = "si",  # "si", "null" (no score), "ninguna" (written before v1.3)
) -> tuple[bytes, bytes]:
    valor: dict[str, Any] = {
        "event_id": event_id, "sku": event_id, "version": 1, "tipo": tipo,
        "decision": decision, "criterios": [], "nota": "", "campos_editados": [],
        "revisor": "ana", "decidida_en": "2026-01-01T00:00:00Z",
    }  # fmt: skip
    if evidencia == "si":
        valor["evidencia"] = {
            "familia": "zapatillas", "clave": clave.model_dump(), "puntuacion": puntuacion,
            "codigo_ok": codigo_ok, "llegada": 0,
        }  # fmt: skip
    elif evidencia == "null":
        valor["evidencia"] = None
    return event_id.encode(), json.dumps(valor).encode()


@pytest.mark.kafka
def test_desde_decisiones_solo_la_evidencia_de_la_clave(kafka: KafkaBroker, tmp_path: Path) -> None:
    """Each decision stands on its own evidence; another key's is never pooled.

    Own key: r1..r29 approved (0.899 .. 0.871; r0's newest decision is obsoleta), "mala"
    rejected at 0.3, "vetada" rejected at 0.99 but its code checks failed (never approvable).
    The walk starts at n = 29 (k = 0, p = 0.047), passes, and stops at "mala" (n = 30, k = 1).
    Another model's five rejections at 0.99 would close the gate if they were pooled; they are
    left out and counted, as are the decisions with no evidence, those written before v1.3 and
    an invalid record: the summary prints every count.
    """
    topics = Topics()
    decisiones_topic = f"{topics.prefix}.fichas.decisiones"
    env = topics.env() | {"FICHAS_TOPIC_DECISIONES": decisiones_topic}
    decisiones = [_decision(f"r{i}", "aprobada", 0.9 - i * 0.001) for i in range(30)]
    decisiones += [
        _decision("mala", "rechazada", 0.3),
        _decision("vetada", "rechazada", 0.99, codigo_ok=False),
        _decision("r0", "obsoleta", 0.9),
        *[_decision(f"o{i}", "rechazada", 0.99, clave=OTRA) for i in range(5)],
        _decision("sin", "rechazada", evidencia="null"),
        _decision("vieja1", "rechazada", evidencia="ninguna"),
        _decision("vieja2", "aprobada", evidencia="ninguna"),
        (b"basura", b"{no"),
    ]  # fmt: skip
    kafka.create_topic(decisiones_topic, 2)
    asyncio.run(produce(kafka.bootstrap, decisiones_topic, decisiones))
    salida = tmp_path / "puerta.json"
    args = ["--desde-decisiones", "--kafka", kafka.bootstrap, "--salida", str(salida)]
    clave = [*OPCIONES_CLAVE, "--prompt-generador-sha", GENERADOR]
    proc = _fichas([*args, *clave, "--publicar", kafka.bootstrap], env)
    assert proc.returncode == 0, proc.stderr
    assert f"decisions on {decisiones_topic}: 41 read, 31 used for this key" in proc.stdout
    assert "left out: 5 evidence of another key" in proc.stdout
    assert f"other keys seen: {OTRA.texto()} (5)" in proc.stdout
    assert "left out: 1 no evidence: the decided ficha carried no score" in proc.stdout
    assert "left out: 2 written before v1.3" in proc.stdout
    assert "left out: 1 obsolete" in proc.stdout
    assert "left out: 1 not a DecisionRevision" in proc.stdout
    # the gate topic did not exist: the worker's own topic creation made it compacted
    assert asyncio.run(_politica(kafka.bootstrap, topics.puerta)) == "compact"
    publicados = asyncio.run(leer_estados(settings_for(kafka.bootstrap), topics.puerta))
    assert {e.abierta_por for e in publicados.values()} == {"calibrar"}
    estados, doc = auditoria.leer(salida)
    assert [(e.familia, e.abierta, e.n, e.k) for e in estados] == [
        (FAMILIA_TODAS, True, 29, 0),
        ("zapatillas", True, 29, 0),
    ]
    assert estados[0].umbral == pytest.approx(0.871)
    assert estados[0].clave == CLAVE_V13
    assert estados[0].abierta_por == "calibrar"
    assert estados[0].origen_datos.startswith("ltt:decisiones; decisiones ")
    cuentas = doc["origen"]["decisiones"]
    assert (cuentas["usadas"], cuentas["otra_clave"], cuentas["anterior_v1_3"]) == (31, 5, 2)
    assert "selection bias" not in proc.stdout

    # Certifying the other key sees only its five rejections: closed, too few labels.
    otra = ["--modelo", "otro", *OPCIONES_CLAVE[2:], "--prompt-generador-sha", GENERADOR]
    proc = _fichas([*args, *otra], env)
    assert proc.returncode == 0, proc.stderr
    assert "41 read, 5 used for this key" in proc.stdout
    assert "CLOSED, too few labels: 0 people-approved" in proc.stdout
    assert auditoria.leer(salida)[0][0].abierta_por is None

    # A ficha a person had to edit counts as rejected: at 0.95 it comes before the approvals,
    # and the walk fails at its first step. A decision on the sample of what a gate published
    # makes the queue's decisions a biased sample: calibrar warns.
    asyncio.run(
        produce(
            kafka.bootstrap,
            decisiones_topic,
            [
                _decision("editada", "editada", 0.95),
                _decision("m9", "correcta", 0.1, tipo="muestra"),
            ],
        )
    )
    proc = _fichas([*args, *clave], env)
    assert proc.returncode == 0, proc.stderr
    estados, doc = auditoria.leer(salida)
    assert [(e.familia, e.abierta, e.motivo) for e in estados] == [
        (FAMILIA_TODAS, False, "precision_no_certificada")
    ]
    assert "warning: selection bias" in proc.stdout
    assert doc["origen"]["avisos"] and "selection bias" in doc["origen"]["avisos"][0]

    # Decisions record their key, but the command must be told which one to certify.
    proc = _fichas(args, env)
    assert proc.returncode == 2 and "no gate key" in proc.stderr


def test_desde_decisiones_lee_las_de_la_version_siguiente() -> None:
    """v1.6, "Readers never fail open": a decision of the next contract version (a field at every
    level) is a label like any other; one whose decision kind, tipo or evidence key this version
    does not know is no label it can read: counted apart, never as another kind."""
    from harness.version_siguiente import siguiente
    from herramientas.calibrar.entradas import FUERA, seleccionar_evidencia

    def valor(event_id: str, decision: str, **nuevos: Any) -> dict[str, Any]:
        actual = json.loads(_decision(event_id, decision, 0.95)[1])
        return siguiente(DecisionRevision, actual, nuevos)

    decisiones = [valor(f"a{i}", "aprobada") for i in range(3)] + [
        valor("r", "rechazada"),
        valor("nueva", "aprobada_con_reservas"),
        valor("ciega", "aprobada", tipo="ciega"),
        siguiente(DecisionRevision, json.loads(_decision("k", "aprobada", 0.95)[1]), en_clave=2),
    ]
    candidatas, cuentas, _ = seleccionar_evidencia(decisiones, CLAVE_V13)
    assert [(c.event_id, c.aprobada_por_personas) for c in candidatas] == [
        ("a0", True), ("a1", True), ("a2", True), ("r", False),
    ]  # fmt: skip
    assert cuentas["usadas"] == 4 and cuentas["desconocidas"] == 3
    assert cuentas["invalidas"] == 0 and cuentas["obsoletas"] == 0
    assert "desconocidas" in FUERA
