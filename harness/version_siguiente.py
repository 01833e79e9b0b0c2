"""Records of the contract's next version, for the tests that every reader reads them.

``siguiente(modelo, datos)`` takes a record this version writes and returns what a later minor
version could write in its place (docs/contrato.md, "Compatibility rule"): a new field in every
object at every level (the record, each nested model, each item of a list of models), and, at the
field paths given, a value the closed list there does not hold (a new motivo, decision kind,
evaluator mode). Inside a gate key the new field is null unless ``en_clave`` says otherwise: a
later version that adds a key field writes null where it does not use it (as v1.3 and v1.5 did),
and a key with a non-null field this version does not know is another key. ``completos`` gives
one record of every kind the readers read, every optional object filled.
"""

from __future__ import annotations

import copy
import types
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from esquemas import (
    ClavePuerta,
    DecisionRevision,
    ErrorRechazo,
    EventoRechazado,
    Evidencia,
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
from esquemas.decode import IDENTITIES

CAMPO_NUEVO = "campo_v1_7"  # the field a later version adds, at every level
VALOR_NUEVO = {"anidado": [1, "dos", None]}  # its value: an object this version knows nothing of


def siguiente(
    modelo: type[BaseModel],
    datos: Mapping[str, Any],
    nuevos: Mapping[str, Any] | None = None,
    en_clave: Any = None,
) -> dict[str, Any]:
    """``datos`` (JSON-ready, as ``model_dump(mode="json")`` gives it) as the next version writes
    it: ``CAMPO_NUEVO`` everywhere, and ``nuevos`` (dotted field path, ``[i]`` for a list item ->
    value) set where they say."""
    resultado = _con_campo(modelo, copy.deepcopy(dict(datos)), en_clave)
    for ruta, valor in (nuevos or {}).items():
        _poner(resultado, ruta, valor)
    return resultado


def _con_campo(anotacion: Any, datos: Any, en_clave: Any) -> Any:
    """``datos`` with the new field in every object the annotation describes as a model."""
    origen = get_origin(anotacion)
    if isinstance(anotacion, type) and issubclass(anotacion, BaseModel) and isinstance(datos, dict):
        for nombre, info in anotacion.model_fields.items():
            if nombre in datos:
                datos[nombre] = _con_campo(info.annotation, datos[nombre], en_clave)
        datos[CAMPO_NUEVO] = en_clave if anotacion in IDENTITIES else VALOR_NUEVO
        return datos
    if origen in (Union, types.UnionType):
        for brazo in get_args(anotacion):
            if brazo is not type(None) and datos is not None:
                datos = _con_campo(brazo, datos, en_clave)
        return datos
    if origen is list and isinstance(datos, list):
        return [_con_campo(get_args(anotacion)[0], d, en_clave) for d in datos]
    return datos


def _poner(datos: dict[str, Any], ruta: str, valor: Any) -> None:
    """Set ``valor`` at a dotted path (``historial[0].veredicto.aprobada``) that must exist."""
    partes = [p for trozo in ruta.split(".") for p in trozo.replace("]", "").split("[")]
    destino: Any = datos
    for parte in partes[:-1]:
        destino = destino[int(parte)] if isinstance(destino, list) else destino[parte]
    ultima = partes[-1]
    if isinstance(destino, list):
        destino[int(ultima)] = valor
    else:
        assert ultima in destino, f"{ruta}: no such field in the record"
        destino[ultima] = valor


def completos(
    clave: ClavePuerta, sku: str = "ZAP-1", familia: str = "zapatillas"
) -> dict[str, Any]:
    """One record of every kind a reader of the project reads, as this version writes it, with
    every optional object filled (so that every level exists for ``siguiente``): by schema
    name, JSON-ready. The review record's final score is 0.97, its motivo ``sin_garantia``."""
    ahora = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
    ficha = Ficha(titulo="Zapatilla", descripcion="Para correr.", atributos={"talla": "42"})
    veredicto = Veredicto(aprobada=True, problemas=[Problema(criterio="C04", detalle="x")])
    puerta = PuertaAplicada(
        umbral=0.9, objetivo=0.9, clave=clave, familia=familia, certificada_en=ahora, n=40, k=0
    )
    origen = Origen(ficha_proveedor={"titulo": "t"}, cifras={"peso_g": 280})
    comunes: dict[str, Any] = {
        "event_id": f"{sku}-v1",
        "sku": sku,
        "version": 1,
        "familia": familia,
        "ficha": ficha,
        "intentos": 1,
        "criterios_version": clave.criterios_version,
        "origen": origen,
        "clave": clave,
    }
    publicada = FichaPublicada(
        **comunes,
        modelo=clave.modelo,
        publicada_en=ahora,
        revision=RevisionHumana(revisor="ana", decision="aprobada", decidida_en=ahora),
        puerta=puerta,
        puntuacion=0.97,
    )
    revision = FichaEnRevision(
        **comunes,
        motivo="sin_garantia",
        problemas=veredicto.problemas,
        historial=[Intento(intento=1, ficha=ficha, veredicto=veredicto, puntuacion=0.97)],
        enviada_en=ahora,
    )
    decision = DecisionRevision(
        event_id=f"{sku}-v1",
        sku=sku,
        version=1,
        tipo="revision",
        decision="aprobada",
        revisor="ana",
        decidida_en=ahora,
        evidencia=Evidencia(
            familia=familia, clave=clave, puntuacion=0.97, codigo_ok=True, llegada=0
        ),
        publicacion=publicada,
    )
    rechazado = EventoRechazado(
        error=ErrorRechazo(codigo="json_invalido", mensaje="no es JSON", campo="sku"),
        payload="{roto",
        origen=OrigenMensaje(topic="proveedor.cambios", particion=0, offset=3),
        recibido_en=ahora,
    )
    return {
        "FichaPublicada": publicada.model_dump(mode="json"),
        "FichaEnRevision": revision.model_dump(mode="json"),
        "DecisionRevision": decision.model_dump(mode="json"),
        "EventoRechazado": rechazado.model_dump(mode="json"),
    }
