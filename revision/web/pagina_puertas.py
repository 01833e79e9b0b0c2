"""The "Puertas" page: every gate's state and, while it shadows, how far it is from opening.

``GET /puertas`` shows the gates in play and what holds for them together, then one block per
gate the app knows (``fichas.puerta``, the closing tests of ``revision.certificador.vigilancia``
and the sampled item holding their verdicts back, a person's hold, the evaluator variants
``--recalificar`` tried on its labels, the obsolete rate) with the certifier's view of it
(``revision.certificador.apertura``; how many approvals are missing is on ``/metrics`` only,
never shown to those whose approvals they are), which gate governs each family, the automatic
scope, the certifying replica and the live key against the candidate. ``POST /puertas/abrir``
lets a reviewer open a gate the certifier shows ready (manual opening, or a family outside the
automatic scope) or relax an open one; ``/puertas/retener`` and ``/puertas/liberar`` write a
person's hold or release and wait until the app's reader sees it. Every route needs a session
and every POST its CSRF token. Its own module: the page changes with the gate, the queue does
not. docs/revision.md, "Puerta de publicación".
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

from aiohttp import web

from criterios import familias_conocidas
from esquemas.constantes import FAMILIA_TODAS, MOTIVO_PUERTA_CUBIERTA, MOTIVO_PUERTA_RETENIDA
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_puerta
from puerta.alcance import Alcance
from puerta.resolucion import cobertura_vigente
from puerta.retencion import registro_retencion, retencion
from puerta.secuencial import REJILLA, EstadoSecuencia
from revision.almacen import obsoletas
from revision.certificador.apertura import APERTURA_MANUAL, Apertura, relajable
from revision.certificador.comparacion import comparar
from revision.certificador.gobierno import EnJuego, Gobierno, familias, gobierno
from revision.certificador.secuencias import Secuencia
from revision.certificador.vigilancia import Seguimiento, actuales
from revision.web.base import CTX, pagina, texto

log = logging.getLogger(__name__)

AVISOS_PUERTA = {
    "abierta": "Puerta abierta: los workers publicarán sin persona lo que supere λ.",
    "no_lista": "La puerta ya no está lista para abrirse (o ya está abierta): no se escribió nada.",
    "retenida": "Puerta {puerta} retenida: los workers la cierran en segundos y la "
    "apertura automática no la abre hasta que alguien la libere. No se escribió ninguna "
    "etiqueta.",
    "liberada": "Puerta {puerta} liberada: vuelve a regirla su propio estado (la "
    "apertura automática puede abrirla si la evidencia la certifica).",
    "ya_retenida": "La puerta {puerta} ya estaba retenida: no se escribió nada.",
    "no_retenida": "La puerta {puerta} no estaba retenida: no se escribió nada.",
    "sin_escribir": "Kafka no confirmó la escritura en fichas.puerta: la puerta {puerta} sigue "
    "como estaba. Vuelva a intentarlo.",
    "sin_motivo": "Escriba el motivo (hasta 500 caracteres): no se escribió nada.",
    "pendiente": "Retención de {puerta} escrita en fichas.puerta; la app aún no la ha leído de "
    "vuelta: recargue en unos segundos.",
}
ESCRITURA_S = 20.0  # how long a reviewer waits for the broker to acknowledge a hold
ESPERA_LECTURA_S = 10.0  # how long a hold's confirmation waits for the app's reader to show it
MAX_MOTIVO = 500  # the contract's limit on a hold's nota


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
    coberturas: Callable[[Secuencia | None], EstadoSecuencia | None] = lambda _: None,
) -> list[Rige]:
    """Per key with any family, each family's governing gate and why (pure; ``coberturas``
    gives a family's coverage sequence under the open pooled certification)."""
    claves = {s.clave.texto(): s.clave for s in secuencias}
    claves |= {e.clave.texto(): e.clave for e in estados.values()}
    resultado = []
    for _, clave in sorted(claves.items()):
        por_familia = {s.familia: s for s in secuencias if s.clave == clave}
        filas_ = [
            gobierno(
                f,
                clave,
                estados,
                por_familia.get(f),
                alcance,
                manual,
                coberturas(por_familia.get(f)),
            )
            for f in familias(clave, estados, secuencias)
        ]
        if filas_:
            resultado.append(Rige(clave, filas_))
    return resultado


