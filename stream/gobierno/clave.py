"""The running key of a loop from its ``Settings`` (no I/O but the prompt files, read once per
process), and the LLM part and the prompt texts of the settings.

One module below ``stream.gobierno.runtime`` (which builds the loop) and
``stream.gobierno.identidad`` (which reads the served model and keeps the running key current), so
that neither imports the other: the key is the settings' parts, both sides' request settings
(``grafo.muestreos``) and the served model's identity (docs/puerta.md, "The score and the key").
Invariant: the key and the agents (``stream.gobierno.runtime``) take the prompt texts from
``plantillas`` alone.
"""

from __future__ import annotations

from criterios import CRITERIOS_VERSION
from esquemas.estado_puerta import ClavePuerta
from grafo import LLMSettings, Plantillas, build_chat_model, clave_puerta, muestreos, prompt_archivo
from infra.config import Settings


def llm_settings(settings: Settings) -> LLMSettings:
    """The LLM part of the settings, in the shape ``grafo`` takes."""
    return LLMSettings(
        url=settings.llm_url,
        model=settings.llm_modelo,
        api_key=settings.llm_api_key,
        timeout_s=settings.llm_timeout_s,
        max_tokens=settings.llm_max_tokens,
        repeat_penalty=settings.llm_repeat_penalty,
    )


def plantillas(settings: Settings) -> Plantillas:
    """The texts of ``FICHAS_PROMPT_GENERADOR_ARCHIVO`` and ``FICHAS_PROMPT_EVALUADOR_ARCHIVO``
    (None where unset: the package's templates), as the command's start checked them
    (``herramientas.arranque``): ``grafo.prompt_archivo.leer`` reads each file once per process."""
    generador, evaluador = settings.prompt_generador_archivo, settings.prompt_evaluador_archivo
    return Plantillas(
        generador=None if generador is None else prompt_archivo.leer(generador),
        evaluador=None if evaluador is None else prompt_archivo.leer(evaluador),
    )


def clave_de(settings: Settings, modelo_servido: str | None) -> ClavePuerta:
    """The gate key of the loop these settings run against a server that serves
    ``modelo_servido``: model, both prompts, criteria, mode, and (v1.5) what each side sends
    with every request (``grafo.muestreos`` on the chat model these settings build: no I/O)
    and the served model's identity (``stream.gobierno.identidad`` reads it from the server)."""
    generador, evaluador = muestreos(build_chat_model(llm_settings(settings), direct=False))
    return clave_puerta(
        settings.llm_modelo,
        settings.evaluador,
        CRITERIOS_VERSION,
        settings.evaluador_senal,
        ejemplos=settings.generador_ejemplos,
        limpiar_origen=settings.limpiar_origen,
        max_intentos=settings.max_intentos,
        modelo_servido=modelo_servido,
        muestreo_generador=generador,
        muestreo_evaluador=evaluador,
        plantillas=plantillas(settings),
    )
