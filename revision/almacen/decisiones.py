"""What a decision produces: the ``DecisionRevision`` record and, for an approval, the
``FichaPublicada``; and the checks a ficha passes before a person may publish it.

Pure functions over the stored item: the web handlers call them, the store persists what they
return, the outbox sends it. The records are built once, at decision time, and stored, so a
resend after a crash is byte-identical (same ``event_id``, same timestamps).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from criterios import CRITERIOS_VERSION, FamiliaDesconocida, atributos_obligatorios, comprobar
from esquemas import DecisionRevision, Ficha, FichaPublicada, RevisionHumana
from esquemas.constantes import (
    CRITERIO_SALIDA_INVALIDA,
    DECISION_APROBADA,
    DECISION_EDITADA,
    MOTIVO_SALIDA_INVALIDA,
)
from esquemas.salidas import SOLO_MUESTRA

if TYPE_CHECKING:
    from revision.almacen.item import Item

CAMPOS = ("titulo", "descripcion")


def rfc3339(instante: float) -> str:
    """A Unix time as the contract's RFC 3339 UTC timestamp."""
    return datetime.fromtimestamp(instante, UTC).isoformat().replace("+00:00", "Z")


def origen_de(item: Item) -> dict[str, Any]:
    """The origin the code checks compare a ficha against, built as the worker builds it
    (``grafo.estado.origen_de``): SKU, family, its required attributes, supplier page, figures.

    The SKU is part of it because C11 accepts the numbers the origin gives, and a title may
    carry the SKU's: without it the app would refuse to approve a ficha the loop's own checks
    passed. A family the tables no longer know keeps no required attributes (C03 says why).
    """
    return _origen(item.datos, item.familia, item.sku)


def _origen(datos: dict[str, Any], familia: str, sku: str) -> dict[str, Any]:
    """``origen_de`` over a stored record's data."""
    origen = datos.get("origen") or {}
    try:
        obligatorios = list(atributos_obligatorios(familia))
    except FamiliaDesconocida:
        obligatorios = []
    return {
        "sku": sku,
        "familia": familia,
        "atributos_obligatorios": obligatorios,
        "ficha_proveedor": origen.get("ficha_proveedor") or {},
        "cifras": origen.get("cifras") or {},
    }


def ficha_de(item: Item) -> dict[str, Any] | None:
    """The ficha under review (the loop's last one), as a plain dict."""
    ficha = item.datos.get("ficha")
    return dict(ficha) if isinstance(ficha, dict) else None


def comprobaciones(ficha: dict[str, Any], item: Item) -> dict[str, dict[str, Any]]:
    """The code checks (``criterios.comprobar``) of a ficha against the item's origin."""
    return comprobar(ficha, origen_de(item))


def criterios_a_ciegas(datos: dict[str, Any]) -> list[str]:
    """What the queue shows of an item decided blind (shadow-mode evidence): the criteria the
    app's own code checks fail on its final ficha, and ``salida_invalida`` for an unusable
    answer; never the problems the record lists, which carry the judge's.
    """
    criterios = (
        {CRITERIO_SALIDA_INVALIDA} if datos.get("motivo") == MOTIVO_SALIDA_INVALIDA else set()
    )
    ficha = datos.get("ficha")
    if isinstance(ficha, dict):
        origen = _origen(datos, str(datos.get("familia")), str(datos.get("sku")))
        resultado = comprobar(ficha, origen)
        criterios |= {c for c, r in resultado.items() if not r.get("ok")}
    return sorted(criterios)


