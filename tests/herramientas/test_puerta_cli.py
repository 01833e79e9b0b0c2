"""``fichas puerta retener|liberar``: the command as an operator runs it, against a real broker
and the fake LLM as a real server (the default key asks it which model it serves). What is
asserted is what lands on ``fichas.puerta`` and what the command says.
"""

from __future__ import annotations

import asyncio
import getpass
import json
from typing import Any

import pytest

from esquemas.constantes import (
    FAMILIA_TODAS,
    MOTIVO_PUERTA_LIBERADA,
    MOTIVO_PUERTA_RETENIDA,
    ORIGEN_PERSONA,
)
from esquemas.estado_puerta import EstadoPuerta, id_retencion
from harness.entorno import entorno
from harness.estados_puerta import abrir, clave_fake, crear_topic, fichas_puerta
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, produce, settings_for
from harness.version_siguiente import siguiente
from puerta.resolucion import resolver
from puerta.retencion import registro_retencion
from puerta.topico import leer_estados

pytestmark = pytest.mark.kafka


def _env(kafka: KafkaBroker, llm: FakeLLM, topics: Topics) -> dict[str, str]:
    return entorno(kafka=kafka, llm=llm, topics=topics)


def _estados(kafka: KafkaBroker, topics: Topics) -> dict[str, EstadoPuerta]:
    return asyncio.run(leer_estados(settings_for(kafka.bootstrap), topics.puerta, espera_s=30))


def _ok(proc: Any) -> str:
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return str(proc.stdout)


def test_retener_y_liberar_con_la_clave_de_la_configuracion(
    kafka: KafkaBroker, fake_llm: FakeLLM
) -> None:
    topics = Topics()
    env = _env(kafka, fake_llm, topics)
    clave = clave_fake()  # what a worker of this configuration runs, served model included
    asyncio.run(abrir(kafka.bootstrap, clave, topics.puerta, familia="zapatillas"))
    antes = _estados(kafka, topics)
    assert resolver("zapatillas", clave, antes).abierta

    salida = _ok(
        fichas_puerta(
            ["retener", "zapatillas", "--motivo", "  quejas de tallas  ", "--por", "ana"], env
        )
    )
    estados = _estados(kafka, topics)
    hold = estados[id_retencion("zapatillas", clave)]
    assert hold.motivo == MOTIVO_PUERTA_RETENIDA and hold.retenida_por == "ana"
    assert hold.nota == "quejas de tallas" and hold.origen_datos == ORIGEN_PERSONA
    assert not hold.abierta and hold.umbral is None and (hold.n, hold.k) == (0, 0)
    # The gate's own state is untouched (no label, no closing): the hold closes it.
    propia = f"zapatillas|{clave.texto()}"
    assert estados[propia] == antes[propia]
    res = resolver("zapatillas", clave, estados)
    assert not res.abierta and res.razon == "retenida"
    assert f"gate zapatillas|{clave.texto()} held by ana" in salida
    assert "every worker closes it within seconds" in salida

    # Held again: nothing written, the first hold (who, why, when) stays.
    salida = _ok(fichas_puerta(["retener", "zapatillas", "--motivo", "otra vez"], env))
    assert "already held by ana" in salida and "nothing written" in salida
    assert _estados(kafka, topics)[hold.id] == hold

    # Released without --por: signed by the OS user running the command.
    salida = _ok(fichas_puerta(["liberar", "zapatillas", "--motivo", "resuelto"], env))
    liberada = _estados(kafka, topics)[hold.id]
    assert liberada.motivo == MOTIVO_PUERTA_LIBERADA
    assert liberada.retenida_por == getpass.getuser() and liberada.nota == "resuelto"
    assert resolver("zapatillas", clave, _estados(kafka, topics)).abierta
    assert "released by" in salida
    salida = _ok(fichas_puerta(["liberar", "zapatillas", "--motivo", "de nuevo"], env))
    assert "is not held: nothing written" in salida


