"""Figures of ``fichas evaluar --modo bucle`` result files that the tool does not print.

How many final fichas copy the supplier's title or description verbatim, and how many of the
events whose origin is not in Spanish end with a description that is not Spanish either (a
crude stop-word count, enough to tell a copied English, Portuguese or French text from a
Spanish one). Usage: ``python docs/calidad/copias_e_idioma.py A.json B.json``.
"""

from __future__ import annotations

import json
import sys

PALABRAS = {
    "es": (" de ", " con ", " para ", " y ", " el ", " la ", " los ", " las ", " en "),
    "en": (" the ", " with ", " for ", " and ", " of "),
    "pt": (" com ", " em ", " para o ", " ao ", " não ", "ção"),
    "fr": (" avec ", " pour ", " et ", " le ", " la ", " les ", " des "),
}


def idioma(texto: str) -> str:
    """The language whose stop words the text has most of ("?" if none)."""
    texto = " " + texto.lower() + " "
    cuentas = {lengua: sum(texto.count(p) for p in ps) for lengua, ps in PALABRAS.items()}
    return max(cuentas, key=lambda lengua: cuentas[lengua]) if max(cuentas.values()) else "?"


def resumen(path: str) -> str:
    """One line of figures for one result file."""
    registros = json.load(open(path, encoding="utf-8"))["registros"]
    titulo = descripcion = extranjeros = sin_traducir = 0
    for registro in registros:
        salida = registro["salida"]
        ficha, origen = salida["ficha"], salida["origen"]["ficha_proveedor"]
        titulo += ficha["titulo"].strip() == origen["titulo"].strip()
        descripcion += ficha["descripcion"].strip() == origen["descripcion"].strip()
        if origen.get("idioma") not in (None, "es"):
            extranjeros += 1
            sin_traducir += idioma(ficha["descripcion"]) != "es"
    return (
        f"{path}: n {len(registros)}, title copied {titulo}, description copied {descripcion}, "
        f"origins not in Spanish {extranjeros}, of them final description not Spanish "
        f"{sin_traducir}"
    )


if __name__ == "__main__":
    for ruta in sys.argv[1:]:
        print(resumen(ruta))
