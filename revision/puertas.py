"""The "Puertas" page: every gate's state and, while it shadows, how far it is from opening.

Routes (both need a session; the POST needs the session's CSRF token, as every form):
- ``GET /puertas``: one block per gate the app knows, from ``fichas.puerta`` (its state, key,
  λ, n, k, who opened it, the online bound of ``revision.vigilancia``) and from the certifier
  (``revision.apertura``: the decided prefix against the arrivals, the first undecided ficha,
  the evidence per λ of the grid, how many consecutive approvals would open it);
- ``POST /puertas/abrir``: in ``--apertura manual`` (or, for a family outside
  ``--apertura-familias``, in automatic mode), a reviewer opens a gate the certifier shows ready,
  or covers a family the pooled gate covers; the certifier checks again before writing, once per
  mark whatever replica serves the click, and records the reviewer's name.

Beside the gates, "Qué puerta rige cada familia": per key and family, the gate that governs it
and why (``revision.gobierno``), the automatic scope and which replica runs the certifier.

A module of its own (not ``revision.paginas``): the page changes with the gate, the queue does not.
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import urlencode

from aiohttp import web

from esquemas.constantes import FAMILIA_TODAS, MOTIVO_PUERTA_CUBIERTA
from esquemas.puerta import ClavePuerta, EstadoPuerta, id_puerta
from puerta.alcance import Alcance
from puerta.resolucion import cobertura_vigente
from revision.apertura import APERTURA_MANUAL, Apertura
from revision.gobierno import Gobierno, familias, gobierno
from revision.secuencias import Secuencia
from revision.vigilancia import Seguimiento, actuales
from revision.web import CTX, pagina, texto

AVISOS_PUERTA = {
    "abierta": "Puerta abierta: los workers publicarán sin persona lo que supere λ.",
    "no_lista": "La puerta ya no está lista para abrirse (o ya está abierta): no se escribió nada.",
}


@dataclass(frozen=True)
class Rige:
    """One key's families and the gate that governs each, as the page shows them."""

    clave: ClavePuerta
    familias: list[Gobierno]


def rigen(
    estados: dict[str, EstadoPuerta],
    secuencias: list[Secuencia],
    alcance: Alcance,
    manual: bool,
) -> list[Rige]:
    """Per key with any family, each family's governing gate and why (pure)."""
    claves = {s.clave.texto(): s.clave for s in secuencias}
    claves |= {e.clave.texto(): e.clave for e in estados.values()}
    resultado = []
    for _, clave in sorted(claves.items()):
        por_familia = {s.familia: s for s in secuencias if s.clave == clave}
        filas_ = [
            gobierno(f, clave, estados, por_familia.get(f), alcance, manual)
            for f in familias(clave, estados, secuencias)
        ]
        if filas_:
            resultado.append(Rige(clave, filas_))
    return resultado


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
    por_clic: bool = False
    cubrible: bool = False
    vigente: bool = True  # a covered record still rests on the pooled gate's certification

    @property
    def abierta(self) -> bool:
        """Open as the workers apply it (a covered record only while its pooled gate is)."""
        return self.estado is not None and self.estado.abierta and self.vigente


def filas(
    estados: dict[str, EstadoPuerta],
    secuencias: list[Secuencia],
    seguimientos: dict[str, Seguimiento],
    listas: set[str],
    por_clic: Collection[str] = (),
    cubribles: Collection[str] = (),
) -> list[Fila]:
    """Every gate known from the topic or from shadow-mode evidence, pooled first. Pure."""
    por_id = {s.id: s for s in secuencias}
    estados = {i: e for i, e in estados.items() if not e.retencion}  # holds: "Qué puerta rige"
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
                por_clic=id_ in por_clic,
                cubrible=id_ in cubribles,
                vigente=estado is None
                or estado.motivo != MOTIVO_PUERTA_CUBIERTA
                or cobertura_vigente(estado, estados.get(id_puerta(FAMILIA_TODAS, origen.clave))),
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
    clics: set[str] = set()
    cubribles: set[str] = set()
    estados: dict[str, EstadoPuerta] = {}
    manual = apertura is not None and apertura.modo == APERTURA_MANUAL
    rige: list[Rige] = []
    certificador = ""
    if apertura is not None:
        # Advanced from the store in memory, without the lock nor a write: a broker that is
        # down slows the certifier's writes, never this page.
        secuencias = list(await apertura.calcular())
        estados = dict(apertura.estados())
        listas = {s.id for s in apertura.listas(estados)}
        clics = {s.id for s in secuencias if apertura.por_clic(s.familia)}
        cubribles = {s.id for s in secuencias if apertura.cubrible(s.id, estados)}
        rige = rigen(estados, secuencias, apertura.alcance, manual)
        certificador = await _certificador(apertura)
    seguimientos = actuales(ctx.vigilancia.seguimientos) if ctx.vigilancia is not None else {}
    return pagina(
        ctx,
        request,
        "puertas.html",
        filas=filas(estados, secuencias, seguimientos, listas, clics, cubribles),
        rige=rige,
        alcance=apertura.alcance.describir() if apertura is not None else "",
        certificador=certificador,
        manual=manual,
        modo=apertura.modo if apertura is not None else "",
        aviso=AVISOS_PUERTA.get(request.query.get("aviso", ""), ""),
        e_valor=e_valor,
        enlace_item=lambda event_id: "/item?" + urlencode({"id": event_id}),
        un_delta=lambda d: f"{1 / d:.0f}",
    )


async def _certificador(apertura: Apertura) -> str:
    """Which replica runs the certifier, in one line for the page."""
    lease = apertura.lease
    if lease is None:
        return "esta réplica (la única)"
    if lease.held:
        return f"esta réplica ({lease.holder})"
    actual = await lease.current()
    if actual is None or actual[1] < time.time():
        return "ninguna ahora (el arriendo está libre: una réplica lo toma en segundos)"
    return f"otra réplica ({actual[0]}); esta solo muestra lo que calcula"


async def puertas_abrir(request: web.Request) -> web.Response:
    """One click: open the gate if the certifier, checked again now, says it is ready."""
    ctx = request.app[CTX]
    form = await request.post()
    puerta_id = texto(form.get("puerta"))
    if ctx.apertura is None or not ctx.apertura.por_clic(puerta_id.split("|", 1)[0]):
        raise web.HTTPBadRequest(text="La app abre las puertas sola (--apertura automatica).")
    estado = await ctx.apertura.abrir(puerta_id, request["usuario"])
    raise web.HTTPSeeOther("/puertas?" + urlencode({"aviso": "abierta" if estado else "no_lista"}))
