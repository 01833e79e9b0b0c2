"""The delivery-promise rule's cheap prefilter stays in step with the full expression."""

from __future__ import annotations

import re

from criterios.reglas_casa import plazos_entrega

# Every form the delivery and arrival alternations of DELIVERY_RE spell out, by hand.
_DELIVERY_WORDS = [
    *(
        "entrega entregas entregamos entregado envío envio envíos envios enviamos enviado "
        "despacho despachamos delivery deliveries delivered deliver shipping ships shipped "
        "ship dispatch dispatched dispatches"
    ).split(),
    "se envía",
    "se envia",
]
_ARRIVAL_WORDS = [
    *(
        "llega llegan llegará llegara llegarán llegaran recíbelo recibelo recibirás recibiras "
        "arrive arrives arriving"
    ).split(),
    "lo recibes",
    "lo tendrás",
    "lo tendras",
    "get it",
]


def test_delivery_prefilter_covers_every_word() -> None:
    """The cheap stem search must find every word DELIVERY_RE needs, or matches are lost."""
    from criterios.reglas_casa import _ARRIVAL, _DELIVERY, _DELIVERY_WORD_RE

    delivery = re.compile(_DELIVERY, re.IGNORECASE | re.VERBOSE)
    arrival = re.compile(_ARRIVAL, re.IGNORECASE | re.VERBOSE)
    for word in _DELIVERY_WORDS:
        assert delivery.fullmatch(word), word
    for word in _ARRIVAL_WORDS:
        assert arrival.fullmatch(word), word
    for word in [*_DELIVERY_WORDS, *_ARRIVAL_WORDS, "recibes", "entregamos", "tienes"]:
        assert _DELIVERY_WORD_RE.search(word.upper()), word
        assert _DELIVERY_WORD_RE.search(word), word
    assert plazos_entrega("Lo tendrás mañana") == ["Lo tendrás mañana"]
    assert plazos_entrega("Autonomía de 24 h y carga rápida en 2 horas.") == []
