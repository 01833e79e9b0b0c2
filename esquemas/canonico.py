"""Canonical JSON and its sha256: one text for equal values, whatever order their keys came in.

Keys sorted, no spaces (``,`` and ``:``), characters as they are (UTF-8) unless ``solo_ascii``
(``\\uXXXX`` escapes). Whatever turns content into an id or a fingerprint that is stored or
compared across processes and releases uses it: the criteria version (``criterios.tablas``),
an event's fingerprint (``versiones.regla.huella``), a setting's text in the gate key
(``grafo.fuente_puerta``). Changing it changes every stored id: docs/arquitectura.md.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def json_canonico(valor: Any, *, solo_ascii: bool = False) -> str:
    """``valor`` as canonical JSON text."""
    return json.dumps(valor, sort_keys=True, separators=(",", ":"), ensure_ascii=solo_ascii)


def sha256_canonico(valor: Any, *, solo_ascii: bool = False) -> str:
    """The hex sha256 of ``valor``'s canonical JSON, encoded as UTF-8."""
    texto = json_canonico(valor, solo_ascii=solo_ascii)
    return hashlib.sha256(texto.encode("utf-8")).hexdigest()
