"""The word diff of the item page: what the ficha says that the supplier did not.

A pure function of two texts, apart from the page that shows it: it changes with how a
difference is found, the page with how it is shown.
"""

from __future__ import annotations

import difflib
import re

_PALABRA = re.compile(r"\w+", re.UNICODE)


def diferencias(origen: str, texto: str) -> list[tuple[str, bool]]:
    """``texto`` cut in segments, each marked True when its words are not in ``origen``.

    Word-level and order-aware (difflib over lower-cased words), so a reviewer sees at a glance
    what the ficha says that the supplier did not. The segments are rendered escaped.
    """
    tokens = re.findall(r"\w+|\W+", texto, re.UNICODE)
    base = [t.lower() for t in _PALABRA.findall(origen)]
    palabras = [(i, t.lower()) for i, t in enumerate(tokens) if _PALABRA.fullmatch(t)]
    matcher = difflib.SequenceMatcher(a=base, b=[p for _, p in palabras], autojunk=False)
    nuevos: set[int] = set()
    vocabulario = set(base)
    for tag, _a0, _a1, b0, b1 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            nuevos |= {palabras[j][0] for j in range(b0, b1) if palabras[j][1] not in vocabulario}
    segmentos: list[tuple[str, bool]] = []
    for i, t in enumerate(tokens):
        marcado = i in nuevos
        if segmentos and segmentos[-1][1] == marcado:
            segmentos[-1] = (segmentos[-1][0] + t, marcado)
        else:
            segmentos.append((t, marcado))
    return segmentos
