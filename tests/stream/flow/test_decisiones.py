"""stream.flow.decisiones without a broker: reading a decision record, the record it publishes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiokafka import ConsumerRecord, TopicPartition

from esquemas import DecisionRevision, EventoInvalido, FichaPublicada
from harness.estados_puerta import clave_fake
from harness.version_siguiente import completos, siguiente
from infra.config import Settings
from stream.flow.decisiones import leer_decision, particion_de_entrada, registro_publicacion


def _publicacion(**cambios: Any) -> dict[str, Any]:
    return {
        "event_id": "ev-1",
        "sku": "ZAP-1",
        "version": 3,
        "familia": "zapatillas",
        "ficha": {"titulo": "Zapatillas", "descripcion": "Para correr.", "atributos": {}},
        "intentos": 1,
        "criterios_version": "2-x",
        "modelo": "m",
        "publicada_en": "2026-12-01T04:00:00Z",
        "revision": {
            "revisor": "ana",
            "decision": "aprobada",
            "decidida_en": "2026-12-01T04:00:00Z",
        },
        **cambios,
    }


def _decision(**cambios: Any) -> dict[str, Any]:
    return {
        "event_id": "ev-1",
        "sku": "ZAP-1",
        "version": 3,
        "tipo": "revision",
        "decision": "aprobada",
        "revisor": "ana",
        "decidida_en": "2026-12-01T04:00:00Z",
        "publicacion": _publicacion(),
        **cambios,
    }


def _record(valor: Any, key: bytes | None = b"ZAP-1") -> ConsumerRecord:
    crudo = valor if isinstance(valor, bytes) else json.dumps(valor).encode()
    return ConsumerRecord(
        "fichas.decisiones", 1, 7, 0, 0, key, crudo, None, len(key or b""), len(crudo), []
    )  # fmt: skip


def test_una_aprobacion_trae_su_publicacion_y_los_campos_nuevos_se_ignoran() -> None:
    decision, publicacion = leer_decision(
        _record(_decision(campo_futuro=1, publicacion=_publicacion(otro_futuro="x")))
    )
    assert (decision.sku, decision.version, decision.decision) == ("ZAP-1", 3, "aprobada")
    assert publicacion == _publicacion()


def test_un_rechazo_no_publica_nada() -> None:
    decision, publicacion = leer_decision(
        _record(_decision(decision="rechazada", criterios=["C04"], publicacion=None))
    )
    assert decision.decision == "rechazada" and publicacion is None


@pytest.mark.parametrize(
    ("valor", "key", "codigo", "campo"),
    [
        (b"{no es json", b"ZAP-1", "json_invalido", None),
        ([1, 2], b"ZAP-1", "esquema_invalido", None),
        (_decision(version="tres"), b"ZAP-1", "esquema_invalido", "version"),
        (_decision(), b"OTRO", "esquema_invalido", "key"),
        (_decision(), None, "esquema_invalido", "key"),
        (
            _decision(publicacion=_publicacion(version=2)),
            b"ZAP-1",
            "esquema_invalido",
            "publicacion.version",
        ),
        (
            _decision(publicacion=_publicacion(event_id="ev-2")),
            b"ZAP-1",
            "esquema_invalido",
            "publicacion.event_id",
        ),
    ],
)
def test_una_decision_ilegible_dice_por_que(
    valor: Any, key: bytes | None, codigo: str, campo: str | None
) -> None:
    with pytest.raises(EventoInvalido) as error:
        leer_decision(_record(valor, key))
    assert error.value.codigo == codigo
    assert error.value.campo == campo


def test_el_registro_publicado_es_la_publicacion_con_las_cabeceras_de_salida() -> None:
    settings = Settings(topic_publicadas="pub")
    registro = registro_publicacion(settings, _publicacion())
    assert registro.topic == "pub" and registro.key == b"ZAP-1"
    assert json.loads(registro.value) == _publicacion()
    assert registro_publicacion(settings, _publicacion()).value == registro.value
    assert dict(registro.headers) == {
        "sku": b"ZAP-1",
        "version": b"3",
        "event_id": b"ev-1",
        "esquema": b"FichaPublicada",
        "esquema_version": b"1.6",
    }


def test_la_particion_de_entrada_tiene_el_mismo_numero() -> None:
    settings = Settings(topic_entrada="entrada")
    tp = particion_de_entrada(settings, TopicPartition("fichas.decisiones", 5))
    assert tp == TopicPartition("entrada", 5)


def test_una_decision_de_la_version_siguiente_se_aplica() -> None:
    """v1.6, "Readers never fail open": a field at every level and new values (decision kind,
    tipo, the publication's decision) are read, never sent to the DLQ; the publication is
    written as this version reads it, and a gate key it does not know is written null."""
    actual = completos(clave_fake(), sku="ZAP-1")["DecisionRevision"]
    nuevos = {
        "decision": "aprobada_con_reservas",
        "tipo": "ciega",
        "publicacion.revision.decision": "x",
    }
    decision, publicacion = leer_decision(_record(siguiente(DecisionRevision, actual, nuevos)))
    assert (decision.decision, decision.tipo) == ("aprobada_con_reservas", "ciega")
    assert publicacion == actual["publicacion"] | {
        "revision": actual["publicacion"]["revision"] | {"decision": "x"}
    }
    _, publicacion = leer_decision(_record(siguiente(DecisionRevision, actual, en_clave="lora")))
    assert publicacion is not None
    assert publicacion["clave"] is None and publicacion["puerta"] is None
    assert FichaPublicada.model_validate(publicacion).ficha.titulo == "Zapatilla"