def errores_por_campo(resultado: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Failed checks grouped by the form field they belong next to.

    C01 is the title, C02 the description, C03 the attributes; C05 and C07 name the field in
    their detail ("título", "descripción", "atributo x") and go there, else to the whole ficha.
    """
    campos: dict[str, list[str]] = {}
    for criterio, r in resultado.items():
        if r.get("ok"):
            continue
        texto = f"{criterio}: {r.get('detalle') or 'falla la comprobación'}"
        campos.setdefault(_campo_de(criterio, str(r.get("detalle") or "")), []).append(texto)
    return campos


def _campo_de(criterio: str, detalle: str) -> str:
    """Which field a failed check is about."""
    if criterio == "C01":
        return "titulo"
    if criterio == "C02":
        return "descripcion"
    if criterio == "C03":
        return "atributos"
    if "título" in detalle:
        return "titulo"
    if "descripción" in detalle:
        return "descripcion"
    if "atributo" in detalle:
        return "atributos"
    return "ficha"


def campos_editados(original: dict[str, Any] | None, editada: dict[str, Any]) -> list[str]:
    """Names of the fields a reviewer changed (``atributos.x`` for one attribute)."""
    original = original or {}
    cambiados = [c for c in CAMPOS if str(original.get(c) or "") != str(editada.get(c) or "")]
    antes = dict(original.get("atributos") or {})
    despues = dict(editada.get("atributos") or {})
    for clave in sorted(set(antes) | set(despues)):
        if str(antes.get(clave, "")) != str(despues.get(clave, "")):
            cambiados.append(f"atributos.{clave}")
    return cambiados


def decision_de(
    item: Item,
    decision: str,
    revisor: str,
    instante: float,
    criterios: list[str] | None = None,
    nota: str = "",
    editados: list[str] | None = None,
) -> dict[str, Any]:
    """The ``DecisionRevision`` for ``fichas.decisiones``, validated, as JSON-ready data.

    It carries the item's ``evidencia`` (contract v1.3: family, key, score of the decided
    attempt, code checks, arrival position), so the decision is evidence for a gate on its own.
    ``event_id`` is the record's (the live event's, for a candidate's item, whose decision is
    stored and never sent).
    """
    validada = DecisionRevision(
        event_id=item.id_evento,
        sku=item.sku,
        version=item.version,
        tipo=item.tipo,  # type: ignore[arg-type]
        decision=decision,  # type: ignore[arg-type]
        criterios=list(criterios or []),
        nota=nota,
        campos_editados=list(editados or []),
        revisor=revisor,
        decidida_en=datetime.fromtimestamp(instante, UTC),
        evidencia=item.evidencia,  # type: ignore[arg-type]
    )
    return _json(validada.model_dump(mode="json"))


def publicacion(
    item: Item, ficha: dict[str, Any], revisor: str, editada: bool, instante: float, modelo: str
) -> dict[str, Any]:
    """The ``FichaPublicada`` a human approval writes: the ficha as approved, ``revision`` set.

    ``event_id`` is the item's, so subscribers deduplicate a resend as they do the loop's;
    ``clave`` is the key of the loop that drafted the ficha (contract v1.3), as the item's
    record carries it (null on records older than v1.3);
    ``criterios_version`` is of the criteria the app just checked the ficha with; ``modelo`` is
    the model that wrote the drafts (the item does not carry it: the app's configured one).
    """
    momento = datetime.fromtimestamp(instante, UTC)
    publicada = FichaPublicada(
        event_id=item.event_id,
        sku=item.sku,
        version=item.version,
        familia=item.familia,
        ficha=Ficha.model_validate(ficha),
        intentos=int(item.datos.get("intentos") or 0),
        criterios_version=CRITERIOS_VERSION,
        modelo=modelo,
        publicada_en=momento,
        revision=RevisionHumana(
            revisor=revisor,
            decision=DECISION_EDITADA if editada else DECISION_APROBADA,
            decidida_en=momento,
        ),
        clave=item.datos.get("clave"),  # type: ignore[arg-type]
    )
    return _json(publicada.model_dump(mode="json", exclude=set(SOLO_MUESTRA)))


def _json(data: dict[str, Any]) -> dict[str, Any]:
    """Timestamps as the contract writes them (``Z``, not ``+00:00``)."""
    for clave in ("decidida_en", "publicada_en"):
        if isinstance(data.get(clave), str):
            data[clave] = data[clave].replace("+00:00", "Z")
    revision = data.get("revision")
    if isinstance(revision, dict) and isinstance(revision.get("decidida_en"), str):
        revision["decidida_en"] = revision["decidida_en"].replace("+00:00", "Z")
    return data
