"""What a reviewer sees: the queue of open items and one item, origin against ficha.

Routes (both need a session, ``revision.web.acceso``):
- ``GET /``: the queue of open items, oldest first, filters by family, reason and criterion;
  ``GET /?vista=candidata``: the candidate loop's items, a queue of their own (never in the
  main one), so a team can give them a fixed share of its reviewers;
- ``GET /item?id=ITEM_ID``: one item, origin against ficha, attempts, code checks, actions; a
  candidate's item says so, with its key, and that deciding it never publishes. An item stored
  as a gate's shadow-mode evidence (``Item.sombra``) is decided blind: no score, no verdict or
  problem of the judge, no attempt count (docs/revision.md, "Decidir a ciegas").

``render_item`` is also the page an action answers with when it refuses (a code check fails,
someone decided first, a newer version exists: ``revision.web.acciones``). The word diff the item
page shows is ``revision.web.diferencias``.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from criterios import CRITERIOS_VERSION, atributos_obligatorios
from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_CORRECTA,
    DECISION_EDITADA,
    DECISION_INCORRECTA,
    DECISION_RECHAZADA,
    MOTIVO_SIN_GARANTIA,
    TIPO_MUESTRA,
)
from esquemas.estado_puerta import ClavePuerta
from revision.almacen import decisiones as dec
from revision.almacen.cola import ABIERTA
from revision.almacen.item import Item
from revision.certificador.retenidas import en_muestra
from revision.web.base import CTX, Contexto, pagina
from revision.web.diferencias import diferencias

# What the banner may say after a decision: the app puts a code in the URL, never text, so a
# crafted link cannot put words in the app's mouth. The item's SKU and version come from the
# store (``decidido=EVENT_ID``), and the verb from the decision stored for it.
AVISOS = {
    "enviada": "",
    "pendiente": " (guardada; se enviará en cuanto Kafka responda)",
    "etiqueta": " (ficha candidata: guardada como etiqueta, no se publica)",
}
VISTA_CANDIDATA = "candidata"  # ``/?vista=candidata``: the candidate's queue view
VERBOS = {
    # The worker that owns the SKU publishes an approval (docs/revision.md, "Un solo escritor
    # por SKU"), unless a newer version got there first: the app does not say "publicada".
    DECISION_APROBADA: "aprobada",
    DECISION_EDITADA: "editada y aprobada",
    DECISION_RECHAZADA: "rechazada",
    DECISION_CORRECTA: "correcta",
    DECISION_INCORRECTA: "incorrecta",
}


def clave_puerta(datos: dict[str, Any]) -> str:
    """The 16-hex id of the gate's key on a published ficha, as the metrics label it; empty when
    the ficha carries no gate or an unreadable one."""
    puerta = datos.get("puerta")
    if not isinstance(puerta, dict):
        return ""
    try:
        return ClavePuerta.model_validate(puerta.get("clave")).texto()
    except ValueError:
        return ""


# ----------------------------------------------------------------------------- the queue


async def cola(request: web.Request) -> web.Response:
    """Open items, oldest first, with filters and the count of each filter value."""
    ctx = request.app[CTX]
    candidata = request.query.get("vista", "") == VISTA_CANDIDATA
    abiertos = await ctx.almacen.abiertos(candidata)
    otra = await ctx.almacen.cuenta_abiertos(not candidata)
    filtros = {k: request.query.get(k, "") for k in ("familia", "motivo", "criterio")}
    vista = {"vista": VISTA_CANDIDATA} if candidata else {}
    visibles = [i for i in abiertos if _pasa(i, filtros)]
    ahora = time.time()
    filas = [
        {
            "item": i,
            "edad": ahora - i.recibido_en,
            "titulo": _titulo(i),
            "url": "/item?" + urlencode({"id": i.event_id}),
            "muestra_retenidas": _muestra_retenidas(ctx, i),
        }
        for i in visibles
    ]
    cuentas = {
        "familia": _contar(abiertos, lambda i: [i.familia]),
        "motivo": _contar(abiertos, lambda i: [i.motivo]),
        "criterio": _contar(abiertos, lambda i: i.criterios),
    }
    return pagina(
        ctx,
        request,
        "cola.html",
        filas=filas,
        filtros=filtros,
        cuentas=cuentas,
        total=len(abiertos),
        candidata=candidata,
        cuenta_principal=otra if candidata else len(abiertos),
        cuenta_candidata=len(abiertos) if candidata else otra,
        claves=_claves(abiertos) if candidata else [],
        aviso=await _aviso(ctx, request),
        enlace=lambda **cambio: (
            "/?" + urlencode({k: v for k, v in {**vista, **filtros, **cambio}.items() if v})
        ),
    )


def _claves(items: list[Item]) -> list[tuple[str, int]]:
    """The candidate keys of the items shown, with how many each: the tab names the key whose
    evidence its reviewers gather."""
    return _contar(items, lambda i: [clave_item(i.datos)])


def clave_item(datos: dict[str, Any]) -> str:
    """The 16-hex id of the key of the loop that wrote a review item; empty when it carries
    none or an unreadable one."""
    try:
        return ClavePuerta.model_validate(datos.get("clave")).texto()
    except ValueError:
        return ""


async def _aviso(ctx: Contexto, request: web.Request) -> str:
    """The banner after a decision, built only from what the app knows: ``aviso`` must be a
    code of ``AVISOS`` and ``decidido`` an item with a stored decision; anything else shows
    nothing."""
    sufijo = AVISOS.get(request.query.get("aviso", ""))
    event_id = request.query.get("decidido", "")
    if sufijo is None or not event_id:
        return ""
    item = await ctx.almacen.item(event_id)
    decision = await ctx.almacen.decision(event_id)
    if item is None or decision is None or decision.decision not in VERBOS:
        return ""
    verbo = VERBOS[decision.decision]
    if decision.decision == DECISION_INCORRECTA and decision.publicacion is not None:
        verbo = "incorrecta; se publica la corrección"
    return f"{item.sku} v{item.version}: {verbo}{sufijo}"


def _muestra_retenidas(ctx: Contexto, item: Item) -> bool:
    """Whether a held-back ficha is in the random sample recall is measured on: reviewers are
    asked to decide all of those (revision/certificador/retenidas.py)."""
    return (
        not item.candidata
        and item.motivo == MOTIVO_SIN_GARANTIA
        and en_muestra(item.event_id, ctx.muestra_proporcion, ctx.sombra_proporcion)
    )


def _pasa(item: Item, filtros: dict[str, str]) -> bool:
    return (
        (not filtros["familia"] or item.familia == filtros["familia"])
        and (not filtros["motivo"] or item.motivo == filtros["motivo"])
        and (not filtros["criterio"] or filtros["criterio"] in item.criterios)
    )


def _contar(items: list[Item], valores: Any) -> list[tuple[str, int]]:
    cuentas: dict[str, int] = {}
    for item in items:
        for valor in valores(item):
            cuentas[valor] = cuentas.get(valor, 0) + 1
    return sorted(cuentas.items())


def _titulo(item: Item) -> str:
    ficha = dec.ficha_de(item) or {}
    origen = (item.datos.get("origen") or {}).get("ficha_proveedor") or {}
    return str(ficha.get("titulo") or origen.get("titulo") or "")


# ----------------------------------------------------------------------------- one item


async def item_get(request: web.Request) -> web.Response:
    """One item as it stands."""
    ctx = request.app[CTX]
    item = await buscar_item(ctx, request.query.get("id", ""))
    return await render_item(ctx, request, item, dec.ficha_de(item), {})


async def buscar_item(ctx: Contexto, event_id: str) -> Item:
    item = await ctx.almacen.item(event_id)
    if item is None:
        raise web.HTTPNotFound(text="No existe ese elemento.")
    return item


async def render_item(
    ctx: Contexto,
    request: web.Request,
    item: Item,
    ficha: dict[str, Any] | None,
    errores: dict[str, list[str]],
    status: int = 200,
    mensaje: str = "",
) -> web.Response:
    """The item page; ``ficha`` is what the form shows (the stored one, or the reviewer's edit)."""
    origen = dec.origen_de(item)
    proveedor = origen["ficha_proveedor"]
    ficha_form = ficha or {"titulo": "", "descripcion": "", "atributos": {}}
    atributos = _atributos_form(item, ficha_form, proveedor)
    comprobaciones = dec.comprobaciones(ficha, item) if ficha else {}
    decision = None
    if item.estado != ABIERTA:
        decision = await ctx.almacen.decision(item.event_id)
    siguiente = await ctx.almacen.siguiente(item.event_id, item.candidata)
    return pagina(
        ctx,
        request,
        "item.html",
        status=status,
        item=item,
        proveedor=proveedor,
        cifras=origen["cifras"],
        ficha=ficha_form,
        atributos=atributos,
        diff_titulo=diferencias(str(proveedor.get("titulo") or ""), ficha_form["titulo"]),
        diff_descripcion=diferencias(
            str(proveedor.get("descripcion") or ""), ficha_form["descripcion"]
        ),
        comprobaciones=comprobaciones,
        errores=errores,
        criterios=ctx.criterios,
        criterios_version=CRITERIOS_VERSION,
        decision=decision,
        mensaje=mensaje,
        es_muestra=item.tipo == TIPO_MUESTRA,
        ciega=item.sombra,
        clave_puerta=clave_puerta(item.datos),
        clave_candidata=_clave_candidata(item),
        cola="/?vista=" + VISTA_CANDIDATA if item.candidata else "/",
        muestra_retenidas=_muestra_retenidas(ctx, item),
        siguiente="/item?" + urlencode({"id": siguiente}) if siguiente else "",
        edad=time.time() - item.recibido_en,
        aviso=await _aviso(ctx, request) if request.method == "GET" else "",
    )


def _clave_candidata(item: Item) -> ClavePuerta | None:
    """The key of a candidate's item, for its banner (None for a live item or no key)."""
    if not item.candidata:
        return None
    try:
        return ClavePuerta.model_validate(item.datos.get("clave"))
    except ValueError:
        return None


def _atributos_form(
    item: Item, ficha: dict[str, Any], proveedor: dict[str, Any]
) -> list[dict[str, Any]]:
    """One row per attribute the ficha has or the family requires, with the origin's value."""
    try:
        requeridos = list(atributos_obligatorios(item.familia))
    except Exception:  # an unknown family: no required attributes to offer
        requeridos = []
    de_ficha = dict(ficha.get("atributos") or {})
    de_origen = dict(proveedor.get("atributos") or {})
    nombres = requeridos + [k for k in de_ficha if k not in requeridos]
    return [
        {
            "nombre": n,
            "valor": str(de_ficha.get(n, "")),
            "origen": str(de_origen.get(n, "")),
            "requerido": n in requeridos,
            "distinto": str(de_ficha.get(n, "")) != str(de_origen.get(n, "")),
        }
        for n in nombres
    ]
