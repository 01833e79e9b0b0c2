"""The code checks of a ficha: C01, C02, C03, C05 (mechanical part), C07, and C08–C11 of
``criterios.fidelidad`` (language, contradicted attributes, empty description, numbers).

Pure functions over plain dicts, no I/O: they run between the generator and the evaluator,
the evaluator receives their result, and a failure vetoes publication whatever the evaluator
says. A model judging whether a title has 80 characters does badly what ``len`` does well.

Every check returns ``{"ok": bool, "detalle": str}``: ``detalle`` is empty when ok, else a
short Spanish explanation (at most 200 characters) that quotes the offending text, because
it goes back to the generator as the problem to fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from criterios import fidelidad, reglas_casa
from criterios._comun import (
    ORIGENES_EN_CACHE,
    attributes,
    nfc,
    result,
    short,
    text,
    title_and_description,
)
from criterios.cifras import cifras_en_texto, cifras_en_valor, respaldada, respaldo_de_origen
from criterios.tablas import FamiliaDesconocida, atributos_obligatorios
from criterios.vocabulario import mapear_origen
from esquemas.constantes import MAX_DESCRIPCION, MAX_DETALLE, MAX_TITULO

CRITERIOS_EN_CODIGO = ("C01", "C02", "C03", "C05", "C07", "C08", "C09", "C10", "C11")

# Supplier attributes whose capitals are a name, not shouting: "marca": "ASICS".
NAME_KEYS = frozenset({"marca", "modelo", "fabricante", "brand", "model", "manufacturer"})


def comprobar(
    ficha: Mapping[str, Any],
    origen: Mapping[str, Any],
    mapeado: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run every code check; the keys are the criterion ids, in table order.

    C08–C11 compare with the origin mapped to the house vocabulary (idempotent, so an origin
    the graph already mapped gives the same result). ``mapeado``: that mapped origin, when
    the caller already has it (the graph maps it once per evaluation and shows the same one
    to the evaluator), so it is not mapped again here.
    """
    if mapeado is None:
        mapeado = mapear_origen(origen).origen
    return {
        "C01": comprobar_titulo(ficha),
        "C02": comprobar_descripcion(ficha),
        "C03": comprobar_atributos(ficha, origen),
        "C05": comprobar_reglas_casa(ficha, origen),
        "C07": comprobar_cifras(ficha, origen),
        "C08": fidelidad.comprobar_idioma(ficha, mapeado),
        "C09": fidelidad.comprobar_contradicciones(ficha, mapeado),
        "C10": fidelidad.comprobar_descripcion_vacia(ficha),
        "C11": fidelidad.comprobar_numeros(ficha, mapeado),
    }


def fallos(comprobaciones: Mapping[str, Mapping[str, Any]]) -> list[dict[str, str]]:
    """The failed checks as problems ``{"criterio", "detalle"}``, shaped like the evaluator's."""
    return [
        {"criterio": criterio, "detalle": str(r.get("detalle") or "falla la comprobación")}
        for criterio, r in comprobaciones.items()
        if not r.get("ok")
    ]


def comprobar_titulo(ficha: Mapping[str, Any]) -> dict[str, Any]:
    """C01: a title must exist and fit the characters the catalogue shows.

    Characters are NFC code points, not bytes: "ñ" counts one whether it arrives composed or
    decomposed. The length is of the title as given, because that is what gets published.
    """
    return _length_check("título", text(ficha.get("titulo")), MAX_TITULO)


def comprobar_descripcion(ficha: Mapping[str, Any]) -> dict[str, Any]:
    """C02: a description must exist and fit its maximum, counted as in C01."""
    return _length_check("descripción", text(ficha.get("descripcion")), MAX_DESCRIPCION)


def comprobar_atributos(ficha: Mapping[str, Any], origen: Mapping[str, Any]) -> dict[str, Any]:
    """C03: the family's required attributes must all be there with a non-blank value.

    They come from ``origen["atributos_obligatorios"]``; when that is missing they are looked
    up by ``origen["familia"]``, and an unknown family fails the check instead of passing it.
    """
    try:
        requeridos = _required(origen)
    except FamiliaDesconocida as exc:
        return result(str(exc))
    atributos = attributes(ficha)
    faltan = [a for a in requeridos if not atributos.get(a, "").strip()]
    if not faltan:
        return result("")
    return result("faltan o están vacíos atributos obligatorios: " + ", ".join(faltan))