def test_clave_por_id_y_todas_las_claves(kafka: KafkaBroker, fake_llm: FakeLLM) -> None:
    topics = Topics()
    env = _env(kafka, fake_llm, topics)
    una, otra = clave_fake(), clave_fake(modelo="fake-otro")
    for clave in (una, otra):
        asyncio.run(abrir(kafka.bootstrap, clave, topics.puerta))
    fake_llm.down(300)  # --clave and --todas-las-claves never ask the LLM

    _ok(fichas_puerta(["retener", "*", "--motivo", "auditoría", "--clave", otra.texto()], env))
    estados = _estados(kafka, topics)
    assert id_retencion(FAMILIA_TODAS, otra) in estados
    assert id_retencion(FAMILIA_TODAS, una) not in estados

    salida = _ok(fichas_puerta(["retener", "*", "--motivo", "todo", "--todas-las-claves"], env))
    estados = _estados(kafka, topics)
    assert estados[id_retencion(FAMILIA_TODAS, una)].nota == "todo"
    assert estados[id_retencion(FAMILIA_TODAS, otra)].nota == "auditoría"  # already held
    assert "already held" in salida and f"*|{una.texto()} held by" in salida


def test_uso_incorrecto_sale_con_2_y_el_llm_caido_con_3(
    kafka: KafkaBroker, fake_llm: FakeLLM
) -> None:
    topics = Topics()
    env = _env(kafka, fake_llm, topics)
    asyncio.run(crear_topic(kafka.bootstrap, topics.puerta))
    casos = [
        (["retener", "bicicletas", "--motivo", "x"], "unknown family 'bicicletas'"),
        (["retener", "zapatillas", "--motivo", "x", "--clave", "0" * 16], "no key 0000"),
        (["retener", "zapatillas", "--motivo", "x", "--todas-las-claves"], "no key on the gate"),
        (["retener", "zapatillas"], "--motivo"),
        (["retener", "zapatillas", "--motivo", "x" * 501], "would not be valid"),
        (["abrir", "zapatillas", "--motivo", "x"], "invalid choice"),
    ]
    for args, mensaje in casos:
        proc = fichas_puerta(args, env)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert mensaje in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert _estados(kafka, topics) == {}

    fake_llm.down(300)
    proc = fichas_puerta(["retener", "zapatillas", "--motivo", "x", "--espera-llm", "1"], env)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "which model it serves" in proc.stderr and "--clave ID" in proc.stderr
    assert _estados(kafka, topics) == {}


def test_una_retencion_de_la_version_siguiente_se_lee_retenida_y_se_libera(
    kafka: KafkaBroker, fake_llm: FakeLLM
) -> None:
    """v1.6, "Readers never fail open": a hold a later version wrote with a motivo this one does
    not know reads as held, so ``retener`` writes nothing and ``liberar`` releases it; a gate
    whose newest record this version cannot read is closed to it."""
    topics = Topics()
    env = _env(kafka, fake_llm, topics)
    clave = clave_fake()
    abierta = asyncio.run(abrir(kafka.bootstrap, clave, topics.puerta, familia="zapatillas"))
    hold = registro_retencion("zapatillas", clave, True, "eva", "v1.7", abierta.actualizada_en)
    nuevo = siguiente(EstadoPuerta, hold.model_dump(mode="json"), {"motivo": "retenida_hasta"})
    asyncio.run(
        produce(kafka.bootstrap, topics.puerta, [(hold.id.encode(), json.dumps(nuevo).encode())])
    )
    salida = _ok(fichas_puerta(["retener", "zapatillas", "--motivo", "otra vez"], env))
    assert "already held by eva" in salida and "nothing written" in salida
    salida = _ok(fichas_puerta(["liberar", "zapatillas", "--motivo", "visto", "--por", "ana"], env))
    assert "released by ana" in salida
    estados = _estados(kafka, topics)
    assert estados[hold.id].motivo == MOTIVO_PUERTA_LIBERADA
    assert resolver("zapatillas", clave, estados).abierta