@dataclass(frozen=True)
class Fila:
    """One gate as the page shows it. ``retencion``: the newest hold or release record of the
    gate (held when its motivo is ``retenida``)."""

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
    retencion: EstadoPuerta | None = None

    @property
    def retenida(self) -> bool:
        """A person holds this gate closed now."""
        return self.retencion is not None and self.retencion.motivo == MOTIVO_PUERTA_RETENIDA

    @property
    def abierta(self) -> bool:
        """Open as the workers apply it: its record open, nobody holding it, and a covered
        record only while its pooled gate is."""
        return (
            self.estado is not None and self.estado.abierta and self.vigente and not self.retenida
        )


def filas(
    estados: Mapping[str, EstadoPuerta],
    secuencias: list[Secuencia],
    seguimientos: dict[str, Seguimiento],
    listas: set[str],
    por_clic: Collection[str] = (),
    cubribles: Collection[str] = (),
) -> list[Fila]:
    """Every gate known from the topic (its state or its hold) or from shadow-mode evidence,
    pooled first; a hold record is shown on its gate's row, never as a gate. Pure."""
    por_id = {s.id: s for s in secuencias}
    propios = {k: e for k, e in estados.items() if not e.retencion}
    retenciones = {id_puerta(e.familia, e.clave): e for e in estados.values() if e.retencion}
    ids = sorted(
        set(propios) | set(por_id) | set(retenciones),
        key=lambda i: (i.split("|")[1], i.split("|")[0]),
    )
    resultado = []
    for id_ in ids:
        estado, sec, ret = propios.get(id_), por_id.get(id_), retenciones.get(id_)
        if sec is not None and not sec.llegadas and estado is None and ret is None:
            continue  # a family seen only before the last restart: nothing to show
        origen = estado or ret or sec
        assert origen is not None
        resultado.append(
            Fila(
                id=id_,
                familia=origen.familia,
                clave=origen.clave,
                estado=estado,
                secuencia=sec,
                seguimiento=seguimientos.get(id_),
                lista=id_ in listas and (ret is None or ret.motivo != MOTIVO_PUERTA_RETENIDA),
                por_clic=id_ in por_clic,
                cubrible=id_ in cubribles,
                vigente=estado is None
                or estado.motivo != MOTIVO_PUERTA_CUBIERTA
                or cobertura_vigente(estado, propios.get(id_puerta(FAMILIA_TODAS, origen.clave))),
                retencion=ret,
            )
        )
    resultado.sort(key=lambda f: (f.clave.texto(), f.familia != FAMILIA_TODAS, f.familia))
    return resultado


def e_valor(valor: float) -> str:
    """An e-value for people: ``3.2``, ``1.4e+05``, ``∞``."""
    if math.isinf(valor):
        return "∞"
    return f"{valor:.3g}"


