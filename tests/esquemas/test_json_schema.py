"""The committed JSON Schemas: generated from the models, valid draft-07, only ever added to."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from esquemas import (
    ClavePuerta,
    DecisionRevision,
    ErrorRechazo,
    EstadoPuerta,
    EventoRechazado,
    Ficha,
    FichaEnRevision,
    FichaPublicada,
    Intento,
    Origen,
    OrigenMensaje,
    Problema,
    PuertaAplicada,
    RevisionHumana,
    Veredicto,
)
from esquemas.constantes import ESQUEMA_EVENTO_CAMBIO, ESQUEMA_VERSION, ESQUEMAS
from esquemas.json_schema import (
    DIRECTORIO,
    campos,
    diferencias,
    escribir,
    esquema,
    incompatibilidades,
    main,
)
from harness.contrato import validar
from harness.eventos import evento_dict

REPO = Path(__file__).resolve().parents[2]
BASELINE = REPO / "contrato" / "campos_v1.json"
LEIDOS_POR_EL_PROCESADOR = {ESQUEMA_EVENTO_CAMBIO, "DecisionRevision"}
AHORA = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _baseline() -> dict[str, dict[str, Any]]:
    datos = json.loads(BASELINE.read_text(encoding="utf-8"))
    datos.pop("$comment")
    return datos


def test_los_esquemas_comprometidos_son_los_de_los_modelos() -> None:
    assert diferencias() == []
    proc = subprocess.run(
        [sys.executable, "-m", "esquemas.json_schema", "--comprobar"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in DIRECTORIO.glob("*.json")) == sorted(
        f"{n}.json" for n in ESQUEMAS
    )


def test_comprobar_falla_si_un_fichero_no_se_regenero(tmp_path: Path) -> None:
    escribir(tmp_path)
    assert main(["--comprobar", "--dir", str(tmp_path)]) == 0
    ruta = tmp_path / "FichaPublicada.json"
    viejo = json.loads(ruta.read_text(encoding="utf-8"))
    del viejo["properties"]["revision"]  # as if the model gained `revision` and nobody regenerated
    ruta.write_text(json.dumps(viejo, indent=2) + "\n", encoding="utf-8")
    (tmp_path / "Sobrante.json").write_text("{}", encoding="utf-8")
    (tmp_path / "EventoCambio.json").unlink()
    assert sorted(diferencias(tmp_path)) == [
        "EventoCambio.json: missing",
        "FichaPublicada.json: differs from the model",
        "Sobrante.json: not a contract schema",
    ]
    assert main(["--comprobar", "--dir", str(tmp_path)]) == 1


@pytest.mark.parametrize("nombre", ESQUEMAS)
def test_cada_esquema_es_draft07_y_abierto_a_campos_nuevos(nombre: str) -> None:
    datos = json.loads((DIRECTORIO / f"{nombre}.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(datos)
    assert datos["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert datos["title"] == nombre and datos["x-esquema-version"] == ESQUEMA_VERSION == "1.6"
    assert "$defs" not in json.dumps(datos)
    assert '"additionalProperties": false' not in json.dumps(datos)


def test_el_ejemplo_del_contrato_valida_y_los_limites_se_aplican() -> None:
    contrato = (REPO / "docs" / "contrato.md").read_text(encoding="utf-8")
    ejemplo = json.loads(re.search(r"```json\n(.*?)```", contrato, re.S).group(1))  # type: ignore[union-attr]
    validar("EventoCambio", ejemplo)
    validador = jsonschema.Draft7Validator(
        esquema("EventoCambio"), format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    )
    malos = [
        {"version": 0},
        {"version": 2**53},
        {"sku": "-empieza-mal"},
        {"event_id": ""},
        {"ocurrido_en": "ayer"},
        {"cifras": {"peso": "x" * 201}},
    ]
    for cambio in malos:
        assert not validador.is_valid(evento_dict(**cambio)), cambio
    assert validador.is_valid(evento_dict(campo_futuro="se ignora"))


def _salidas_de_ejemplo() -> dict[str, list[dict[str, Any]]]:
    """One value per shape the models allow, as the processor writes it (JSON mode)."""
    ficha = Ficha(titulo="Zapatilla", descripcion="Para correr.", atributos={"talla": "42"})
    publicada = FichaPublicada(
        event_id="e1",
        sku="S1",
        version=3,
        familia="zapatillas",
        ficha=ficha,
        intentos=1,
        criterios_version="v1",
        modelo="m",
        publicada_en=AHORA,
    )
    humana = publicada.model_copy(
        update={"revision": RevisionHumana(revisor="ana", decision="editada", decidida_en=AHORA)}
    )
    muestra = publicada.model_copy(
        update={"origen": Origen(ficha_proveedor=evento_dict()["ficha_proveedor"])}
    )
    veredicto = Veredicto(aprobada=False, problemas=[Problema(criterio="C04", detalle="x")])
    revision = FichaEnRevision(
        event_id="e2",
        sku="S2",
        version=1,
        familia="zapatillas",
        ficha=None,
        intentos=3,
        motivo="salida_invalida",
        problemas=veredicto.problemas,
        historial=[Intento(intento=1, ficha=ficha, veredicto=veredicto)],
        criterios_version="v1",
        enviada_en=AHORA,
    )
    rechazado = EventoRechazado(
        error=ErrorRechazo(codigo="error_procesamiento", mensaje="m"),
        payload="AAEC",
        payload_codificacion="base64",
        payload_sha256="0" * 64,
        truncado=True,
        origen=OrigenMensaje(topic="t", particion=0, offset=7),
        recibido_en=AHORA,
    )
    decision = DecisionRevision(
        event_id="e1",
        sku="S1",
        version=3,
        tipo="muestra",
        decision="incorrecta",
        criterios=["C04"],
        revisor="ana",
        decidida_en=AHORA,
    )
    # v1.2: the gate that let a ficha through, its score, and the gate's own record.
    clave = ClavePuerta(
        modelo="m",
        prompt_evaluador_sha256="0" * 64,
        criterios_version="v1",
        modo_evaluador="veredicto",
    )
    por_la_puerta = publicada.model_copy(
        update={
            "puntuacion": 0.97,
            "puerta": PuertaAplicada(
                umbral=0.93,
                objetivo=0.9,
                clave=clave,
                familia="zapatillas",
                certificada_en=AHORA,
                n=41,
                k=1,
            ),
        }
    )
    sin_garantia = revision.model_copy(
        update={
            "motivo": "sin_garantia",
            "historial": [Intento(intento=1, ficha=ficha, veredicto=veredicto, puntuacion=0.4)],
        }
    )
    cerrada = EstadoPuerta(
        familia="*",
        clave=clave,
        abierta=False,
        umbral=None,
        objetivo=0.9,
        delta=0.05,
        n=12,
        k=0,
        origen_datos="fichas evaluar: casos.jsonl",
        motivo="sin_datos_suficientes",
        actualizada_en=AHORA,
    )
    abierta = cerrada.model_copy(
        update={
            "familia": "zapatillas",
            "abierta": True,
            "umbral": 0.93,
            "n": 41,
            "k": 1,
            "motivo": "certificada",
            "cota_inferior": 0.91,
        }
    )
    return {
        "FichaPublicada": [
            publicada.model_dump(mode="json", exclude={"origen"}),
            humana.model_dump(mode="json", exclude={"origen"}),
            muestra.model_dump(mode="json"),
            por_la_puerta.model_dump(mode="json", exclude={"origen"}),
        ],
        "FichaEnRevision": [revision.model_dump(mode="json"), sin_garantia.model_dump(mode="json")],
        "EstadoPuerta": [cerrada.model_dump(mode="json"), abierta.model_dump(mode="json")],
        "EventoRechazado": [
            rechazado.model_dump(mode="json"),
            rechazado.model_dump(mode="json", exclude_none=True),
        ],
        "DecisionRevision": [decision.model_dump(mode="json")],
    }


def test_cada_forma_de_salida_valida_contra_su_esquema() -> None:
    for nombre, valores in _salidas_de_ejemplo().items():
        for valor in valores:
            validar(nombre, valor)


def test_el_ayudante_de_los_tests_es_mas_estricto_que_el_esquema_publicado() -> None:
    """Subscribers accept added fields; the project's own tests refuse unknown ones."""
    valor = _salidas_de_ejemplo()["FichaPublicada"][0] | {"campo_nuevo": 1}
    assert jsonschema.Draft7Validator(esquema("FichaPublicada")).is_valid(valor)
    with pytest.raises(ValueError, match="campo_nuevo"):
        validar("FichaPublicada", valor)
    sin_sku = dict(_salidas_de_ejemplo()["FichaPublicada"][0])
    del sin_sku["sku"]
    with pytest.raises(AssertionError, match="'sku' is a required property"):
        validar("FichaPublicada", sin_sku)


