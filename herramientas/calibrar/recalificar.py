"""``fichas calibrar --recalificar``: certify a new evaluator on people's old labels.

People's labels are about fichas, not about the judge, but the loop retries a ficha its judge
rejects, with the judge's problems as feedback: a new judge changes which attempt ends up final.
So each labelled ficha's whole history is replayed under the running judge
(``herramientas.calibrar.historias``, rule ``grafo.repeticion``) and only the fichas the new loop
would end on, from the same inputs, are certified on (new score, old label) with the fixed-n
Learn-then-Test (``puerta.certificacion``). Sources: the reviewer app's store
(``revision.almacen.cola``), **shadow-mode items only** (issue 38), and the labelled set (written
by hand: no history, so only for a loop that never retries). Invariants: only fichas of the
running generator count, else ``GeneradorDistinto``; every item left out is counted by reason
(``FUERA``, ``grafo.repeticion.MOTIVOS``); nothing kept because the loop can retry:
``SinPoblacion``. docs/puerta.md, "fichas calibrar" and "Re-scoring".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_CORRECTA,
    DECISION_EDITADA,
    DECISION_INCORRECTA,
    DECISION_RECHAZADA,
)
from esquemas.estado_puerta import ClavePuerta
from esquemas.ficha import Ficha
from esquemas.salidas import Intento
from herramientas.calibrar.historias import Historia

if TYPE_CHECKING:
    from revision.almacen.recalificaciones import Corrida, Variantes

# People's decisions as labels: a ficha a person had to edit was not publishable as generated.
ETIQUETAS: dict[str, bool] = {
    DECISION_APROBADA: True,
    DECISION_CORRECTA: True,
    DECISION_RECHAZADA: False,
    DECISION_INCORRECTA: False,
    DECISION_EDITADA: False,
}

# Why a stored item is not replayed; every count is printed and kept in the audit file (the
# replay's own reasons, once the new judge has been asked: ``grafo.repeticion.MOTIVOS``).
FUERA = {
    "fuera_de_sombra": "arrived while its family's gate was open (held back under λ, or a "
    "sample of what the gate published): which of those reach people is chosen by the gate, so "
    "they never count alone (docs/puerta.md, the selection-bias trap)",
    "sombra_desconocida": "stored before the app recorded shadow mode (no evidence row): "
    "whether a gate chose it is unknown",
    "otro_generador": "written by another generator (model, generator prompt or criteria): its "
    "label says nothing about the fichas the running loop writes",
    "anterior_v1_3": "written before v1.3 (no key: which generator wrote it is unknown)",
    "obsoletas": "obsolete (closed by a newer version: nobody judged the ficha)",
    "sin_ficha": "no ficha or no origin stored (nothing to score)",
    "clave_invalida": "a stored key that is not a ClavePuerta",
    "sin_historial": "its attempts cannot be replayed (a record without its attempts, or "
    "whose last attempt is not the labelled ficha; the labelled set's hand-written candidates "
    "when the loop can retry): where the new loop would stop is unknown",
}


class GeneradorDistinto(Exception):
    """No stored ficha was written by the running generator: re-scoring cannot serve."""


class SinPoblacion(Exception):
    """Nothing can be kept because the loop can retry: no labelled ficha is one the new loop
    would end on, so a certification would be about fichas it does not publish."""


@dataclass
class Lote:
    """What to replay, and what was left out and why (the replay adds its own reasons)."""

    historias: list[Historia]
    fuente: str
    etiquetas: str  # the label set's identity: where the variants tried on it are counted
    fuera: dict[str, int] = field(default_factory=dict)
    huella: str = ""  # in the cache key: a labelled set edited since is scored anew
    tipos: set[str] = field(default_factory=set)  # revision / muestra items among the kept


def lado_generador(c: ClavePuerta) -> tuple[str | None, ...]:
    """The generator side of a key: what writes the fichas (the model writes them too, so
    (v1.5) its served identity and the generator's request settings are part of it)."""
    return (
        c.modelo,
        c.prompt_generador_sha256,
        c.criterios_version,
        c.modelo_servido,
        c.muestreo_generador,
    )


def mismo_generador(a: ClavePuerta, b: ClavePuerta) -> bool:
    """Whether two keys share the generator side: same fichas, so the labels carry over."""
    return lado_generador(a) == lado_generador(b)


def etiquetas_del_almacen(clave: ClavePuerta) -> str:
    """The identity of the store's labels a key can use: those on its generator's fichas,
    however many have been added since (a later label does not make an earlier try on the
    others independent of it)."""
    lado = json.dumps(lado_generador(clave)).encode()
    return "almacen:" + hashlib.sha256(lado).hexdigest()[:16]


def lote_del_conjunto(path: Path, max_intentos: int) -> Lote:
    """Every candidate of the labelled set (``fichas evaluar``'s reader) as a one-attempt
    history when the loop never retries (``max_intentos`` 1: its first attempt is final
    whatever the judge says); else none: a hand-written candidate shows no loop history."""
    from herramientas.evaluar.casos import cargar_casos

    try:
        casos = cargar_casos(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the labelled set ({exc})") from exc
    huella = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    candidatas = [(caso, c) for caso in casos for c in caso["candidatas"]]
    historias = [
        Historia(
            id=str(c["id"]),
            evento=dict(caso["evento"]),
            intentos=[{"intento": 1, "ficha": c["ficha"]}],
            aprobada=bool(c["aprobada"]),
            criterios=list(c.get("criterios") or []),
            tipo=c.get("tipo"),
        )
        for caso, c in candidatas
        if max_intentos == 1
    ]
    fuera = {"sin_historial": len(candidatas) - len(historias)}
    return Lote(historias, f"conjunto {path}", f"conjunto:{huella}", fuera, huella)


def lote_del_almacen(
    cerrados: Sequence[tuple[Any, str | None, bool | None]], clave: ClavePuerta, fuente: str
) -> Lote:
    """The decided shadow-mode items of the running generator, each with its history. Pure.

    ``cerrados`` is ``Almacen.cerrados()``: (item, decision, arrived in shadow mode) in arrival
    order. Only shadow-mode items count (issue 38): while a gate is open, what reaches people
    (held back under λ, the sample of what it published) is chosen by the gate.
    """
    fuera = dict.fromkeys(FUERA, 0)
    historias = []
    for item, decision, sombra in cerrados:
        datos: Mapping[str, Any] = item.datos
        if decision not in ETIQUETAS:
            fuera["obsoletas"] += 1
        elif not datos.get("clave"):
            fuera["anterior_v1_3"] += 1
        elif (suya := _clave(datos["clave"])) is None:
            fuera["clave_invalida"] += 1
        elif not mismo_generador(suya, clave):
            fuera["otro_generador"] += 1
        elif sombra is None:
            fuera["sombra_desconocida"] += 1
        elif not sombra:
            fuera["fuera_de_sombra"] += 1
        elif not datos.get("ficha") or not datos.get("origen"):
            fuera["sin_ficha"] += 1
        elif (intentos := intentos_guardados(datos)) is None:
            fuera["sin_historial"] += 1
        else:
            historias.append(_historia(item, datos, intentos, ETIQUETAS[decision]))
    if not historias and fuera["otro_generador"]:
        raise GeneradorDistinto(
            f"none of the {fuera['otro_generador']} decided fichas in the store was written by "
            "the running generator (model, generator prompt, criteria version). A new generator "
            "writes new fichas, and people's labels on the old ones say nothing about them: "
            "the new key needs new labels. Run it in shadow mode (its gate closed: every ficha "
            "goes to review with its score) and certify on those decisions"
        )
    return Lote(historias, fuente, etiquetas_del_almacen(clave), fuera)


def intentos_guardados(datos: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The stored attempts of a review record, numbered 1..k, ending on its ficha (the labelled
    one); None when they cannot show where the loop stopped. A record of one attempt needs none
    of them (its attempt's only input is the origin). Fields a newer writer added are ignored."""
    final = datos.get("ficha")
    crudos = datos.get("historial") or []
    if not crudos:
        return [{"intento": 1, "ficha": final}] if datos.get("intentos") == 1 else None
    try:
        intentos = [
            Intento.model_validate({k: v for k, v in dict(i).items() if k in Intento.model_fields})
            for i in crudos
        ]
        etiquetada = Ficha.model_validate(final)
    except (ValidationError, TypeError, ValueError):
        return None
    if (
        [i.intento for i in intentos] != list(range(1, len(intentos) + 1))
        or datos.get("intentos") != len(intentos)
        or any(i.ficha is None for i in intentos)
        or intentos[-1].ficha != etiquetada
    ):
        return None
    return [i.model_dump(mode="json") for i in intentos]


def _clave(valor: Any) -> ClavePuerta | None:
    """A stored key, or None when it is not one (counted, never a crash)."""
    try:
        return ClavePuerta.model_validate(valor)
    except ValidationError:
        return None


def _historia(
    item: Any, datos: Mapping[str, Any], intentos: list[dict[str, Any]], aprobada: bool
) -> Historia:
    """One stored item as a history: the event the agents' origin is built from, its attempts,
    people's label."""
    origen = datos["origen"]
    evento = {
        "sku": item.sku,
        "familia": item.familia,
        "ficha_proveedor": origen.get("ficha_proveedor") or {},
        "cifras": origen.get("cifras") or {},
    }
    return Historia(item.event_id, evento, intentos, aprobada, list(item.criterios), item.tipo)


def comprobar_almacen(settings: Any) -> None:
    """ValueError when the configuration names no reviewer store (checked before the LLM is
    asked anything, so a wrong setting fails at once). ``--recalificar`` needs it whatever its
    source: every variant tried is counted there (``revision.almacen.recalificaciones``)."""
    from revision.almacen.database import exists

    if not exists(settings.postgres_dsn, settings.data_dir):
        raise ValueError(
            f"no reviewer store at FICHAS_POSTGRES_DSN or {settings.data_dir} (FICHAS_DATA_DIR): "
            "--recalificar reads people's labels there and counts every evaluator variant "
            "tried on them there"
        )


async def leer_almacen(settings: Any) -> list[tuple[Any, str | None, bool | None]]:
    """The store's closed items; ValueError when the configuration names no store."""
    from revision.almacen.cola import Almacen

    comprobar_almacen(settings)
    almacen = await Almacen.abrir(settings.postgres_dsn, settings.data_dir)
    try:
        return await almacen.cerrados()
    finally:
        await almacen.cerrar()


def recalificar(
    settings: Any,
    lote: Lote,
    clave: ClavePuerta,
    cache_path: Path,
    concurrencia: int,
    espera_llm: float,
) -> list[dict[str, Any]]:
    """Replay every history of ``lote`` under the running evaluator; the evaluator-mode
    records of the kept ones (their labelled attempt), in the lote's order. Adds the count of
    every history dropped, by reason, to ``lote.fuera``; the kept items' kinds to ``lote.tipos``.

    Resumable: each judged attempt is appended to ``cache_path`` under the key's id, so a run
    cut short (or a second source) does not call the model again for what it judged.
    Raises ``grafo.LLMUnavailable`` when the server stays down past ``espera_llm``.
    """
    from grafo import LLMUnavailable
    from grafo.repeticion import CONSERVADA, MOTIVOS
    from herramientas.calibrar.historias import repetir
    from herramientas.evaluar.ejecucion import Cache
    from infra import eventloop

    cache = Cache(cache_path, f"historial:{clave.texto()}:{lote.huella}")
    try:
        finales = eventloop.run(
            repetir(
                settings, lote.historias, cache, max(1, concurrencia), espera_llm,
                settings.max_intentos,
            )
        )  # fmt: skip
    except ExceptionGroup as grupo:  # the runner's task group: one failure is enough to say
        caidas = grupo.subgroup(LLMUnavailable)
        if caidas is None:
            raise
        primera: BaseException = caidas
        while isinstance(primera, BaseExceptionGroup):
            primera = primera.exceptions[0]
        raise primera from grupo
    lote.fuera |= {m: lote.fuera.get(m, 0) for m in MOTIVOS}
    registros = []
    for historia in lote.historias:
        motivo, registro = finales[historia.id]
        if motivo == CONSERVADA:
            registros.append(registro)
            lote.tipos.add(str(historia.tipo))
        else:
            lote.fuera[motivo] += 1
    return registros


def sin_poblacion(fuentes: Sequence[Mapping[str, Any]], max_intentos: int) -> str | None:
    """Why nothing can be certified, when nothing was kept because the loop can retry (the
    message of ``SinPoblacion``); None when something was kept, or nothing was dropped for it.
    ``fuentes``: each source's counts (``candidatas`` kept, and one per reason). Pure."""
    from grafo.repeticion import MOTIVOS

    if max_intentos == 1 or any(f["candidatas"] for f in fuentes):
        return None
    razones = {m: sum(f.get(m, 0) for f in fuentes) for m in ["sin_historial", *MOTIVOS]}
    if not any(razones.values()):
        return None
    cuentas = ", ".join(f"{n} {m}" for m, n in razones.items() if n)
    return (
        f"no labelled ficha is one the new loop would end on ({cuentas}). With "
        f"FICHAS_MAX_INTENTOS={max_intentos} the loop retries a ficha its judge rejects, with "
        "the judge's problems as feedback, so a new judge changes which attempt ends up final: "
        "a threshold certified on these labels would speak for fichas the new loop does not "
        "publish. Certify the new key on new labels: run it in shadow mode (its gate closed) "
        "and let people decide its fichas (docs/puerta.md, 'Re-scoring')"
    )


async def registrar_corrida(settings: Any, corrida: Corrida) -> Variantes:
    """Record this run in the reviewer store and count the variants tried on its labels,
    this one included."""
    from revision.almacen.recalificaciones import Recalificaciones

    almacen = await Recalificaciones.abrir(settings.postgres_dsn, settings.data_dir)
    try:
        await almacen.registrar(corrida)
        return await almacen.variantes(corrida.etiquetas)
    finally:
        await almacen.cerrar()