async def puertas_ver(request: web.Request) -> web.Response:
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
    juego: EnJuego | None = None
    candidatas = await ctx.almacen.claves_candidatas()
    viva = await ctx.almacen.clave_viva()
    if apertura is not None:
        # Advanced from the store in memory, without the lock nor a write: a broker that is
        # down slows the certifier's writes, never this page.
        secuencias = list(await apertura.calcular())
        estados = dict(apertura.estados())
        listas = {s.id for s in apertura.listas(estados)}
        clics = {s.id for s in secuencias if apertura.por_clic(s.familia)}
        cubribles = {s.id for s in secuencias if apertura.cubrible(s.id, estados)}
        rige = rigen(
            estados,
            secuencias,
            apertura.alcance,
            manual,
            lambda sec: apertura.desde_conjunta(sec, estados),
        )
        certificador = await _certificador(apertura)
        juego = apertura.en_juego(estados)
    seguimientos = actuales(ctx.vigilancia.seguimientos) if ctx.vigilancia is not None else {}
    recalificaciones = ctx.recalificaciones
    variantes = await recalificaciones.por_clave() if recalificaciones is not None else {}
    cerradas = obsoletas.por_puerta(await obsoletas.cerradas(ctx.almacen.database, min(REJILLA)))
    return pagina(
        ctx,
        request,
        "puertas.html",
        filas=filas(estados, secuencias, seguimientos, listas, clics, cubribles),
        rige=rige,
        comparaciones=comparar(viva, candidatas, estados, secuencias),
        candidatas={c for c in candidatas if viva is None or c != viva.texto()},
        viva=viva.texto() if viva is not None else "",
        alcance=apertura.alcance.describir() if apertura is not None else "",
        certificador=certificador,
        juego=juego,
        relajables={s.id for s in secuencias if relajable(s, estados)},
        manual=manual,
        modo=apertura.modo if apertura is not None else "",
        aviso=AVISOS_PUERTA.get(request.query.get("aviso", ""), "").format(
            puerta=request.query.get("puerta", "")
        ),
        variantes=variantes,
        e_valor=e_valor,
        cerradas=cerradas,
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


async def puertas_retener(request: web.Request) -> web.Response:
    """Hold a gate closed: the reviewer's name from the session, the reason from the form."""
    return await _retencion(request, retener=True)


async def puertas_liberar(request: web.Request) -> web.Response:
    """Release a held gate: its own state governs it again."""
    return await _retencion(request, retener=False)


async def _retencion(request: web.Request, retener: bool) -> web.Response:
    """Write the hold or release record of the gate the form names, once its reader shows the
    gate's current hold; wait until it shows the new one; redirect with the confirmation."""
    apertura = request.app[CTX].apertura
    if apertura is None:
        raise web.HTTPServiceUnavailable(text="La app no sigue fichas.puerta.")
    form = await request.post()
    puerta_id = texto(form.get("puerta"))
    motivo = texto(form.get("motivo")).strip()
    estados = apertura.estados()
    clave = _clave_de(puerta_id, estados, apertura.secuencias)
    if clave is None:
        raise web.HTTPNotFound(text="Esa puerta no está en fichas.puerta ni en la evidencia.")
    familia = puerta_id.split("|")[0]
    if not motivo or len(motivo) > MAX_MOTIVO:
        return _volver("sin_motivo", puerta_id)
    actual = retencion(familia, clave, estados)
    if retener and actual is not None:
        return _volver("ya_retenida", puerta_id)
    if not retener and actual is None:
        return _volver("no_retenida", puerta_id)
    registro = registro_retencion(
        familia, clave, retener, request["usuario"], motivo, datetime.now(UTC)
    )
    try:
        await asyncio.wait_for(apertura.escribir(registro), ESCRITURA_S)
    except Exception:  # the broker down or slow: nothing was confirmed, say so
        log.warning("writing the hold record %s failed", registro.id, exc_info=True)
        return _volver("sin_escribir", puerta_id)
    log.warning(
        "gate %s %s by %s: %s",
        id_puerta(familia, clave),
        "held" if retener else "released",
        registro.retenida_por,
        registro.nota,
    )
    visto = await _esperar(lambda: apertura.estados().get(registro.id) == registro)
    aviso = ("retenida" if retener else "liberada") if visto else "pendiente"
    return _volver(aviso, puerta_id)


def _clave_de(
    puerta_id: str, estados: Mapping[str, EstadoPuerta], secuencias: list[Secuencia]
) -> ClavePuerta | None:
    """The key of the gate ``puerta_id`` (``<familia or *>|<key id>``) names: a key the app
    knows from a record or a sequence, and a family of the criteria or ``*``."""
    familia, _, clave_id = puerta_id.partition("|")
    if familia != FAMILIA_TODAS and familia not in familias_conocidas():
        return None
    conocidas = [e.clave for e in estados.values()] + [s.clave for s in secuencias]
    return next((c for c in conocidas if c.texto() == clave_id), None)


async def _esperar(condicion: Callable[[], bool]) -> bool:
    """Poll ``condicion`` until true, for at most ``ESPERA_LECTURA_S``."""
    limite = time.monotonic() + ESPERA_LECTURA_S
    while not condicion():
        if time.monotonic() > limite:
            return False
        await asyncio.sleep(0.2)
    return True


def _volver(aviso: str, puerta_id: str) -> web.Response:
    """Back to the page, at the gate's block, with the confirmation (who and why are on the
    gate's row, read from the topic, never from the link)."""
    consulta = urlencode({"aviso": aviso, "puerta": puerta_id})
    raise web.HTTPSeeOther(f"/puertas?{consulta}#puerta-{puerta_id}")
