"""What a reviewer's click does: approve (as is or edited), reject, the sample's verdict.

Routes (each needs a session and its CSRF token, ``revision.web.acceso``):
- ``POST /item/aprobar``: approve, as is or edited (the code checks run first);
- ``POST /item/rechazar``: reject with criteria and a note;
- ``POST /item/muestra``: a sample item is correct (publishable as generated, without any
  change), or wrong with the failing criteria;
- ``POST /item/corregir``: a sample item needed a change and the reviewer made it: the verdict
  is ``incorrecta`` (v1.6: one label semantics, an edit is a failure) and its ``publicacion`` is
  the corrected ficha, which the worker publishes as it does a person's approval.

Why an approval is safe to click twice, from two browsers, or across a crash: see
``revision.almacen.cola`` (one decision per item, outbox) and ``revision.almacen.flujo`` (the
sender). On a candidate loop's item every decision (an approval, an edit, a rejection) is a label
only: stored as the candidate key's evidence, never published, never sent to Kafka. A refused action
answers with the item page (``revision.web.paginas.render_item``) and the reason.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_CORRECTA,
    DECISION_EDITADA,
    DECISION_INCORRECTA,
    DECISION_RECHAZADA,
    TIPO_MUESTRA,
)
from infra.fault_points import REVISOR_CAIDA_TRAS_DECISION, fault_point
from revision.almacen import decisiones as dec
from revision.almacen.cola import ABIERTA, Cierre
from revision.almacen.item import Item
from revision.web.base import CTX, Contexto, texto
from revision.web.paginas import VISTA_CANDIDATA, buscar_item, render_item

log = logging.getLogger(__name__)

MAX_NOTA = 2000
# Background tasks a request started and does not wait for (the event loop keeps only weak
# references to tasks).
_TAREAS: set[asyncio.Task[None]] = set()


async def _de_la_cola(request: web.Request) -> tuple[Contexto, Any, Item]:
    """The form and the queue item it decides; a sample item is graded, never approved or
    rejected (400)."""
    ctx = request.app[CTX]
    form = await request.post()
    item = await buscar_item(ctx, texto(form.get("event_id")))
    if item.tipo == TIPO_MUESTRA:
        raise web.HTTPBadRequest(text="Un elemento de la muestra se marca correcto o incorrecto.")
    return ctx, form, item


async def aprobar(request: web.Request) -> web.Response:
    """Approve the ficha as shown in the form; publish only if every code check passes."""
    ctx, form, item = await _de_la_cola(request)
    ficha = _ficha_del_form(form)
    rechazo = await _no_publicable(ctx, request, item, ficha)
    if rechazo is not None:
        return rechazo
    editados = dec.campos_editados(dec.ficha_de(item), ficha)
    decision = DECISION_EDITADA if editados else DECISION_APROBADA
    ahora = time.time()
    usuario = request["usuario"]
    cierre = Cierre(
        decision=decision,
        criterios=[],
        revisor=usuario,
        decidida_en=ahora,
        registro=dec.decision_de(item, decision, usuario, ahora, editados=editados),
        # A candidate's ficha is never published: its approval (or edit) is a label.
        publicacion=None
        if item.candidata
        else dec.publicacion(item, ficha, usuario, bool(editados), ahora, ctx.modelo),
    )
    return await _cerrar(ctx, request, item, cierre)


async def rechazar(request: web.Request) -> web.Response:
    """Reject with at least one criterion and an optional note; nothing is published."""
    ctx, form, item = await _de_la_cola(request)
    criterios, nota = _criterios_y_nota(ctx, form)
    if not criterios:
        return await render_item(
            ctx,
            request,
            item,
            dec.ficha_de(item),
            {"rechazo": ["Marque al menos un criterio que falla."]},
            status=422,
        )
    cierre = _cierre_sin_publicar(item, DECISION_RECHAZADA, request["usuario"], criterios, nota)
    return await _cerrar(ctx, request, item, cierre)


async def muestra(request: web.Request) -> web.Response:
    """A sample item: ``correcta``, or ``incorrecta`` with the criteria it fails."""
    ctx = request.app[CTX]
    form = await request.post()
    item = await buscar_item(ctx, texto(form.get("event_id")))
    if item.tipo != TIPO_MUESTRA:
        raise web.HTTPBadRequest(text="Solo los elementos de la muestra se marcan así.")
    veredicto = texto(form.get("veredicto"))
    if veredicto not in (DECISION_CORRECTA, DECISION_INCORRECTA):
        raise web.HTTPBadRequest(text="Veredicto desconocido.")
    criterios, nota = _criterios_y_nota(ctx, form)
    if veredicto == DECISION_INCORRECTA and not criterios:
        return await render_item(
            ctx,
            request,
            item,
            dec.ficha_de(item),
            {"rechazo": ["Marque los criterios que fallan."]},
            status=422,
        )
    if veredicto == DECISION_CORRECTA:
        criterios = []
    cierre = _cierre_sin_publicar(item, veredicto, request["usuario"], criterios, nota)
    return await _cerrar(ctx, request, item, cierre)


async def corregir(request: web.Request) -> web.Response:
    """A sample item that needed a change, corrected by the reviewer: ``incorrecta`` with the
    fields edited (and any criteria marked), publishing the correction through the worker.

    The same checks as an approval (code checks, a newer version), and at least one field must
    change: a ficha publishable as generated is ``correcta``, not corrected.
    """
    ctx = request.app[CTX]
    form = await request.post()
    item = await buscar_item(ctx, texto(form.get("event_id")))
    if item.tipo != TIPO_MUESTRA:
        raise web.HTTPBadRequest(text="Solo se corrige así una ficha de la muestra.")
    ficha = _ficha_del_form(form)
    editados = dec.campos_editados(dec.ficha_de(item), ficha)
    if not editados:
        return await render_item(
            ctx,
            request,
            item,
            ficha,
            {"ficha": ["No cambió ningún campo: si se publicaría tal cual, márquela correcta."]},
            status=422,
        )
    rechazo = await _no_publicable(ctx, request, item, ficha)
    if rechazo is not None:
        return rechazo
    criterios, nota = _criterios_y_nota(ctx, form)
    ahora = time.time()
    usuario = request["usuario"]
    cierre = Cierre(
        decision=DECISION_INCORRECTA,
        criterios=criterios,
        revisor=usuario,
        decidida_en=ahora,
        registro=dec.decision_de(
            item, DECISION_INCORRECTA, usuario, ahora, criterios, nota, editados
        ),
        publicacion=dec.publicacion(item, ficha, usuario, True, ahora, ctx.modelo),
    )
    return await _cerrar(ctx, request, item, cierre)


async def _no_publicable(
    ctx: Contexto, request: web.Request, item: Item, ficha: dict[str, Any]
) -> web.Response | None:
    """The page refusing to publish ``ficha`` (a code check fails, the item is closed, a newer
    version exists), or None: a person may publish it."""
    errores = dec.errores_por_campo(dec.comprobaciones(ficha, item))
    if errores:
        return await render_item(
            ctx,
            request,
            item,
            ficha,
            errores,
            status=422,
            mensaje="La ficha no pasa las comprobaciones: no se publica.",
        )
    cerrado = await _no_abierto(ctx, request, item)
    if cerrado is not None:
        return cerrado
    superada = await _version_superada(ctx, item)
    if superada is not None:
        return await render_item(
            ctx,
            request,
            await buscar_item(ctx, item.event_id),
            ficha,
            {},
            status=409,
            mensaje=f"Hay una versión más nueva de {item.sku} (v{superada}): no se publica una "
            "versión anterior.",
        )
    return None


def _cierre_sin_publicar(
    item: Item, decision: str, usuario: str, criterios: list[str], nota: str
) -> Cierre:
    """A decision that publishes nothing (reject, sample verdict), stamped now."""
    ahora = time.time()
    return Cierre(
        decision=decision,
        criterios=criterios,
        revisor=usuario,
        decidida_en=ahora,
        registro=dec.decision_de(item, decision, usuario, ahora, criterios, nota),
        publicacion=None,
    )


async def _cerrar(ctx: Contexto, request: web.Request, item: Item, cierre: Cierre) -> web.Response:
    """Persist the decision, then send it; the reviewer hears back only after both."""
    decision = await ctx.almacen.decidir(item, cierre)
    if decision is None:
        cerrado = await _no_abierto(ctx, request, await buscar_item(ctx, item.event_id))
        assert cerrado is not None
        return cerrado
    if decision.publicacion is not None:
        fault_point(REVISOR_CAIDA_TRAS_DECISION)
    if ctx.vigilancia is not None and decision.tipo == TIPO_MUESTRA:
        # The monitor reads the verdict from the store, in publication order.
        _en_segundo_plano(ctx.vigilancia.revisar_o_registrar())
    if ctx.apertura is not None and decision.tipo != TIPO_MUESTRA:
        _en_segundo_plano(ctx.apertura.revisar_o_registrar())
    aviso = "etiqueta" if item.candidata else await _enviar(ctx, decision.event_id)
    siguiente = await ctx.almacen.siguiente(item.event_id, item.candidata)
    vista = {"vista": VISTA_CANDIDATA} if item.candidata else {}
    destino = (
        "/item?" + urlencode({"id": siguiente, "decidido": item.event_id, "aviso": aviso})
        if siguiente
        else "/?" + urlencode({**vista, "decidido": item.event_id, "aviso": aviso})
    )
    raise web.HTTPSeeOther(destino)


async def _enviar(ctx: Contexto, event_id: str) -> str:
    """Send a live decision's record, waiting at most ``ctx.envio_s``: the banner's code."""
    # The send goes on even if the reviewer stops waiting: cancelling it half-way could leave a
    # record in the producer's buffer that the outbox would then send a second time.
    envio = asyncio.create_task(ctx.flujo.enviar(event_id))
    envio.add_done_callback(_registrar_fallo)
    try:
        await asyncio.wait_for(asyncio.shield(envio), ctx.envio_s)
    except Exception:  # broker down or slow: the outbox sends it later, say so
        log.warning("decision %s stored, sending pending", event_id)
        return "pendiente"
    return "enviada"


def _en_segundo_plano(corrutina: Any) -> None:
    """Run a coroutine the request does not wait for, keeping a reference until it ends."""
    tarea = asyncio.create_task(corrutina)
    _TAREAS.add(tarea)
    tarea.add_done_callback(_TAREAS.discard)


def _registrar_fallo(envio: asyncio.Task[bool]) -> None:
    """A send that failed after the reviewer stopped waiting: logged; the outbox retries."""
    if not envio.cancelled() and envio.exception() is not None:
        log.warning("sending a decision failed; the outbox will retry: %r", envio.exception())


async def _no_abierto(ctx: Contexto, request: web.Request, item: Item) -> web.Response | None:
    """The page a reviewer sees when someone (or a newer version) got there first."""
    actual = await ctx.almacen.item(item.event_id)
    if actual is None or actual.estado == ABIERTA:
        return None
    decision = await ctx.almacen.decision(item.event_id)
    quien = f" por {decision.revisor}" if decision else ""
    que = decision.decision if decision else actual.estado
    return await render_item(
        ctx,
        request,
        actual,
        dec.ficha_de(actual),
        {},
        status=409,
        mensaje=f"Este elemento ya está cerrado ({que}{quien}).",
    )


async def _version_superada(ctx: Contexto, item: Item) -> int | None:
    """The newer version of the SKU, if the worker or this app has handled one.

    A newer version closes the item as ``obsoleta`` right away (its decision is sent).
    """
    del_worker = await ctx.versiones.get(item.sku)
    vista = await ctx.almacen.version_vista(item.sku)
    nueva = max(v for v in (del_worker, vista, item.version) if v is not None)
    if nueva <= item.version:
        return None
    cerradas = await ctx.almacen.observar_version(item.sku, nueva, time.time())
    for decision in cerradas:
        await ctx.flujo.enviar(decision.event_id)
    return nueva


def _ficha_del_form(form: Any) -> dict[str, Any]:
    """The ficha the reviewer submitted: title, description, attributes (empty ones dropped)."""
    atributos = {}
    for clave in form:
        if clave.startswith("atributo__"):
            valor = texto(form.get(clave)).strip()
            if valor:
                atributos[clave.removeprefix("atributo__")] = valor
    return {
        "titulo": texto(form.get("titulo")).replace("\r\n", "\n").strip(),
        "descripcion": texto(form.get("descripcion")).replace("\r\n", "\n").strip(),
        "atributos": atributos,
    }


def _criterios_y_nota(ctx: Contexto, form: Any) -> tuple[list[str], str]:
    criterios = sorted({c for c in form.getall("criterio", []) if c in ctx.ids_criterios})
    return criterios, texto(form.get("nota")).strip()[:MAX_NOTA]
