"""What the loop needs of the publication gate: the running key, and a source of gates.

The gate itself (certification, the online bound, the topic ``fichas.puerta``) lives outside
the graph; the graph only asks, at each evaluation, "which open gate applies to this family
under the configuration I run with?" through ``FuentePuerta``. The answer is written into the
state by ``evaluar`` and read by the pure ``decidir``, so a run resumed from its checkpoint
decides on the snapshot it took, not on whatever the gate says after the restart.

``clave_puerta`` is here because only the graph knows what it sends: the sha256 of the
evaluator's exact prompt and of the generator's configuration, and (v1.5) the canonical text of
each side's request settings (``muestreo_de``) and the identity the server reports for the
model that answers (``modelo_servido``, from its ``/v1/models``). Invariant: anything that
changes which fichas are written or how they are scored changes the key, so a gate certified on
the old loop no longer applies. Why each part is in the key: docs/puerta.md, "The key".
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any, Protocol

from langchain_openai import ChatOpenAI

from esquemas.canonico import json_canonico
from esquemas.estado_puerta import ClavePuerta, PuertaAplicada
from grafo.chat_model import evaluator_chat_model
from grafo.mensajes import (
    SIN_PLANTILLAS,
    Plantillas,
    modo_evaluador,
    prompt_del_evaluador,
    prompt_generador,
)
from grafo.puntuacion import TOP_LOGPROBS

__all__ = [
    "FuentePuerta",
    "PuertaCerrada",
    "clave_puerta",
    "configuracion_generador",
    "modelo_servido",
    "muestreo_de",
    "muestreos",
    "texto_ajustes",
]

# What llama.cpp's ``/v1/models`` says of the weights it serves (``meta``): the file's size,
# parameter count, vocabulary, training context, embedding width and quantisation, and the
# context a slot has. Named one by one so a field llama.cpp adds later does not change a key.
META_LLAMACPP = (
    "ftype",
    "n_ctx",
    "n_ctx_train",
    "n_embd",
    "n_params",
    "n_vocab",
    "size",
    "vocab_type",
)
# Payload fields that do not change what the model answers: the model's configured name (the
# key has it already) and streaming (one answer either way).
SIN_EFECTO = ("model", "stream")


def configuracion_generador(
    ejemplos: bool, limpiar_origen: bool, max_intentos: int, texto: str | None = None
) -> str:
    """The text whose sha256 is the key's ``prompt_generador_sha256``.

    The generator's system prompt as sent, followed by the two settings that change which fichas
    reach people without changing that prompt: whether the generator reads the cleaned origin
    (``FICHAS_LIMPIAR_ORIGEN``) and the attempt cap (``FICHAS_MAX_INTENTOS``: a third attempt
    writes fichas the first never would). Either one changed keeps the prompt's text and still
    changes the population a threshold was certified on, so it must be another key. ``texto``
    replaces the package's ``generador.md`` (``Plantillas.generador``).
    """
    ajustes = f"\n\n[fichas: limpiar_origen={limpiar_origen} max_intentos={max_intentos}]\n"
    return prompt_generador(ejemplos, texto) + ajustes


def _sha256(texto: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes."""
    return hashlib.sha256(texto.encode("utf-8")).hexdigest()


def clave_puerta(
    modelo: str,
    rubrica: bool | str,
    criterios_version: str,
    senal: bool = False,
    *,
    ejemplos: bool = False,
    limpiar_origen: bool = False,
    max_intentos: int = 3,
    modelo_servido: str | None = None,
    muestreo_generador: str | None = None,
    muestreo_evaluador: str | None = None,
    plantillas: Plantillas = SIN_PLANTILLAS,
) -> ClavePuerta:
    """The key a gate must carry to apply to a loop run with these settings.

    ``rubrica`` picks the evaluator (and its prompt) the loop runs, by mode name
    (``veredicto``, ``rubrica``, ``citas``) or True for the rubric: each mode's score is
    another quantity, so another key. ``senal``
    (the unsupported-words signal shown to the evaluator) changes its prompt, so its key.
    ``ejemplos``, ``limpiar_origen`` and ``max_intentos`` are the generator's side
    (``configuracion_generador``). v1.5: ``modelo_servido`` is what the server says it serves
    (``modelo_servido``), ``muestreo_generador``/``muestreo_evaluador`` each side's request
    settings (``muestreo_de``); None leaves the field out (a key as v1.4 wrote it).
    ``plantillas``: the texts that replace the package's templates, hashed as the prompts they
    make, so the same text from a file or from the package is the same key.
    """
    return ClavePuerta(
        modelo=modelo,
        prompt_evaluador_sha256=_sha256(prompt_del_evaluador(rubrica, senal, plantillas.evaluador)),
        criterios_version=criterios_version,
        modo_evaluador=modo_evaluador(rubrica),  # type: ignore[arg-type]
        prompt_generador_sha256=_sha256(
            configuracion_generador(ejemplos, limpiar_origen, max_intentos, plantillas.generador)
        ),
        modelo_servido=modelo_servido,
        muestreo_generador=muestreo_generador,
        muestreo_evaluador=muestreo_evaluador,
    )


