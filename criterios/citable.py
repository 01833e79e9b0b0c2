"""What of the origin may back a claim: the cleaned origin without what is not the product's.

``criterios.limpieza`` already drops prices, promotions, delivery times, URLs, shouting and
injected instructions. Two more things a supplier writes are not facts about the product, and
a ficha that repeats them as such is wrong (issue 48, docs/calidad.md «El juez que lee
traducciones»):

- **what the origin presents as a gift, an extra or an accessory not included** («Regalo:
  funda de neopreno con tu pedido», «sold separately», «vendu séparément»): the sentence that
  says so is dropped, so «Incluye funda de neopreno» has nothing to quote;
- **a value in the supplier's title that its own structured data contradict** («Botella
  aluminio 1 l» with ``capacidad_ml`` 750 in its attributes and figures; «Zapatilla … negra»
  with ``color`` azul): the contradicted figure or value is taken out of the title, so only
  the structured value backs a claim.

Pure functions on plain dicts.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from criterios._comun import attributes, nfc, supplier
from criterios.cifras import (
    Cifra,
    cifras_en_texto,
    cifras_en_valor,
    respaldada,
    respaldo_de_cifras,
)
from criterios.limpieza import limpiar_origen
from criterios.vocabulario import claves_en_texto, compatibles, normalizar, terminos

# A sentence that presents something as a gift, an extra with the order, optional, or not
# included: what it names is not part of the product. es, en, pt, fr; matched on the
# normalised sentence (no accents). «free» alone is left out on purpose: «BPA free».
AJENO_RE = re.compile(
    r"""\b(?:
        regalo | de\ regalo | obsequio | gratis | con\ tu\ (?:pedido|compra)
      | se\ vende(?:n)?\ (?:por\ )?separad | no\ incluid | opcional
      | gift | free\ with | for\ free | with\ (?:your|every)\ order | sold\ separately
      | not\ included | optional
      | brinde | de\ presente | vendid[oa]s?\ separadamente | nao\ incluid
      | cadeau | offert | avec\ (?:votre|chaque)\ commande | vendu(?:e|s|es)?\ separement
      | non\ inclus
    )""",
    re.VERBOSE,
)
_FIN_DE_FRASE_RE = re.compile(r"(?<=[.!?])\s+")  # «5.3» and «0.5 lb» are not two sentences
_PALABRA_RE = re.compile(r"[^\W\d_]+")
_ESPACIOS_RE = re.compile(r"\s{2,}")


def origen_citable(origen: Mapping[str, Any]) -> dict[str, Any]:
    """The cleaned origin (``criterios.limpieza``) without gift or accessory sentences and
    with its title's contradicted values taken out: what a quote may be and what backs it."""
    limpio = limpiar_origen(origen)
    proveedor = dict(supplier(limpio))
    if not proveedor:
        return limpio
    proveedor["descripcion"] = sin_lo_ajeno(str(proveedor.get("descripcion") or ""))
    proveedor["titulo"] = titulo_sin_contradicciones(
        str(proveedor.get("titulo") or ""), attributes(proveedor), limpio.get("cifras") or {}
    )
    citable = copy.copy(limpio)
    citable["ficha_proveedor"] = proveedor
    return citable


def sin_lo_ajeno(descripcion: str) -> str:
    """The description without the sentences that present an item as a gift, an extra with
    the order, optional or not included (``AJENO_RE``)."""
    frases = _FIN_DE_FRASE_RE.split(nfc(descripcion).strip())
    propias = [f for f in frases if not AJENO_RE.search(normalizar(f))]
    return descripcion if len(propias) == len(frases) else " ".join(propias)


def titulo_sin_contradicciones(
    titulo: str, atributos: Mapping[str, str], cifras: Mapping[str, Any]
) -> str:
    """The title without the figures its attributes and ``cifras`` contradict (the same
    magnitude, another value: «1 l» against ``capacidad_ml`` 750) and without the values of
    a closed key (colour, material, gender…) its attribute contradicts («negra» against
    ``color`` azul; compatible or more precise values stay)."""
    estructuradas = [
        c for clave, valor in [*atributos.items(), *cifras.items()] for c in _cifras(clave, valor)
    ]
    for cifra in cifras_en_texto(titulo):
        mismas = [c for c in estructuradas if c.magnitud == cifra.magnitud]
        if mismas and not respaldada(cifra, respaldo_de_cifras(mismas)):
            titulo = titulo.replace(cifra.texto, " ")
    for clave in claves_en_texto():
        if clave in atributos:
            titulo = _sin_valores_contradichos(titulo, clave, atributos[clave])
    return _ESPACIOS_RE.sub(" ", titulo).strip(" ,-–|")


def _cifras(clave: str, valor: Any) -> list[Cifra]:
    """The figures with a unit of one structured value (a bare number has none to compare)."""
    return [c for c in cifras_en_valor(str(clave), str(valor)) if c.magnitud]


def _sin_valores_contradichos(titulo: str, clave: str, valor: str) -> str:
    """``titulo`` without the spellings of ``clave``'s values that contradict ``valor``."""
    esperados = {casa for alias, casa in terminos(clave).items() if _nombra(valor, alias)}
    if not esperados:
        return titulo
    validos = set().union(*(compatibles(clave, e) for e in esperados))
    palabras_validas = {w for v in validos for w in normalizar(v).split()}
    for alias, casa in sorted(terminos(clave).items(), key=lambda x: -len(x[0])):
        if casa in validos or set(normalizar(casa).split()) & palabras_validas:
            continue
        if _nombra(titulo, alias):
            titulo = _quitar(titulo, alias)
    return titulo


def _nombra(texto: str, alias: str) -> bool:
    """The text names ``alias`` as whole words (normalised)."""
    palabras = " " + " ".join(_PALABRA_RE.findall(normalizar(texto))) + " "
    buscado = " " + " ".join(_PALABRA_RE.findall(alias)) + " "
    return bool(buscado.strip()) and buscado in palabras


def _quitar(texto: str, alias: str) -> str:
    """``texto`` without the words that spell ``alias`` (compared normalised)."""
    buscadas = _PALABRA_RE.findall(alias)
    marcas = list(_PALABRA_RE.finditer(texto))
    normal = [normalizar(m.group(0)) for m in marcas]
    for i in range(len(marcas) - len(buscadas) + 1):
        if normal[i : i + len(buscadas)] == buscadas:
            inicio, fin = marcas[i].start(), marcas[i + len(buscadas) - 1].end()
            return _quitar(texto[:inicio] + " " + texto[fin:], alias)
    return texto