def comprobar_reglas_casa(
    ficha: Mapping[str, Any], origen: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """C05, mechanical part: no prices, promotions, delivery times, shouting, emojis, URLs,
    unverifiable superlatives or calls to buy.

    These are things a pattern finds better than a model; only the unambiguous superlatives
    are here ("la más vendida", "compra ya"), tone that needs reading stays with the
    evaluator. ``origen`` is optional and only lends names the supplier writes in capitals in
    a brand or model attribute ("ASICS"), which are names rather than shouting.
    """
    permitidas = _names_in_capitals(origen or {})
    codigos = _codes_of_origin(origen or {})
    hallazgos: list[str] = []
    for campo, texto in _fields(ficha):
        for subregla, finder in reglas_casa.SUBREGLAS:
            hallazgos += _quote(subregla, campo, finder(texto))
        sin_codigos = _without_codes(texto, codigos)
        hallazgos += _quote("mayúsculas", campo, reglas_casa.mayusculas(sin_codigos, permitidas))
    for clave, valor in attributes(ficha).items():
        if reglas_casa.clave_de_precio(clave) and valor.strip():
            hallazgos += _quote("precio", f"atributo {clave}", [valor])
    if any(h.startswith(_SUPERLATIVO) for h in hallazgos):
        return _with_instruction("; ".join(hallazgos), reglas_casa.INSTRUCCION_SUPERLATIVOS)
    return result("; ".join(hallazgos))


_SUPERLATIVO = next(n for n, f in reglas_casa.SUBREGLAS if f is reglas_casa.superlativos)


def _with_instruction(detalle: str, instruccion: str) -> dict[str, Any]:
    """A failed result that ends with what to do; the findings are cut, not the instruction,
    when the detail would pass its 200 characters."""
    cola = ". " + instruccion
    espacio = MAX_DETALLE - len(cola)
    if len(detalle) > espacio:
        detalle = detalle[: espacio - 1] + "…"
    return result(detalle + cola)


def _codes_of_origin(origen: Mapping[str, Any]) -> frozenset[str]:
    """Product codes the origin writes ("SKU-BULK-0001"), the SKU included.

    A code's capitals are not shouting, but only when the origin has that very code: a ficha
    cannot make up a code to smuggle capitals in.
    """
    proveedor = origen.get("ficha_proveedor") or {}
    textos = [str(origen.get("sku") or "")]
    if isinstance(proveedor, Mapping):
        textos += [str(proveedor.get("titulo") or ""), str(proveedor.get("descripcion") or "")]
        atributos = proveedor.get("atributos")
        if isinstance(atributos, Mapping):
            textos += [str(v) for v in atributos.values()]
    return _codes_in(tuple(textos))


@lru_cache(maxsize=ORIGENES_EN_CACHE)
def _codes_in(textos: tuple[str, ...]) -> frozenset[str]:
    """The codes of an origin's texts, the first (its SKU) whole; read once per origin, as
    C05 asks on every attempt of its ficha."""
    return frozenset(c for t in textos for c in reglas_casa.codigos(t)) | {textos[0]}


def _without_codes(texto: str, codigos: frozenset[str]) -> str:
    """The text with the origin's codes blanked out, for the shouting check only."""
    for codigo in reglas_casa.codigos(texto):
        if codigo in codigos:
            texto = texto.replace(codigo, " ")
    return texto


def comprobar_cifras(ficha: Mapping[str, Any], origen: Mapping[str, Any]) -> dict[str, Any]:
    """C07: every figure with a unit must come from the origin; invented figures are the most
    costly mistake of a product page and the easiest to check mechanically.

    Figures are compared by value after unit conversion (0,28 kg = 280 g), reading decimal
    commas and points and Spanish thousands dots. See ``criterios.cifras`` for the lenient
    bare-number fallback on the origin side.
    """
    respaldo = respaldo_de_origen(origen)
    sin_respaldo = [
        f"«{short(c.texto)}» ({campo})"
        for campo, cifras in _figures(ficha)
        for c in cifras
        if not respaldada(c, respaldo)
    ]
    if not sin_respaldo:
        return result("")
    return result("cifras que no están en el origen: " + ", ".join(sin_respaldo))


def _length_check(campo: str, texto: str, maximo: int) -> dict[str, Any]:
    """Shared rule of C01 and C02: not blank, and at most ``maximo`` NFC characters."""
    if not texto.strip():
        return result(f"{campo} vacío" if campo == "título" else f"{campo} vacía")
    largo = len(texto)
    if largo <= maximo:
        return result("")
    return result(f"{campo} de {largo} caracteres (máximo {maximo}): «{short(texto)}»")


def _required(origen: Mapping[str, Any]) -> tuple[str, ...]:
    """Required attributes as the origin lists them, else from the families table."""
    listed = origen.get("atributos_obligatorios")
    if isinstance(listed, Iterable) and not isinstance(listed, str):
        return tuple(str(a) for a in listed)
    return atributos_obligatorios(str(origen.get("familia", "")))


def _fields(ficha: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every published text of a ficha, named as the detail should name it."""
    campos = title_and_description(ficha)
    return campos + [(f"atributo {k}", v) for k, v in attributes(ficha).items()]


def _figures(ficha: Mapping[str, Any]) -> list[tuple[str, list[Any]]]:
    """Figures per field; attribute keys with a unit suffix give their plain numbers a unit."""
    cifras = [
        ("título", cifras_en_texto(text(ficha.get("titulo")))),
        ("descripción", cifras_en_texto(text(ficha.get("descripcion")))),
    ]
    return cifras + [(f"atributo {k}", cifras_en_valor(k, v)) for k, v in attributes(ficha).items()]


def _names_in_capitals(origen: Mapping[str, Any]) -> frozenset[str]:
    """Words of the supplier's brand and model attributes, which may be written in capitals."""
    proveedor = origen.get("ficha_proveedor") or {}
    atributos = proveedor.get("atributos") if isinstance(proveedor, Mapping) else None
    if not isinstance(atributos, Mapping):
        return frozenset()
    valores = [str(v) for k, v in atributos.items() if str(k).lower() in NAME_KEYS]
    return frozenset(w for v in valores for w in reglas_casa.mayusculas(nfc(v)))


def _quote(subregla: str, campo: str, fragmentos: list[str]) -> list[str]:
    """One finding per sub-rule and field, quoting the first offending fragment."""
    if not fragmentos:
        return []
    return [f"{subregla} en {campo}: «{short(fragmentos[0])}»"]