def _valor(valor: Any) -> str:
    """One setting's value as canonical text: ``true``, ``2048``, ``0.2`` (an integral float is
    written as the integer: 1.0 and 1 are one setting), a plain word as is, anything else
    (text with spaces, ``=`` or quotes, lists, objects) as compact sorted JSON."""
    if isinstance(valor, bool):
        return "true" if valor else "false"
    if isinstance(valor, int):
        return str(valor)
    if isinstance(valor, float):
        if not math.isfinite(valor):
            raise ValueError(f"a setting must be a finite number, got {valor!r}")
        return str(int(valor)) if valor.is_integer() else repr(valor)
    if isinstance(valor, str) and valor and not any(c.isspace() or c in '="' for c in valor):
        return valor
    return json_canonico(valor)


def texto_ajustes(ajustes: Mapping[str, Any]) -> str:
    """Settings as one canonical text: ``name=value`` pairs sorted by name, None left out.

    The form of ``ClavePuerta.modelo_servido`` and of the ``muestreo_*`` fields: equal settings
    give equal text whatever order or numeric type they came in, different ones different text.
    """
    return " ".join(f"{k}={_valor(v)}" for k, v in sorted(ajustes.items()) if v is not None)


def muestreo_de(modelo: ChatOpenAI) -> str:
    """The request settings a chat model sends with every call, as ``texto_ajustes``.

    langchain-openai's own payload defaults (temperature, max tokens, top_p, seed, penalties,
    logprobs and top_logprobs, stop, ...) with ``extra_body`` merged in as the server receives
    it (``repeat_penalty``, ``repetition_penalty``), less ``model`` and ``stream``. Everything
    else there changes what the model answers or how the evaluator's score is read.
    """
    parametros = dict(modelo._default_params)
    extra = parametros.pop("extra_body", None) or {}
    ajustes = {**parametros, **extra}
    return texto_ajustes({k: v for k, v in ajustes.items() if k not in SIN_EFECTO})


def muestreos(modelo: ChatOpenAI) -> tuple[str, str]:
    """The generator's and the evaluator's ``muestreo_de``: the generator sends the shared chat
    model's settings, the evaluator its own copy's (``evaluator_chat_model``: temperature 0,
    log-probabilities, no repeat penalty), exactly as ``grafo.agentes.Agentes`` builds them."""
    return muestreo_de(modelo), muestreo_de(evaluator_chat_model(modelo, TOP_LOGPROBS))


def _entrada(datos: list[Mapping[str, Any]], nombre: str) -> Mapping[str, Any]:
    """The listed model the server answers ``nombre`` with: the one with that id or alias, or
    the only one listed (llama.cpp serves its one model whatever name a request gives)."""
    for entrada in datos:
        alias = entrada.get("aliases")
        if entrada.get("id") == nombre or (isinstance(alias, list) and nombre in alias):
            return entrada
    if len(datos) == 1:
        return datos[0]
    ids = ", ".join(sorted(str(e.get("id")) for e in datos))
    raise ValueError(f"the server lists no model named {nombre!r} (it lists: {ids})")


def modelo_servido(respuesta: Any, nombre: str) -> str:
    """The identity of the model a server answers ``nombre`` with, from its ``/v1/models`` JSON.

    vLLM: ``root`` (the weights it loaded: a Hugging Face id or a path), ``max_model_len`` and,
    for a LoRA adapter, ``parent`` with the parent's ``root`` and ``max_model_len``. llama.cpp:
    ``id`` (the model file, or its ``--alias``) and its ``meta`` (``META_LLAMACPP``), or in
    router mode the file it was started with (``status.args["-m"]``). Always ``owned_by``. A
    server that says nothing more gives its id. ``ValueError`` if the answer is not a model list.
    """
    datos = respuesta.get("data") if isinstance(respuesta, Mapping) else None
    if not isinstance(datos, list) or not datos or not all(isinstance(d, Mapping) for d in datos):
        raise ValueError("not a /v1/models answer: no list of models under 'data'")
    entrada = _entrada(datos, nombre)
    campos: dict[str, Any] = {"owned_by": entrada.get("owned_by")}
    if entrada.get("root") is not None:
        campos |= {"root": entrada["root"], "max_model_len": entrada.get("max_model_len")}
        padre = entrada.get("parent")
        if padre is not None:
            base: Mapping[str, Any] = next((d for d in datos if d.get("id") == padre), {})
            campos |= {
                "parent": padre,
                "parent_root": base.get("root"),
                "parent_max_model_len": base.get("max_model_len"),
            }
        return texto_ajustes(campos)
    campos["id"] = entrada.get("id")
    meta = entrada.get("meta")
    if isinstance(meta, Mapping):
        campos |= {k: meta[k] for k in META_LLAMACPP if k in meta}
    estado = entrada.get("status")
    argumentos = estado.get("args") if isinstance(estado, Mapping) else None
    if isinstance(argumentos, Mapping) and argumentos.get("-m") is not None:
        campos["archivo"] = argumentos["-m"]
    return texto_ajustes(campos)


class FuentePuerta(Protocol):
    """Where the loop reads the gate from: one call per evaluation, cheap and never blocking.

    ``umbral`` answers the open gate that applies to ``familia`` under the running key, or
    None when the gate is closed (no record, a record for another key, or closed by its
    record). Implementations: the worker's view of ``fichas.puerta``, an audit file for the
    offline command, ``PuertaCerrada``.
    """

    def umbral(self, familia: str) -> PuertaAplicada | None:
        """The open gate of ``familia``, or None: closed."""


class PuertaCerrada:
    """No gate at all: every family is closed (the default when nothing says otherwise)."""

    def umbral(self, familia: str) -> PuertaAplicada | None:
        """Always closed."""
        return None
