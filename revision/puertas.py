"""The "Puertas" page: every gate's state and, while it shadows, how far it is from opening.

Routes (both need a session; the POST needs the session's CSRF token, as every form):
- ``GET /puertas``: one block per gate the app knows, from ``fichas.puerta`` (its state, key,
  λ, n, k, who opened it, the online bound of ``revision.vigilancia``) and from the certifier
  (``revision.apertura``: the decided prefix against the arrivals, the first undecided ficha,
  the evidence per λ of the grid, how many consecutive approvals would open it);
- ``POST /puertas/abrir``: in ``--apertura manual``, a reviewer opens a gate the certifier shows
  ready; the certifier checks again before writing, and records the reviewer's name.

A module of its own (not ``revision.paginas``): the page changes with the gate, the queue does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from urllib.parse import urlencode

from aiohttp import web

from esquemas.constantes import FAMILIA_TODAS
from esquemas.puerta import ClavePuerta, EstadoPuerta
from revision.apertura import APERTURA_MANUAL, Secuencia
from revision.vigilancia import Seguimiento, actuales
from revision.web import CTX, pagina, texto

AVISOS_PUERTA = {
    "abierta": "Puerta abierta: los workers publicarán sin persona lo que supere λ.",
    "no_lista": "La puerta ya no está lista para abrirse (o ya está abierta): no se escribió nada.",
}


@dataclass(frozen=True)
class Fila:
    """One gate as the page shows it."""

    id: str
    familia: str
    clave: ClavePuerta
    estado: EstadoPuerta | None
    secuencia: Secuencia | None
    seguimiento: Seguimiento | None
    lista: bool

    @property
    def abierta(self) -> bool:
        return self.estado is not None and self.estado.abierta


def filas(
    estados: dict[str, EstadoPuerta],
    secuencias: list[Secuencia],
    seguimientos: dict[str, Seguimiento],
    listas: set[str],
) -> list[Fila]:
    """Every gate known from the topic or from shadow-mode evidence, pooled first. Pure."""
    por_id = {s.id: s for s in secuencias}
    ids = sorted(set(estados) | set(por_id), key=lambda i: (i.split("|")[1], i.split("|")[0]))
    resultado = []
    for id_ in ids:
        estado, sec = estados.get(id_), por_id.get(id_)
        if sec is not None and not sec.llegadas and estado is None:
            continue  # a family seen only before the last restart: nothing to show
        origen = estado if estado is not None else sec
        assert origen is not None
        resultado.append(
            Fila(
                id=id_,
                familia=origen.familia,
                clave=origen.clave,
                estado=estado,
                secuencia=sec,
                seguimiento=seguimientos.get(id_),
                lista=id_ in listas,
            )
        )
    resultado.sort(key=lambda f: (f.clave.texto(), f.familia != FAMILIA_TODAS, f.familia))
    return resultado


def e_valor(valor: float) -> str:
    """An e-value for people: ``3.2``, ``1.4e+05``, ``∞``."""
    if math.isinf(valor):
        return "∞"
    return f"{valor:.3g}"


async def puertas_get(request: web.Request) -> web.Response:
    """The page, computed afresh from the store."""
    ctx = request.app[CTX]
    apertura = ctx.apertura
    secuencias: list[Secuencia] = []
    listas: set[str] = set()
    estados: dict[str, EstadoPuerta] = {}
    if apertura is not None:
        # Recomputed from the store, without the lock nor a write to Kafka: a broker that is
        # down slows the certifier's writes, never this page.
        await apertura.calcular()
        secuencias = list(apertura.secuencias)
        listas = {s.id for s in apertura.listas()}
        estados = dict(apertura.estados())
    seguimientos = actuales(ctx.vigilancia.seguimientos) if ctx.vigilancia is not None else {}
    return pagina(
        ctx,
        request,
        "puertas.html",
        filas=filas(estados, secuencias, seguimientos, listas),
        manual=apertura is not None and apertura.modo == APERTURA_MANUAL,
        modo=apertura.modo if apertura is not None else "",
        aviso=AVISOS_PUERTA.get(request.query.get("aviso", ""), ""),
        e_valor=e_valor,
        enlace_item=lambda event_id: "/item?" + urlencode({"id": event_id}),
        un_delta=lambda d: f"{1 / d:.0f}",
    )


async def puertas_abrir(request: web.Request) -> web.Response:
    """One click: open the gate if the certifier, checked again now, says it is ready."""
    ctx = request.app[CTX]
    if ctx.apertura is None or ctx.apertura.modo != APERTURA_MANUAL:
        raise web.HTTPBadRequest(text="La app abre las puertas sola (--apertura automatica).")
    form = await request.post()
    estado = await ctx.apertura.abrir(texto(form.get("puerta")), request["usuario"])
    raise web.HTTPSeeOther("/puertas?" + urlencode({"aviso": "abierta" if estado else "no_lista"}))
