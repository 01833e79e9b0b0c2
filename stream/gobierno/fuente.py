"""The publication gate as the worker applies it: the graph's ``FuentePuerta`` over gate states.

The states come from the compacted topic ``fichas.puerta`` (``stream.gobierno.seguimiento``,
followed for as long as the worker runs) or, for ``fichas procesar``, from an audit file
(``puerta.auditoria.estados_de_archivo``); this module loads no Kafka client, so the offline command
stays without one. Each call resolves the family's gate afresh (``puerta.resolucion.puerta_para``)
on the reader's current snapshot, so a gate closed on the topic applies to the next evaluation,
within the reader's poll interval. Only gates of the running key apply; the key is computed by the
graph (``grafo.clave_puerta``), which knows the prompt: this module never sees it.

``razon`` says in one line why a family's gate is open or closed (``puerta.resolucion``'s
reason, v1.5: a pooled record alone governs no family), naming the running key and, when no
record matches, the keys that were seen: the line the worker logs at start-up, so that an
operator whose gate stays closed after a prompt edit or a model change sees why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, PuertaAplicada
from puerta.resolucion import Resolucion, puerta_para, resolver, umbral_aplicable

Estados = Mapping[str, EstadoPuerta]


class PuertaResuelta:
    """``grafo.FuentePuerta`` over a source of gate states, for one running key.

    The worker switches ``clave`` when the served model changes, and sets ``suspendida`` while
    the served model is not verified (``stream.gobierno.identidad``): every gate is closed then.
    """

    def __init__(self, clave: ClavePuerta, estados: Callable[[], Estados]) -> None:
        self.clave = clave
        self.suspendida = False
        self._estados = estados

    def estados(self) -> Estados:
        """Every gate state seen, of any key."""
        return self._estados()

    def resolucion(self, familia: str) -> Resolucion:
        """Which gate governs ``familia`` under the running key now, and why."""
        return resolver(familia, self.clave, self._estados())

    def estado(self, familia: str) -> EstadoPuerta | None:
        """The record that governs ``familia`` now (None: no record of the running key, or
        every gate closed while the served model is not verified)."""
        if self.suspendida:
            return None
        return puerta_para(familia, self.clave, self._estados())

    def umbral(self, familia: str) -> PuertaAplicada | None:
        """The open gate of ``familia`` under the running key, or None: closed."""
        return umbral_aplicable(self.estado(familia))


def fija(clave: ClavePuerta, estados: Estados) -> PuertaResuelta:
    """A source over states that never change (an audit file, a test)."""
    copia = dict(estados)
    return PuertaResuelta(clave, lambda: copia)


def describir_clave(clave: ClavePuerta) -> str:
    """A key in words: its id and what it was measured on (both prompts since v1.3: a key that
    differs only in the generator's side must read as different in the log)."""
    generador = clave.prompt_generador_sha256
    servido = f"{clave.modelo_servido!r}" if clave.modelo_servido is not None else "none (v1.4)"
    return (
        f"{clave.texto()} (modelo {clave.modelo!r} served as {servido}, generador sha256 "
        f"{generador[:12] + '…' if generador else 'none (v1.2)'}, evaluador sha256 "
        f"{clave.prompt_evaluador_sha256[:12]}…, criterios {clave.criterios_version}, "
        f"evaluador {clave.modo_evaluador})"
    )


def servido_distinto(clave: ClavePuerta, estados: Estados) -> list[ClavePuerta]:
    """Keys on the topic that differ from ``clave`` only in the served model: gates certified
    for the same loop on another model (new weights under the same name, another server)."""
    sin = clave.model_copy(update={"modelo_servido": None})
    otras = {
        e.clave.texto(): e.clave
        for e in estados.values()
        if e.clave != clave and e.clave.model_copy(update={"modelo_servido": None}) == sin
    }
    return [otras[k] for k in sorted(otras)]


def razon(familia: str, clave: ClavePuerta, estados: Estados) -> tuple[bool, str]:
    """Whether ``familia``'s gate is open under ``clave``, and why, in one line."""
    res = resolver(familia, clave, estados)
    estado = res.estado
    if res.abierta and estado is not None:
        cubierta = " (covered by the pooled gate)" if res.razon == "conjunta" else ""
        return True, (
            f"gate of {familia} open{cubierta}: record {estado.id}, umbral {estado.umbral:.4f}, "
            f"n={estado.n} k={estado.k}, objetivo {estado.objetivo}, "
            f"certified on {estado.origen_datos}"
        )
    if estado is not None:
        quien = f", by {estado.retenida_por}: {estado.nota or 'no reason given'}"
        return False, (
            f"gate of {familia} closed by its record {estado.id}: motivo {estado.motivo} "
            f"(n={estado.n} k={estado.k}{quien if estado.retencion else ''}; {res.razon})"
        )
    otras = sorted({describir_clave(e.clave) for e in estados.values() if e.clave != clave})
    if res.razon == "conjunta_cerrada":
        detalle = "its record is covered by a pooled certification no longer in force"
    elif res.conjunta is not None:
        detalle = "no record for this family (a pooled gate alone governs no family)"
    elif not estados:
        detalle = "no gate record at all"
    elif otras:
        detalle = "gate records only for other keys: " + "; ".join(otras)
    else:
        detalle = "no record for this family under this key"
    return False, (
        f"gate of {familia} closed: {detalle}; the running key is {describir_clave(clave)}"
    )
