"""Where the loop would stop on a stored history under another judge: the replay rule of
``fichas calibrar --recalificar`` (the rule and its proof: docs/puerta.md, "Re-scoring").

What the loop's steps depend on is all in its state: the generator writes attempt j+1 from
the origin and the problems of attempts 1..j (``Nodos.generar``, ``problemas_acumulados``);
``decidir`` ends the loop after attempt j from that attempt's verdict, its number and whether
an answer was invalid. So with the generator side of the key unchanged, a stored attempt j+1 is
a draw of what the new loop would write exactly when the problems the new judge's verdicts on
attempts 1..j accumulate (each vetoed by the same code checks) are the stored ones; and the new
loop ends on the labelled attempt k exactly when ``decidir`` goes on after 1..k-1 and stops at
k. ``seguir`` says which, one attempt at a time, so the caller asks the judge no further than
the replay needs. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esquemas.constantes import PUERTA_CERTIFICADA
from esquemas.ficha import Problema
from grafo.mensajes import problemas_acumulados
from grafo.nodos import decidir

CONSERVADA = "conservada"  # the new loop ends on the labelled attempt, from the same inputs

# Why the new loop would not end on the labelled attempt from the same inputs.
MOTIVOS = {
    "aprobada_antes": "the new judge approves an earlier attempt: the new loop would stop "
    "there and publish or hold a ficha nobody labelled",
    "invalida_antes": "the new judge's answer on an earlier attempt is invalid: the new loop "
    "would stop there (manual review, salida_invalida)",
    "tope_antes": "more attempts than the running loop's cap (FICHAS_MAX_INTENTOS): the new "
    "loop would have stopped earlier",
    "otra_retroalimentacion": "a retry's feedback would differ: the new judge lists other "
    "problems on an earlier attempt, so the new loop's next attempt would be written from "
    "other inputs than the stored one",
    "reintentaria": "the new judge rejects the labelled attempt with attempts left: the new "
    "loop would retry and publish or hold a ficha nobody labelled",
}


@dataclass(frozen=True)
class Juicio:
    """The new judge on one stored attempt as the loop records it: the verdict after the code
    veto, with its score (``grafo.nodos.veredicto_del_bucle``), and whether the answer was
    invalid (``SalidaInvalida``: the loop stops at once)."""

    veredicto: Mapping[str, Any]
    invalida: bool = False


def seguir(
    historial: Sequence[Mapping[str, Any]], juicios: Sequence[Juicio], max_intentos: int
) -> str | None:
    """With the new judge's verdicts on the first ``len(juicios)`` stored attempts: None when
    the replay must judge the next attempt; ``CONSERVADA`` when the new loop ends on the last
    stored attempt (the labelled one) from the same inputs; else the reason in ``MOTIVOS``.

    ``historial``: the stored attempts in order, each with its ``veredicto`` (an attempt's
    feedback is what the stored verdicts of the attempts before it accumulate); the last one's
    verdict is never read.
    """
    j, k = len(juicios), len(historial)
    if not 1 <= j <= k:
        raise ValueError(f"{j} verdicts for {k} stored attempts")
    ultimo = juicios[-1]
    estado: Any = {
        "veredicto": ultimo.veredicto,
        "intentos": j,
        "invalida": {"agente": "evaluador"} if ultimo.invalida else None,
        "puerta": None,  # retries never depend on the gate (decidir)
    }
    sigue = decidir(estado, max_intentos, PUERTA_CERTIFICADA) == "generar"
    if j == k:
        return "reintentaria" if sigue else CONSERVADA
    if not sigue:
        if ultimo.invalida:
            return "invalida_antes"
        return "aprobada_antes" if ultimo.veredicto.get("aprobada") else "tope_antes"
    nuevos = [{"veredicto": juicio.veredicto} for juicio in juicios]
    if _como_se_guardan(nuevos) != _como_se_guardan(historial[:j]):
        return "otra_retroalimentacion"
    return None


def _como_se_guardan(intentos: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The problems the generator got after ``intentos``, as the stored record keeps them: a
    detail longer than the contract allows is stored cut (``Problema``), so both sides are
    compared cut."""
    return [
        (p["criterio"], Problema.model_validate(p).detalle)
        for p in problemas_acumulados([dict(i) for i in intentos])
    ]
