"""The evaluator as a rubric: one yes/no question per criterion it judges, mapped to a verdict.

Small models answer "is this ficha publishable?" with the same word for every ficha. Asked
three narrow questions instead (does it state a fact the origin does not? is the tone
advertising? does the description say nothing?), each with the offending sentence quoted
first, they have something concrete to look for. Code turns the answers into the contract's
``Veredicto``: approved only when no question fails. The code checks still veto afterwards,
as with the plain evaluator.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from esquemas import Problema, Veredicto
from esquemas.constantes import MAX_DETALLE


class Pregunta(BaseModel):
    """One question: the sentence of the ficha that fails it, then whether it fails."""

    model_config = ConfigDict(extra="ignore")

    cita: str = Field(
        default="", description="La frase de la ficha que falla; vacía si ninguna falla"
    )
    falla: bool = Field(description="true si la ficha falla esta pregunta")


class Rubrica(BaseModel):
    """The three questions the evaluator answers; field order is the order they are asked."""

    model_config = ConfigDict(extra="ignore")

    inventa: Pregunta = Field(description="C04: ¿dice algo que el origen no dice?")
    publicidad: Pregunta = Field(description="C05: ¿tono de anuncio o superlativos?")
    vacia: Pregunta = Field(description="C06: ¿la descripción no dice qué es ni para qué sirve?")


# question -> (criterion, detail used when the model quotes nothing)
PREGUNTAS: dict[str, tuple[str, str]] = {
    "inventa": ("C04", "la ficha dice algo que el origen no dice"),
    "publicidad": ("C05", "tono publicitario o superlativo que no se puede comprobar"),
    "vacia": ("C06", "la descripción no dice qué es el producto ni para qué sirve"),
}


def veredicto_de_rubrica(rubrica: Rubrica) -> Veredicto:
    """Approved only when no question fails; each failure is a problem of its criterion."""
    problemas = []
    for campo, (criterio, por_defecto) in PREGUNTAS.items():
        pregunta: Pregunta = getattr(rubrica, campo)
        if pregunta.falla:
            cita = " ".join(pregunta.cita.split())
            detalle = f"«{cita}»: {por_defecto}" if cita else por_defecto
            problemas.append(Problema(criterio=criterio, detalle=detalle[:MAX_DETALLE]))
    return Veredicto(aprobada=not problemas, problemas=problemas)
