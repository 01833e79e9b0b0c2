"""The blind shadow share (contract v1.6): which events an open gate sends to people unpublished.

One pure function of the ``event_id`` and the share (``FICHAS_SOMBRA_PROPORCION``): the first 8
bytes of the sha256 of a salt of its own followed by the id, as a fraction of 2^64, below the
share. The worker's graph draws with it (``grafo.nodos``: only while the family's gate is open,
and then the ficha is marked ``FichaEnRevision.muestra_sombra``); the reviewer app draws with it
to leave the share out of the gate's recall (``revision.certificador.retenidas``). The salt makes
the draw independent of the publication sample's (the bare id's sha256) and of the app's
held-back draw, so the three samples never select each other.
"""

from __future__ import annotations

import hashlib

SAL_SOMBRA = b"fichas.sombra:"


def en_muestra_sombra(event_id: str, proporcion: float) -> bool:
    """Whether an event is in the blind shadow share. Pure: a redelivery, a resumed run and
    every replica draw the same events, and nothing a score, a label or the load could
    influence picks them, so what people see of an open gate is an unselected sample of its
    final fichas."""
    digest = hashlib.sha256(SAL_SOMBRA + event_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < proporcion
