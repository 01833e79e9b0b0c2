"""Settings from the environment, prefix ``FICHAS_``, as the contract's configuration table.

One class reads them all and validates them at start-up, so a typo in a deployment fails
loudly before any message is consumed. The names here are the ones ``deploy/variables.txt``
lists and the manifests set; a test keeps the three in agreement.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every ``FICHAS_*`` variable, with the contract's defaults."""

    model_config = SettingsConfigDict(env_prefix="FICHAS_", extra="ignore")

    kafka_brokers: str = "localhost:9092"
    llm_url: str = "http://localhost:8000/v1"
    llm_modelo: str = "qwen3-30b-a3b"
    llm_api_key: str = "EMPTY"
    llm_timeout_s: float = Field(default=60.0, gt=0)
    llm_max_tokens: int = Field(default=1024, ge=64)
    llm_repeat_penalty: float | None = None
    data_dir: Path = Path("./.fichas")
    postgres_dsn: str | None = None
    max_intentos: int = Field(default=3, ge=1, le=10)
    concurrencia: int = Field(default=32, ge=1, le=1024)
    topic_entrada: str = "proveedor.cambios"
    topic_publicadas: str = "fichas.publicadas"
    topic_revision: str = "fichas.revision_manual"
    topic_dlq: str = "proveedor.cambios.dlq"
    topic_muestra: str = "fichas.muestra_revision"
    grupo: str = "fichas"
    particiones: int = Field(default=4, ge=1)  # for topics created at start-up when missing
    replicacion: int = Field(default=1, ge=1)
    metricas_puerto: int = Field(default=9100, ge=0, le=65535)
    gracia_s: float = Field(default=90.0, ge=0)
    muestra_proporcion: float = Field(default=0.02, ge=0, le=1)
    log_nivel: str = "INFO"
    # Quality options measured with `fichas evaluar` (docs/calidad.md); off unless set.
    evaluador_rubrica: bool = False
    limpiar_origen: bool = False

    @field_validator("llm_repeat_penalty", "postgres_dsn", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """Manifests set every variable; an empty value means "not set", as when absent."""
        return None if value == "" else value
