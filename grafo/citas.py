"""The evaluator as a quoter: the model copies, code judges (``FICHAS_EVALUADOR=citas``).

For each claim of the ficha (``criterios.respaldo.afirmaciones``) the model copies the fragment
of the cleaned origin that says the same, or none, and says whether it is supported; code
accepts a quote only if it is in the origin and backs its claim (``criterios.respaldo``). The
score is the product over claims of 1 for a claim code found supported and ``TECHO`` × the
model's belief for any other (and ``TECHO`` per unsupported attribute or empty description),
None without logprobs; each finding is a problem (C04, C06) a retry can act on. ``leer`` is the
model-free mode (``lector``, issue 48): code quotes the best fragment itself. The formula,
the alternatives measured and why this one: docs/calidad.md («El evaluador citas»),
docs/grafo.md, "The quoting evaluator".
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from criterios import lector
from criterios.clausulas import Lectura, anadido
from criterios.fidelidad import leer_origen
from criterios.respaldo import acepta, cobertura, fiel, mejor_cita, respaldada
from esquemas import Problema, Veredicto
from esquemas.constantes import MAX_DETALLE

# The factor of a claim code could not confirm, times the model's belief: below the opener's
# strictest threshold (puerta.secuencial.REJILLA[0] = 0.95), so one such claim keeps a ficha
# off the top of the grid whatever the model says.
TECHO = 0.9
RUTA_RESPALDADA: tuple[str, ...] = ("citas", "respaldada")
CRITERIO = "C04"
# The claim is quoted in the problem up to this length, so the instruction always fits.
MAX_CITA_PROBLEMA = 110


class Cita(BaseModel):
    """One claim's answer: the fragment of the origin that says the same, then the judgement."""

    model_config = ConfigDict(extra="ignore")

    cita: str = Field(description="Fragmento del origen copiado tal cual; vacío si no lo dice")
    respaldada: bool = Field(description="true si el origen dice todo lo que afirma")


class Citas(BaseModel):
    """The answer: one ``Cita`` per claim, in the claims' order."""

    model_config = ConfigDict(extra="ignore")

    citas: list[Cita] = Field(description="Una cita por afirmación, en su orden")


def formato_respuesta(base: Mapping[str, Any], fragmentos: Sequence[str], n: int) -> dict[str, Any]:
    """The request's ``response_format`` for one ficha: the agent's own (``base``, built by
    ``ProviderStrategy`` from ``Citas``) with exactly ``n`` quotes, each "" or one of the
    origin's ``fragmentos``. Guided decoding then cannot write a quote that is not in the
    origin, nor skip a claim; the model still never sees the schema."""
    formato = copy.deepcopy(dict(base))
    esquema = formato["json_schema"]["schema"]
    lista = esquema["properties"]["citas"]
    lista.update({"minItems": n, "maxItems": n})
    item = lista["items"]
    if "$ref" in item:  # pydantic puts the item model in $defs
        nombre = item["$ref"].rsplit("/", 1)[-1]
        item = esquema["$defs"][nombre]
    item["properties"]["cita"]["enum"] = ["", *fragmentos]
    return formato


@dataclass(frozen=True)
class Juicio:
    """Code's judgement of one claim: its quote, accepted or not, what it covers, the model's
    P(respaldada = true), and whether the claim counts as supported."""

    afirmacion: str
    cita: str
    aceptada: bool
    cobertura: float
    p_respaldada: float | None
    respaldada: bool
    parecido: float | None = None  # the reader's cosine (``leer``), None when a model quoted
    anadido: Lectura | None = None  # a clause the origin does not say (``leer``)

    def como_registro(self) -> dict[str, Any]:
        """JSON for ``fichas evaluar``'s record, so other scores can be computed offline."""
        registro = {
            "afirmacion": self.afirmacion,
            "cita": self.cita,
            "aceptada": self.aceptada,
            "cobertura": round(self.cobertura, 4),
            "p_respaldada": self.p_respaldada,
            "respaldada": self.respaldada,
        }
        if self.parecido is not None:
            registro["parecido"] = round(self.parecido, 4)
        if self.anadido is not None:
            registro["anadido"] = {
                "clausula": self.anadido.clausula,
                "parecido": round(self.anadido.parecido, 4),
                "umbral": self.anadido.umbral,
            }
        return registro


def juzgar(
    afirmaciones: Sequence[str],
    respuesta: Citas,
    probabilidades: Sequence[float | None],
    origen: Mapping[str, Any],
) -> list[Juicio]:
    """Code's judgement of every claim; a claim the answer left without a quote has none."""
    juicios = []
    familia = str(origen.get("familia") or "")
    for i, afirmacion in enumerate(afirmaciones):
        cita = respuesta.citas[i].cita if i < len(respuesta.citas) else ""
        p = probabilidades[i] if i < len(probabilidades) else None
        juicios.append(
            Juicio(
                afirmacion=afirmacion,
                cita=cita,
                aceptada=acepta(cita, afirmacion, origen),
                cobertura=cobertura(cita, afirmacion, familia) if cita else 0.0,
                p_respaldada=p,
                respaldada=respaldada(cita, afirmacion, origen),
            )
        )
    return juicios


