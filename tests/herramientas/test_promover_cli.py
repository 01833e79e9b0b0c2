"""``fichas puerta promover``: the command as an operator runs it at the end of a candidate's
promotion, against a real broker. What is asserted is what lands on ``fichas.puerta``, what the
workers' resolution makes of it, and what the command says."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from esquemas.constantes import MOTIVO_PUERTA_RETENIDA, MOTIVO_PUERTA_SUSTITUIDA
from esquemas.estado_puerta import EstadoPuerta, id_puerta, id_retencion
from harness.entorno import entorno
from harness.estados_puerta import clave_fake, crear_topic, escribir, estado, fichas_puerta
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, settings_for
from puerta.resolucion import resolver
from puerta.retencion import registro_retencion
from puerta.topico import leer_estados

pytestmark = pytest.mark.kafka


def _env(kafka: KafkaBroker, topics: Topics) -> dict[str, str]:
    # No LLM: the command never asks one (its keys are given by id).
    return entorno(kafka=kafka, topics=topics, FICHAS_LLM_URL="http://127.0.0.1:9/v1")


def _estados(kafka: KafkaBroker, topics: Topics) -> dict[str, EstadoPuerta]:
    return asyncio.run(leer_estados(settings_for(kafka.bootstrap), topics.puerta, espera_s=30))


def _escribir(kafka: KafkaBroker, topics: Topics, *registros: EstadoPuerta) -> None:
    for registro in registros:
        asyncio.run(escribir(kafka.bootstrap, topics.puerta, registro))


def _ok(proc: Any) -> str:
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return str(proc.stdout)


def _rechazo(proc: Any, texto: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lineas = proc.stderr.strip().splitlines()
    assert len(lineas) == 1 and texto in lineas[0], proc.stderr


def test_promover_cierra_la_vieja_copia_retenciones_y_es_idempotente(kafka: KafkaBroker) -> None:
    topics = Topics()
    env = _env(kafka, topics)
    vieja, nueva = clave_fake(), clave_fake(modelo="fake-candidata")
    ahora = datetime.now(UTC)
    _escribir(
        kafka,
        topics,
        estado(vieja, 0.6, "*", n=80, k=2),
        estado(vieja, 0.5, "zapatillas", n=60, k=1),
        estado(vieja, None, "mochilas", abierta=False),
        registro_retencion("bolsos", vieja, True, "ana", "quejas de tallas", ahora),
        registro_retencion("relojes", vieja, True, "luis", "auditoría", ahora),
        # Released under the new key already: a person's last word, never overwritten.
        registro_retencion("relojes", nueva, False, "luis", "revisado", ahora),
    )

    # Nothing certified under the new key yet: refused, nothing written.
    antes = _estados(kafka, topics)
    _rechazo(
        fichas_puerta(["promover", "--de", vieja.texto(), "--a", nueva.texto()], env),
        "has no open gate",
    )
    assert _estados(kafka, topics) == antes
    _rechazo(
        fichas_puerta(["promover", "--de", vieja.texto(), "--a", vieja.texto()], env),
        "same key",
    )
    _rechazo(
        fichas_puerta(["promover", "--de", "0123456789abcdef", "--a", nueva.texto()], env),
        "no key 0123456789abcdef",
    )

    _escribir(kafka, topics, estado(nueva, 0.5, "zapatillas", n=45, k=0))
    salida = _ok(
        fichas_puerta(
            ["promover", "--de", vieja.texto(), "--a", nueva.texto(), "--motivo", "prompt v7"],
            env,
        )
    )
    estados = _estados(kafka, topics)
    for familia, (n, k) in (("*", (80, 2)), ("zapatillas", (60, 1))):
        cerrada = estados[id_puerta(familia, vieja)]
        assert not cerrada.abierta and cerrada.umbral is None
        assert cerrada.motivo == MOTIVO_PUERTA_SUSTITUIDA and (cerrada.n, cerrada.k) == (n, k)
        assert cerrada.origen_datos == f"promocion:{nueva.texto()}; prompt v7"
        assert f"gate {cerrada.id} closed" in salida
    assert estados[id_puerta("mochilas", vieja)] == antes[id_puerta("mochilas", vieja)]
    copia = estados[id_retencion("bolsos", nueva)]
    assert copia.motivo == MOTIVO_PUERTA_RETENIDA and copia.retenida_por == "ana"
    assert copia.nota == "quejas de tallas"
    assert estados[id_retencion("relojes", nueva)].retenida_por == "luis"
    assert estados[id_retencion("relojes", nueva)].motivo != MOTIVO_PUERTA_RETENIDA
    # What the workers make of it: the old key publishes nothing, the new one where it opened,
    # and the copied hold closes its gate under the new key.
    assert not resolver("zapatillas", vieja, estados).abierta
    assert resolver("zapatillas", nueva, estados).abierta
    assert resolver("bolsos", nueva, estados).razon == "retenida"

    # A second run writes nothing and says so.
    salida = _ok(fichas_puerta(["promover", "--de", vieja.texto(), "--a", nueva.texto()], env))
    assert "nothing to write" in salida
    assert _estados(kafka, topics) == estados


def test_forzar_promueve_sin_puerta_abierta(kafka: KafkaBroker) -> None:
    topics = Topics()
    env = _env(kafka, topics)
    asyncio.run(crear_topic(kafka.bootstrap, topics.puerta))
    vieja, nueva = clave_fake(modelo="fake-v1"), clave_fake(modelo="fake-v2")
    _escribir(kafka, topics, estado(vieja, 0.5, "zapatillas"))
    _rechazo(
        fichas_puerta(["promover", "--de", vieja.texto(), "--a", nueva.texto()], env),
        "has no open gate",
    )
    _ok(fichas_puerta(["promover", "--de", vieja.texto(), "--a", nueva.texto(), "--forzar"], env))
    estados = _estados(kafka, topics)
    assert estados[id_puerta("zapatillas", vieja)].motivo == MOTIVO_PUERTA_SUSTITUIDA
    assert not resolver("zapatillas", vieja, estados).abierta
