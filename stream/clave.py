"""The running key of a loop from its ``Settings`` (no I/O), and the LLM part of the settings.

One module below ``stream.runtime`` (which builds the loop) and ``stream.identidad`` (which
reads the served model and keeps the running key current), so that neither imports the other:
the key is the settings' parts, both sides' request settings (``grafo.muestreos``) and the
served model's identity (docs/puerta.md, "The score and the key").
"""

from __future__ import annotations

from criterios import CRITERIOS_VERSION
from esquemas.puerta import ClavePuerta
from grafo import LLMSettings, build_chat_model, clave_puerta, muestreos
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


def clave_de(settings: Settings, modelo_servido: str | None) -> ClavePuerta:
    """The gate key of the loop these settings run against a server that serves
    ``modelo_servido``: model, both prompts, criteria, mode, and (v1.5) what each side sends
    with every request (``grafo.muestreos`` on the chat model these settings build: no I/O)
    and the served model's identity (``stream.identidad`` reads it from the server)."""
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
    )