def leer(afirmaciones: Sequence[str], origen: Mapping[str, Any]) -> list[Juicio]:
    """The model-free evaluator (``FICHAS_EVALUADOR=lector``): code quotes for every claim
    the fragment that supports it, or the closest one (``criterios.respaldo.mejor_cita``);
    a claim with a clause the origin does not say is not supported, whatever the quote
    (``criterios.clausulas``: a fact added inside a sentence)."""
    juicios = []
    familia = str(origen.get("familia") or "")
    espanol = leer_origen(origen).idioma is None
    for afirmacion in afirmaciones:
        cita, apoyada, parecido = mejor_cita(afirmacion, origen)
        de_mas = anadido(afirmacion, origen, espanol)
        juicios.append(
            Juicio(
                afirmacion=afirmacion,
                cita=cita,
                aceptada=acepta(cita, afirmacion, origen) if cita else False,
                cobertura=cobertura(cita, afirmacion, familia) if cita else 0.0,
                p_respaldada=None,
                respaldada=apoyada and de_mas is None,
                parecido=parecido if fiel(afirmacion, origen) else 0.0,
                anadido=de_mas,
            )
        )
    return juicios


def puntuacion_lectura(
    juicios: Sequence[Juicio], atributos: Sequence[str] = (), vacia: bool = False
) -> float | None:
    """The model-free evaluator's score, on the same scale as ``puntuacion_citas``: 1 for a
    supported claim, ``TECHO`` × the reader's grade of its cosine for any other (0 for a claim
    with a number or a value the origin contradicts or lacks: ``parecido`` 0), times the
    grade of a clause the origin does not say (``Lectura.grado``); ``TECHO`` per unsupported
    attribute and for an empty description. None for a ficha without claims."""
    if not juicios:
        return None
    factores = [_factor_lectura(j) for j in juicios if not j.respaldada]
    return math.prod(factores) * TECHO ** (len(atributos) + vacia)


def _factor_lectura(juicio: Juicio) -> float:
    """An unsupported claim's factor in ``puntuacion_lectura``: ``TECHO`` × the reader's
    grade of the claim, × the grade of its added clause if it has one."""
    lectura = lector.grado(juicio.parecido or 0.0)
    if juicio.anadido is None:
        return TECHO * lectura
    return TECHO * lectura * juicio.anadido.grado()


def puntuacion_citas(
    juicios: Sequence[Juicio], atributos: Sequence[str] = (), vacia: bool = False
) -> float | None:
    """Product over claims: 1 for a supported one, ``TECHO`` × P(respaldada) for any other;
    and ``TECHO`` for each attribute whose value the origin does not give and for a
    description that says nothing the title does not (code alone judges those two:
    ``criterios.respaldo.atributos_sin_respaldo``, ``descripcion_sin_nada_propio``).

    None when there is no claim, when no claim's probability can be read (a server without
    logprobs: the score is the model's as well as code's, and the start-up probe says so), or
    when an unsupported claim has none (less than half the mass on true/false:
    ``grafo.puntuacion.MASA_MINIMA``).
    """
    if not juicios or all(j.p_respaldada is None for j in juicios):
        return None
    factores = []
    for juicio in juicios:
        if juicio.respaldada:
            continue
        if juicio.p_respaldada is None:
            return None
        factores.append(TECHO * juicio.p_respaldada)
    return math.prod(factores) * TECHO ** (len(atributos) + vacia)


def veredicto_de_citas(
    juicios: Sequence[Juicio], atributos: Sequence[str] = (), vacia: bool = False
) -> Veredicto:
    """Approved when every claim and attribute is supported; each other one is a C04 problem
    that quotes it and says what to do, for the generator's next attempt."""
    problemas = [
        Problema(
            criterio=CRITERIO,
            detalle=_detalle(j.afirmacion, j.anadido.clausula if j.anadido else None),
        )
        for j in juicios
        if not j.respaldada
    ]
    problemas += [
        Problema(criterio=CRITERIO, detalle=f"atributo «{a}»: el origen no da ese valor. {_USA}")
        for a in atributos
    ]
    if vacia:
        problemas.append(Problema(criterio="C06", detalle=_VACIA))
    if not juicios:
        problemas = [Problema(criterio="C06", detalle="la ficha no dice nada del producto")]
    return Veredicto(aprobada=not problemas, problemas=problemas)


_USA = "Usa el valor del origen"
_VACIA = (
    "la descripción no dice nada que no diga el título. Di qué es, para qué sirve y sus rasgos "
    "del origen"
)


def _detalle(afirmacion: str, clausula: str | None = None) -> str:
    """«claim»: the origin does not say it; remove it or say only what the origin says. With
    an added clause, the clause first and the claim it is in, cut to fit ``MAX_DETALLE``."""
    if clausula is None:
        texto = _recortado(afirmacion, MAX_CITA_PROBLEMA)
        detalle = f"«{texto}»: el origen no lo dice. Quítalo o di solo lo que dice el origen"
        return detalle[:MAX_DETALLE]
    parte = _recortado(clausula, MAX_CITA_PROBLEMA)
    resto = f"«{parte}» (en «»): el origen no lo dice. Quítalo"
    texto = _recortado(afirmacion, max(1, MAX_DETALLE - len(resto)))
    return f"«{parte}» (en «{texto}»): el origen no lo dice. Quítalo"[:MAX_DETALLE]


def _recortado(texto: str, maximo: int) -> str:
    """A text for a problem: one line, at most ``maximo`` characters."""
    texto = " ".join(texto.split())
    if len(texto) > maximo:
        texto = texto[: maximo - 1] + "…"
    return texto
