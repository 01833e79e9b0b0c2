"""``fichas calibrar --recalificar``: certify a new evaluator on people's old labels.

People's labels are about fichas, not about the judge, so when only the evaluator side of the
key changes (its prompt, the rubric, the signal) the stored decided fichas are scored again by
the running evaluator, offline, and the new key is certified on (new score, old label) with the
fixed-n Learn-then-Test (``puerta.certificacion``: one batch, looked at once). Sources: the
reviewer app's store (``revision.almacen.cola``), **shadow-mode items only** (issue 38: while a gate
is open, what reaches people is chosen by the gate), and the labelled set (written by hand, no
generator side). Invariants: only fichas of the running generator (model and its served
identity, generator prompt and settings, criteria) count, else ``GeneradorDistinto``; every
item left out is counted by reason (``FUERA``) and printed; scoring is exactly
``fichas evaluar --modo evaluador``'s. Why and the caveats: docs/puerta.md, "fichas calibrar".
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_CORRECTA,
    DECISION_EDITADA,
    DECISION_INCORRECTA,
    DECISION_RECHAZADA,
)
from esquemas.estado_puerta import ClavePuerta

# People's decisions as labels: a ficha a person had to edit was not publishable as generated.
ETIQUETAS: dict[str, bool] = {
    DECISION_APROBADA: True,
    DECISION_CORRECTA: True,
    DECISION_RECHAZADA: False,
    DECISION_INCORRECTA: False,
    DECISION_EDITADA: False,
}

# Why a stored item is not re-scored; every count is printed and kept in the audit file.
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
}


class GeneradorDistinto(Exception):
    """No stored ficha was written by the running generator: re-scoring cannot serve."""


@dataclass
class Lote:
    """What to re-score, as ``fichas evaluar`` cases, and what was left out and why."""

    casos: list[dict[str, Any]]
    fuente: str
    fuera: dict[str, int] = field(default_factory=dict)
    huella: str = ""  # in the cache key: a labelled set edited since is scored anew
    tipos: set[str] = field(default_factory=set)  # revision / muestra items among the cases


def mismo_generador(a: ClavePuerta, b: ClavePuerta) -> bool:
    """Whether two keys share the generator side: same fichas, so the labels carry over. The
    model writes the fichas too, so (v1.5) its served identity and the generator's request
    settings are part of that side."""

    def lado(c: ClavePuerta) -> tuple[str | None, ...]:
        return (
            c.modelo,
            c.prompt_generador_sha256,
            c.criterios_version,
            c.modelo_servido,
            c.muestreo_generador,
        )

    return lado(a) == lado(b)


def lote_del_conjunto(path: Path) -> Lote:
    """Every candidate of the labelled set (``fichas evaluar``'s reader)."""
    from herramientas.evaluar.casos import cargar_casos

    try:
        casos = cargar_casos(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the labelled set ({exc})") from exc
    huella = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return Lote(casos, f"conjunto {path}", huella=huella)


def lote_del_almacen(
    cerrados: Sequence[tuple[Any, str | None, bool | None]], clave: ClavePuerta, fuente: str
) -> Lote:
    """The decided shadow-mode items of the running generator, as one-candidate cases. Pure.

    ``cerrados`` is ``Almacen.cerrados()``: (item, decision, arrived in shadow mode) in arrival
    order. Only shadow-mode items count (issue 38): while a gate is open, what reaches people
    (held back under λ, the sample of what it published) is chosen by the gate.
    """
    fuera = dict.fromkeys(FUERA, 0)
    casos = []
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
        else:
            casos.append(_caso(item, datos, ETIQUETAS[decision]))
    if not casos and fuera["otro_generador"]:
        raise GeneradorDistinto(
            f"none of the {fuera['otro_generador']} decided fichas in the store was written by "
            "the running generator (model, generator prompt, criteria version). A new generator "
            "writes new fichas, and people's labels on the old ones say nothing about them: "
            "the new key needs new labels. Run it in shadow mode (its gate closed: every ficha "
            "goes to review with its score) and certify on those decisions"
        )
    tipos = {c["candidatas"][0]["tipo"] for c in casos}
    return Lote(casos, fuente, fuera, tipos=tipos)


def _clave(valor: Any) -> ClavePuerta | None:
    """A stored key, or None when it is not one (counted, never a crash)."""
    try:
        return ClavePuerta.model_validate(valor)
    except ValidationError:
        return None


def _caso(item: Any, datos: Mapping[str, Any], aprobada: bool) -> dict[str, Any]:
    """One stored item as a ``fichas evaluar`` case with its one labelled candidate."""
    origen = datos["origen"]
    evento = {
        "sku": item.sku,
        "familia": item.familia,
        "ficha_proveedor": origen.get("ficha_proveedor") or {},
        "cifras": origen.get("cifras") or {},
    }
    candidata = {
        "id": item.event_id,
        "ficha": datos["ficha"],
        "aprobada": aprobada,
        "criterios": list(item.criterios),
        "tipo": item.tipo,
    }
    return {"id": item.event_id, "evento": evento, "candidatas": [candidata]}


def comprobar_almacen(settings: Any) -> None:
    """ValueError when the configuration names no reviewer store (checked before the LLM is
    asked anything, so a wrong setting fails at once)."""
    from revision.almacen.database import exists

    if not exists(settings.postgres_dsn, settings.data_dir):
        raise ValueError(
            f"no reviewer store at FICHAS_POSTGRES_DSN or {settings.data_dir} (FICHAS_DATA_DIR)"
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
    """Score every candidate of ``lote`` with the running evaluator; evaluator-mode records.

    Resumable: each scored candidate is appended to ``cache_path`` under the key's id, so a
    run cut short (or a second source) does not call the model again for what it scored.
    Raises ``grafo.LLMUnavailable`` when the server stays down past ``espera_llm``.
    """
    from grafo import LLMUnavailable
    from herramientas.evaluar.ejecucion import Cache, correr_evaluador
    from infra import eventloop

    cache = Cache(cache_path, f"{clave.texto()}:{lote.huella}")
    try:
        return eventloop.run(
            correr_evaluador(settings, lote.casos, cache, max(1, concurrencia), espera_llm)
        )
    except ExceptionGroup as grupo:  # the runner's task group: one failure is enough to say
        caidas = grupo.subgroup(LLMUnavailable)
        if caidas is None:
            raise
        primera: BaseException = caidas
        while isinstance(primera, BaseExceptionGroup):
            primera = primera.exceptions[0]
        raise primera from grupo
