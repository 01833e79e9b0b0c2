"""The decode half of the wire format (``esquemas.decode``): strict writers, tolerant readers."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from esquemas import (
    ClavePuerta,
    DecisionRevision,
    EstadoPuerta,
    EventoRechazado,
    FichaEnRevision,
    FichaPublicada,
)
from esquemas.decode import decode, decode_json
from harness.estados_puerta import clave_fake, estado
from harness.version_siguiente import CAMPO_NUEVO, completos, siguiente

CLAVE = clave_fake()
MODELOS: dict[str, type[BaseModel]] = {
    "FichaPublicada": FichaPublicada,
    "FichaEnRevision": FichaEnRevision,
    "DecisionRevision": DecisionRevision,
    "EventoRechazado": EventoRechazado,
}
REGISTROS = completos(CLAVE)


@pytest.mark.parametrize("nombre", sorted(MODELOS))
def test_un_campo_nuevo_en_cada_nivel_se_ignora_y_el_resto_se_lee_igual(nombre: str) -> None:
    modelo, actual = MODELOS[nombre], REGISTROS[nombre]
    nuevo = siguiente(modelo, actual)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        modelo.model_validate(nuevo)  # what this project writes stays strict
    leido = decode(modelo, nuevo)
    assert leido.value == modelo.model_validate(actual)
    assert leido.data == actual  # the record as written, less what this version does not know
    assert leido.understood() and leido.unknown == ()
    assert CAMPO_NUEVO in leido.ignored
    niveles = {ruta.rsplit(".", 1)[0] for ruta in leido.ignored if "." in ruta}
    esperados = {
        "FichaPublicada": {"ficha", "revision", "origen", "puerta", "puerta.clave", "clave"},
        "FichaEnRevision": {"ficha", "historial[0]", "historial[0].veredicto", "clave"},
        "DecisionRevision": {"evidencia.clave", "publicacion.puerta.clave", "publicacion.ficha"},
        "EventoRechazado": {"error", "origen"},
    }[nombre]
    assert esperados <= niveles, sorted(niveles)


def test_un_valor_nuevo_de_una_lista_cerrada_se_lee_como_escrito_y_se_nombra() -> None:
    nuevo = siguiente(
        FichaEnRevision,
        REGISTROS["FichaEnRevision"],
        {"motivo": "retenida_por_detector"},
    )
    leido = decode(FichaEnRevision, nuevo)
    assert leido.value.motivo == "retenida_por_detector"
    assert leido.value.model_dump(mode="json")["motivo"] == "retenida_por_detector"
    assert not leido.understood("motivo") and leido.understood("historial")
    assert "retenida_por_detector" in leido.reasons()
    decision = siguiente(
        DecisionRevision,
        REGISTROS["DecisionRevision"],
        {
            "decision": "aprobada_con_reservas",
            "tipo": "ciega",
            "publicacion.revision.decision": "x",
        },
    )
    leida = decode(DecisionRevision, decision)
    assert (leida.value.decision, leida.value.tipo) == ("aprobada_con_reservas", "ciega")
    assert leida.value.publicacion is not None and leida.value.publicacion.revision is not None
    assert leida.value.publicacion.revision.decision == "x"
    assert [u.path for u in leida.unknown] == ["tipo", "decision", "publicacion.revision.decision"]
    assert leida.understood("evidencia")


def test_una_clave_con_un_campo_que_no_conoce_es_otra_clave_y_se_lee_nula() -> None:
    """Dropping a key's field would make another key id: the evidence would count for a gate
    the record never was about. Read as null where the contract allows it; else not understood."""
    revision = decode(
        FichaEnRevision, siguiente(FichaEnRevision, REGISTROS["FichaEnRevision"], en_clave="lora-3")
    )
    assert revision.value.clave is None and not revision.understood("clave")
    assert "field campo_v1_7" in revision.reasons()
    decision = decode(
        DecisionRevision, siguiente(DecisionRevision, REGISTROS["DecisionRevision"], en_clave=1)
    )
    assert decision.value.evidencia is None  # Evidencia.clave is required: the nearest null
    assert decision.value.publicacion is not None
    assert decision.value.publicacion.puerta is None and decision.value.publicacion.clave is None
    assert decision.data["evidencia"] is None and decision.data["publicacion"]["puerta"] is None
    assert {u.path for u in decision.unknown} == {
        "evidencia",
        "publicacion.puerta",
        "publicacion.clave",
    }
    # A mode this version does not know is another key too.
    modo = siguiente(
        FichaPublicada, REGISTROS["FichaPublicada"], {"clave.modo_evaluador": "jurado"}
    )
    publicada = decode(FichaPublicada, modo)
    assert publicada.value.clave is None and publicada.value.puerta is not None
    # Where the key cannot be null (a gate record), it is read but not understood.
    gate = siguiente(EstadoPuerta, estado(CLAVE).model_dump(mode="json"), en_clave="x")
    leido = decode(EstadoPuerta, gate)
    assert not leido.understood("clave") and leido.understood("motivo")
    # A null new field leaves the key as it was: its id leaves nulls out.
    assert decode(
        EstadoPuerta, siguiente(EstadoPuerta, estado(CLAVE).model_dump(mode="json"))
    ).understood()


def test_lo_que_conoce_se_valida_como_siempre() -> None:
    nuevo: dict[str, Any] = siguiente(
        FichaPublicada, REGISTROS["FichaPublicada"], {"version": "tres"}
    )
    with pytest.raises(ValidationError) as error:
        decode(FichaPublicada, nuevo)
    assert error.value.errors()[0]["loc"] == ("version",)
    with pytest.raises(ValidationError):
        decode(DecisionRevision, [1, 2])  # not an object: refused in the model's own words
    with pytest.raises(ValueError):
        decode_json(ClavePuerta, b"\xff no es json")
    # A value of another kind where a closed list stands is invalid, not a new value.
    with pytest.raises(ValidationError):
        decode(FichaEnRevision, REGISTROS["FichaEnRevision"] | {"motivo": 3})