@pytest.mark.parametrize("nombre", ESQUEMAS)
def test_ningun_campo_desaparece_ni_cambia(nombre: str) -> None:
    """The baseline of major version 1 against the models and against the committed files."""
    antes = _baseline()[nombre]
    leido = nombre in LEIDOS_POR_EL_PROCESADOR
    assert incompatibilidades(antes, campos(esquema(nombre)), leido) == []
    comprometido = json.loads((DIRECTORIO / f"{nombre}.json").read_text(encoding="utf-8"))
    assert incompatibilidades(antes, campos(comprometido), leido) == []


def test_la_regla_detecta_un_campo_requerido_quitado_y_otros_cambios() -> None:
    antes = _baseline()["FichaPublicada"]
    quitado = esquema("FichaPublicada")
    del quitado["properties"]["sku"]
    quitado["required"].remove("sku")
    quitado["definitions"]["Ficha"]["required"].remove("titulo")
    quitado["definitions"]["RevisionHumana"]["properties"]["decision"]["enum"] = ["aprobada"]
    quitado["properties"]["version"]["type"] = "string"
    assert incompatibilidades(antes, campos(quitado), False) == [
        "sku: removed",
        "version: type integer -> string",
        "ficha.titulo: required True -> False",
        "revision.decision: values removed ['editada']",
    ]
    # Adding an optional field is allowed, once it is in the baseline.
    anadido = esquema("FichaPublicada")
    anadido["properties"]["etiquetas"] = {"type": "array", "items": {"type": "string"}}
    problemas = incompatibilidades(antes, campos(anadido), False)
    assert problemas == [
        'etiquetas: new field, add it to the baseline: {"tipo": "array", "requerido": false}'
    ]
    # A new required input field breaks the supplier feed.
    entrada = esquema("EventoCambio")
    entrada["properties"]["moneda"] = {"type": "string"}
    entrada["required"].append("moneda")
    assert incompatibilidades(_baseline()["EventoCambio"], campos(entrada), True) == [
        "moneda: new required field in a schema others write"
    ]
