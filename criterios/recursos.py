"""The code checks' language resources, loaded once per process at start-up, not on a ficha.

C08 and the unsupported-words signal read py3langid's model and simplemma's Spanish data
(both inside their wheels). Each loads the first time a check asks for it: about 0.2 s of CPU
and 40 MiB, paid by whichever ficha came first. In the worker that ficha's latency carried
it, and every measurement of CPU per ficha over few fichas (``bench.run --quick``) carried
it divided by their number (issue 33). ``precargar`` runs the checks once on a sample that
takes the paths every ficha takes, so the resources load when the graph is built.

What loads only for a text that needs it stays so: the English, French and Portuguese
dictionaries (about 180 MB) load when a ficha's text already reads as foreign
(``criterios.fidelidad.palabra_comun``); the sample is Spanish, so it does not load them.
"""

from __future__ import annotations

from functools import cache

# A Spanish ficha of a Spanish origin: the identifier judges the ficha's texts and the Spanish
# dictionary reads their words. Not a foreign origin: C08 also consults the origin's own
# language's dictionary (issue 32), which only a ficha of such an origin should pay for.
_ORIGEN = {
    "sku": "PRECARGA-1",
    "familia": "zapatillas",
    "atributos_obligatorios": ["talla", "color", "material", "genero"],
    "ficha_proveedor": {
        "titulo": "Zapatilla de trail negra para hombre",
        "descripcion": "Zapatilla ligera de trail con parte superior de malla y suela de goma.",
        "atributos": {"talla": "42", "color": "negro", "material": "malla", "genero": "hombre"},
        "idioma": "es",
    },
    "cifras": {},
}
_FICHA = {
    "titulo": "Zapatilla de trail negra para hombre",
    "descripcion": "Zapatilla ligera para correr por montaña, con parte superior de malla y "
    "suela de goma.",
    "atributos": {"talla": "42", "color": "negro", "material": "malla", "genero": "hombre"},
}


@cache
def precargar() -> None:
    """Load what every ficha's checks read, once per process (see the module docstring)."""
    from criterios.comprobaciones import comprobar
    from criterios.fidelidad import palabras_sin_respaldo
    from criterios.vocabulario import mapear_origen

    mapeado = mapear_origen(_ORIGEN).origen
    comprobar(_FICHA, _ORIGEN, mapeado)
    palabras_sin_respaldo(_FICHA, mapeado)
