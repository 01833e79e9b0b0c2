"""Settings from the environment, prefix ``FICHAS_``, as the contract's configuration table.

One class reads them all and validates them at start-up, so a typo in a deployment fails
loudly before any message is consumed: ``load_settings`` turns pydantic's errors into one line
per bad variable, naming it and what it accepts (``fichas`` prints them and exits 2). The
names here are the ones ``deploy/variables.txt`` lists and the manifests set; a test keeps the
three in agreement. The Kafka security variables are checked together (a SASL protocol needs a
user and a password file, a file must be readable...: ``infra.credentials``), each problem
on the line of the variable to fix; the password itself is read from its file, never kept here.
The PostgreSQL DSN and the LLM API key may come as files too (``FICHAS_*_ARCHIVO``, a Secret
volume; never with their variable): read at start-up by the same reader, into the setting the
variable would fill, so every command uses them alike (docs/despliegue.md, "Secretos como
ficheros"). Over 500 lines on purpose: ``Settings`` is one field per variable of the contract's
table (350 lines), read and cross-checked in one validation; split, no check would see it all.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict

from esquemas.constantes import (
    MODO_RUBRICA,
    MODO_VEREDICTO,
    PUERTA_CERTIFICADA,
    TOPIC_DECISIONES,
    TOPIC_PUERTA,
    ModoEvaluador,
    ModoPuerta,
)
from infra import credentials as security
from infra.logs import LEVELS, masked

# The live settings a ``candidata_<name>`` field overrides for the candidate loop: each can
# change the gate key (the URL through the model the server says it serves). The candidate
# sends the live FICHAS_LLM_API_KEY (or its file's) and waits FICHAS_LLM_TIMEOUT_S.
CANDIDATE_OVERRIDES = (
    "candidata_llm_url",
    "candidata_llm_modelo",
    "candidata_llm_max_tokens",
    "candidata_llm_repeat_penalty",
    "candidata_max_intentos",
    "candidata_evaluador",
    "candidata_evaluador_senal",
    "candidata_limpiar_origen",
    "candidata_generador_ejemplos",
    "candidata_prompt_generador_archivo",
    "candidata_prompt_evaluador_archivo",
)
PREFIJO_CANDIDATA = "candidata_"


class Settings(BaseSettings):
    """Every ``FICHAS_*`` variable, with the contract's defaults."""

    model_config = SettingsConfigDict(env_prefix="FICHAS_", extra="ignore")

    kafka_brokers: str = "localhost:9092"
    # How every Kafka client authenticates (infra.kafka.clients.client_options; docs/despliegue.md).
    # Checked even when unset, in this order: each check reads the ones above it.
    kafka_seguridad: str = Field(default="PLAINTEXT", validate_default=True)
    kafka_sasl_mecanismo: str | None = Field(default=None, validate_default=True)
    kafka_usuario: str | None = Field(default=None, validate_default=True)
    kafka_contrasena_archivo: Path | None = Field(default=None, validate_default=True)
    kafka_ca_archivo: Path | None = Field(default=None, validate_default=True)
    kafka_certificado_archivo: Path | None = Field(default=None, validate_default=True)
    kafka_clave_privada_archivo: Path | None = Field(default=None, validate_default=True)
    # The start-up bound: how long a command waits for a broker that does not answer before it
    # exits 4 (infra.kafka.clients.connect_admin; why 60 s: docs/operacion.md). Tests set it short.
    kafka_espera_s: float = Field(default=60.0, gt=0)
    llm_url: str = "http://localhost:8000/v1"
    llm_modelo: str = "qwen3-30b-a3b"
    llm_api_key: str = "EMPTY"
    # A secret as a file (a Secret volume; docs/despliegue.md, "Secretos como ficheros"): its
    # content, less a trailing line break, becomes the setting above (``_secrets_from_files``);
    # set with its variable, start-up refuses. Declared after it: the check reads it.
    llm_api_key_archivo: Path | None = None
    llm_timeout_s: float = Field(default=60.0, gt=0)
    llm_max_tokens: int = Field(default=1024, ge=64)
    llm_repeat_penalty: float | None = None
    data_dir: Path = Path("./.fichas")
    postgres_dsn: str | None = None
    postgres_dsn_archivo: Path | None = None  # as llm_api_key_archivo
    max_intentos: int = Field(default=3, ge=1, le=10)
    concurrencia: int = Field(default=32, ge=1, le=1024)
    topic_entrada: str = "proveedor.cambios"
    topic_publicadas: str = "fichas.publicadas"
    topic_revision: str = "fichas.revision_manual"
    topic_dlq: str = "proveedor.cambios.dlq"
    topic_muestra: str = "fichas.muestra_revision"
    topic_decisiones: str = TOPIC_DECISIONES  # written by the reviewer app, read by the worker
    topic_puerta: str = TOPIC_PUERTA  # gate states (compacted), read by the worker (docs/puerta.md)
    grupo: str = "fichas"
    particiones: int = Field(default=4, ge=1)  # for topics created at start-up when missing
    replicacion: int = Field(default=1, ge=1)
    metricas_puerto: int = Field(default=9100, ge=0, le=65535)
    gracia_s: float = Field(default=90.0, ge=0)
    muestra_proporcion: float = Field(default=0.02, ge=0, le=1)
    # Issue 47 (docs/stream.md, "The sample and the blind shadow share"): the first N published
    # fichas of each family per UTC day are sampled whatever the hash says, counted per replica.
    muestra_minima_dia: int = Field(default=5, ge=0)
    # The blind shadow share: of the final fichas of a family whose gate is open, the share (a
    # hash of event_id of its own) that goes to people unpublished, as shadow-mode evidence.
    sombra_proporcion: float = Field(default=0.05, ge=0, le=1)
    log_nivel: str = "INFO"
    # Hours an outcome record (and a SKU's version record) is kept after its last write.
    retencion_h: float = Field(default=168.0, ge=0)
    # Quality options measured with `fichas evaluar` (docs/calidad.md); off unless set.
    # FICHAS_EVALUADOR: veredicto | rubrica | citas; FICHAS_EVALUADOR_RUBRICA=true is the
    # older spelling of ``rubrica`` (deployments set it), kept as a synonym (_modo_evaluador).
    evaluador: ModoEvaluador = MODO_VEREDICTO
    evaluador_rubrica: bool = False
    limpiar_origen: bool = False
    generador_ejemplos: bool = False
    evaluador_senal: bool = False
    # A text that replaces the package's template of the generator (generador.md) or of the
    # evaluator's mode, formatted with its placeholders; unset: the package's. Part of the gate
    # key as the prompt it makes (docs/operacion.md). Here only a readable file: its text is
    # the graph's to check (grafo.prompt_archivo), at every command's start (``checks``).
    prompt_generador_archivo: Path | None = None
    prompt_evaluador_archivo: Path | None = None
    # The publication gate (docs/puerta.md): ``certificada`` publishes only on a certified
    # score; ``veredicto`` on the judge's yes, uncertified (an explicit opt-in, logged).
    puerta: ModoPuerta = PUERTA_CERTIFICADA
    # ``fichas procesar`` only (no Kafka): the gate audit file; unset means every gate closed.
    puerta_archivo: Path | None = None
    # The candidate loop (issue 41, docs/stream.md "The candidate loop"): FICHAS_CANDIDATA_<NAME>
    # overrides FICHAS_<NAME> for the candidate only (``stream.candidata.ajustes``); unset (or
    # empty) keeps the live value. Declared before the share, whose check reads them.
    candidata_llm_url: str | None = None
    candidata_llm_modelo: str | None = None
    candidata_llm_max_tokens: int | None = Field(default=None, ge=64)
    candidata_llm_repeat_penalty: float | None = None
    candidata_max_intentos: int | None = Field(default=None, ge=1, le=10)
    candidata_evaluador: ModoEvaluador | None = None
    candidata_evaluador_senal: bool | None = None
    candidata_limpiar_origen: bool | None = None
    candidata_generador_ejemplos: bool | None = None
    candidata_prompt_generador_archivo: Path | None = None
    candidata_prompt_evaluador_archivo: Path | None = None
    # The candidate's own bound of runs in flight per worker; unset: max(1, concurrencia // 10).
    candidata_concurrencia: int | None = Field(default=None, ge=0, le=1024)
    # The share of SKUs the candidate also runs on (0: no candidate), by a hash of the SKU.
    candidata_proporcion: float = Field(default=0.0, ge=0, le=1)

    @field_validator(
        "llm_repeat_penalty",
        "postgres_dsn",
        "postgres_dsn_archivo",
        "llm_api_key_archivo",
        "puerta_archivo",
        "kafka_sasl_mecanismo",
        "kafka_usuario",
        "kafka_contrasena_archivo",
        "kafka_ca_archivo",
        "kafka_certificado_archivo",
        "kafka_clave_privada_archivo",
        "prompt_generador_archivo",
        "prompt_evaluador_archivo",
        *CANDIDATE_OVERRIDES,
        "candidata_concurrencia",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """Manifests set every variable; an empty value means "not set", as when absent."""
        return None if value == "" else value

    @field_validator("llm_api_key_archivo", "postgres_dsn_archivo")
    @classmethod
    def _secret_file(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        """A secret's file: the one source of the secret (its variable unset) and readable, not
        empty, checked here so the line names this variable; ``_secrets_from_files`` reads it."""
        if value is None or info.field_name is None:
            return value
        variable, what = SECRET_FILES[info.field_name]
        if info.data.get(variable) not in (None, "", cls.model_fields[variable].default):
            raise ValueError(
                f"unset while FICHAS_{variable.upper()} is set (give the secret one way: "
                "the file, or the variable)"
            )
        security.read_secret(value, what)
        return value

    @model_validator(mode="after")
    def _secrets_from_files(self) -> Settings:
        """Each secret given as a file becomes its setting, so that every command, the
        candidate loop and the masked configuration log see it as if the variable held it."""
        for archivo, (variable, what) in SECRET_FILES.items():
            path = getattr(self, archivo)
            if path is not None:
                try:
                    setattr(self, variable, security.read_secret(path, what))
                except ValueError as exc:  # changed since its check: still one line
                    raise ValueError(f"FICHAS_{archivo.upper()}={str(path)!r}: {exc}") from None
        return self

    @field_validator("evaluador_senal")
    @classmethod
    def _senal_without_rubric(cls, value: bool, info: ValidationInfo) -> bool:
        """The signal goes with the single-verdict evaluator (grafo.mensajes.prompt_del_evaluador):
        both at once is refused at start-up, not when the first agent is built."""
        if value and info.data.get("evaluador_rubrica"):
            raise ValueError("false while FICHAS_EVALUADOR_RUBRICA is true")
        if value and info.data.get("evaluador", MODO_VEREDICTO) != MODO_VEREDICTO:
            raise ValueError(f"false while FICHAS_EVALUADOR is {info.data['evaluador']}")
        return value

    @field_validator(
        "prompt_generador_archivo",
        "prompt_evaluador_archivo",
        "candidata_prompt_generador_archivo",
        "candidata_prompt_evaluador_archivo",
    )
    @classmethod
    def _prompt_file(cls, value: Path | None) -> Path | None:
        """A prompt file the process can open: a path mistyped in a manifest, or a volume not
        mounted, is this variable's line; whether its text fits a template is the graph's
        check (``grafo.prompt_archivo``, given to ``load_settings`` as one of its ``checks``)."""
        if value is not None:
            try:
                with value.open("rb"):
                    pass
            except OSError as exc:
                raise ValueError(f"a readable file ({exc.strerror or exc})") from None
        return value

    @model_validator(mode="before")
    @classmethod
    def _evaluador_vacio(cls, data: object) -> object:
        """An empty FICHAS_EVALUADOR is unset (manifests set every variable), so that
        FICHAS_EVALUADOR_RUBRICA=true alone still means the rubric."""
        if isinstance(data, dict) and data.get("evaluador") == "":
            return {k: v for k, v in data.items() if k != "evaluador"}
        return data

    @model_validator(mode="after")
    def _modo_evaluador(self) -> Settings:
        """FICHAS_EVALUADOR_RUBRICA=true means FICHAS_EVALUADOR=rubrica; set together with
        another mode they disagree, and start-up refuses. After this, both say the same."""
        if self.evaluador_rubrica:
            if "evaluador" in self.model_fields_set and self.evaluador != MODO_RUBRICA:
                raise ValueError(
                    f"FICHAS_EVALUADOR_RUBRICA=true and FICHAS_EVALUADOR={self.evaluador} "
                    "disagree: set FICHAS_EVALUADOR alone (rubrica, veredicto or citas)"
                )
            self.evaluador = MODO_RUBRICA
        self.evaluador_rubrica = self.evaluador == MODO_RUBRICA
        return self

    @field_validator("llm_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        """The OpenAI client would take ``localhost:8000`` as a scheme and fail on every call."""
        return _http_url(value)

    @field_validator("kafka_brokers")
    @classmethod
    def _host_ports(cls, value: str) -> str:
        """``host:port[,host:port...]``, as Kafka clients take bootstrap servers."""
        for server in value.split(","):
            host, _, port = server.strip().rpartition(":")
            if not host or not port.isdigit():
                raise ValueError("host:port[,host:port...], e.g. localhost:9092")
        return value

    @field_validator("kafka_seguridad")
    @classmethod
    def _protocol(cls, value: str) -> str:
        """One of Kafka's four security protocols, in any case."""
        if value.upper() not in security.PROTOCOLS:
            raise ValueError(f"one of {', '.join(security.PROTOCOLS)}")
        return value.upper()

    @field_validator("kafka_sasl_mecanismo")
    @classmethod
    def _mechanism(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Set exactly when the protocol is SASL_*: one of the mechanisms aiokafka speaks."""
        _only_with(value, info, security.SASL_PROTOCOLS, required="one of " + MECHANISMS)
        if value is not None and value.upper() not in security.MECHANISMS:
            raise ValueError(f"one of {MECHANISMS}")
        return None if value is None else value.upper()

    @field_validator("kafka_usuario")
    @classmethod
    def _user(cls, value: str | None, info: ValidationInfo) -> str | None:
        """The SASL user: needed by a SASL protocol, meaningless without one."""
        _only_with(value, info, security.SASL_PROTOCOLS, required="the SASL user name")
        return value

    @field_validator("kafka_contrasena_archivo")
    @classmethod
    def _password_file(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        """The SASL password's file: readable and not empty (the password is not kept)."""
        needed = "the path of the file holding the SASL password"
        if _only_with(value, info, security.SASL_PROTOCOLS, required=needed) and value:
            security.read_secret(value)
        return value

    @field_validator("kafka_ca_archivo")
    @classmethod
    def _ca_file(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        """The CA that signs the brokers' certificates (unset: the system's CAs), with TLS."""
        if _only_with(value, info, security.TLS_PROTOCOLS) and value:
            security.check_ca(value)
        return value

    @field_validator("kafka_certificado_archivo")
    @classmethod
    def _certificate_file(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        """The client's certificate for mutual TLS (with TLS only)."""
        if _only_with(value, info, security.TLS_PROTOCOLS) and value:
            security.check_certificate(value)
        return value

    @field_validator("kafka_clave_privada_archivo")
    @classmethod
    def _key_file(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        """The certificate's unencrypted private key: both or neither, and they must match."""
        if not _only_with(value, info, security.TLS_PROTOCOLS):
            return value
        if "kafka_certificado_archivo" not in info.data:
            return value  # the certificate's own line says what is wrong with it
        certificate = info.data["kafka_certificado_archivo"]
        if value is None and certificate is not None:
            raise ValueError("the private key of FICHAS_KAFKA_CERTIFICADO_ARCHIVO (a file)")
        if value is not None and certificate is None:
            raise ValueError("unset while FICHAS_KAFKA_CERTIFICADO_ARCHIVO is (both or neither)")
        if value is not None and certificate is not None:
            security.check_key_pair(certificate, value)
        return value

    @field_validator("candidata_llm_url")
    @classmethod
    def _candidate_url(cls, value: str | None) -> str | None:
        """The candidate's LLM URL, checked as the live one is."""
        return None if value is None else _http_url(value)

    @field_validator("candidata_evaluador_senal")
    @classmethod
    def _candidate_senal(cls, value: bool | None, info: ValidationInfo) -> bool | None:
        """The signal goes with the single-verdict evaluator, on the candidate too."""
        senal = value if value is not None else info.data.get("evaluador_senal")
        modo = info.data.get("candidata_evaluador") or info.data.get("evaluador")
        if senal and modo is not None and modo != MODO_VEREDICTO:
            heredada = " (it inherits FICHAS_EVALUADOR_SENAL=true)" if value is None else ""
            raise ValueError(f"false while the candidate's evaluator is {modo}{heredada}")
        return value

    @field_validator("candidata_proporcion")
    @classmethod
    def _candidate_differs(cls, value: float, info: ValidationInfo) -> float:
        """A share > 0 needs a candidate that is not the live loop: at least one override that
        could change the key (model, URL, sampling, attempts, evaluator, generator options,
        prompt files) set to a value other than the live one. The served model's identity and
        the prompts' texts are compared once the worker can compute both keys
        (``stream.candidata.bucle``). An override that failed its own check is left to its line."""
        if any(name not in info.data for name in CANDIDATE_OVERRIDES):
            return value
        if value > 0 and not _differing_overrides(info.data):
            raise ValueError(
                "0 while no FICHAS_CANDIDATA_* setting differs from its live FICHAS_* value "
                "(the candidate would run under the live key)"
            )
        return value

    @field_validator("log_nivel")
    @classmethod
    def _level(cls, value: str) -> str:
        """One of the logging module's level names, in any case."""
        if value.upper() not in LEVELS:
            raise ValueError(f"one of {', '.join(LEVELS)}")
        return value.upper()


MECHANISMS = ", ".join(security.MECHANISMS)
# Each ``FICHAS_*_ARCHIVO`` of a secret: the setting it fills, and what it holds, in words.
SECRET_FILES = {
    "llm_api_key_archivo": ("llm_api_key", "the LLM API key"),
    "postgres_dsn_archivo": ("postgres_dsn", "the PostgreSQL DSN"),
}


def _http_url(value: str) -> str:
    """``value`` if it is an http(s) URL with a host; else the error line's expectation."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("an http:// or https:// URL, e.g. http://localhost:8000/v1")
    return value


def _differing_overrides(data: dict[str, object]) -> list[str]:
    """The key-making overrides set to a value other than the live setting's."""
    return [
        name
        for name in CANDIDATE_OVERRIDES
        if data.get(name) is not None
        and data.get(name) != data.get(name.removeprefix(PREFIJO_CANDIDATA))
    ]


def _only_with(
    value: object, info: ValidationInfo, protocols: tuple[str, ...], required: str = ""
) -> bool:
    """Whether a security variable applies under the protocol set (False when the protocol
    itself is invalid: its own line says so); refuse one that is set where it does not apply,
    and a ``required`` one (what it must be, in words) that is missing where it does."""
    protocol = info.data.get("kafka_seguridad")
    if protocol is None:
        return False
    if protocol not in protocols:
        if value is not None:
            raise ValueError(f"unset while FICHAS_KAFKA_SEGURIDAD={protocol} (it needs none)")
        return False
    if required and value is None:
        raise ValueError(f"{required} (FICHAS_KAFKA_SEGURIDAD={protocol} needs it)")
    return True


SECRETS = ("llm_api_key",)
URLS = ("postgres_dsn", "llm_url", "candidata_llm_url")


class ConfigError(Exception):
    """One or more ``FICHAS_*`` variables are not valid; ``lines`` says which and why."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


# A start-up check of the settings that is not plumbing (the prompt files' texts: the graph's
# rule, ``grafo.prompt_archivo``, which ``infra`` may not import): per field it refuses, what
# the field was expected to be. Commands pass theirs through ``herramientas.arranque``.
SettingsCheck = Callable[[Settings], Mapping[str, str]]


def load_settings(checks: Sequence[SettingsCheck] = ()) -> Settings:
    """Read and validate every variable, then run ``checks`` on valid settings; raise
    ``ConfigError`` with one line per problem, in the same form for both. ``FICHAS_FAULT_POINTS``
    without the test suite's allowance is one (``infra.fault_points``)."""
    from infra.fault_points import refusal

    problems = [refused] if (refused := refusal()) else []
    try:
        settings = Settings()
    except ValidationError as exc:
        problems += [_problem(error) for error in exc.errors()]
    else:
        problems += [
            _line(name, getattr(settings, name), expected)
            for check in checks
            for name, expected in check(settings).items()
        ]
    if problems:
        raise ConfigError(problems) from None
    return settings


def load_settings_or_report(program: str, checks: Sequence[SettingsCheck] = ()) -> Settings | None:
    """The settings; None after one line per bad variable on standard error, as
    ``PROGRAM: FICHAS_X=...: expected ...`` (the caller exits 2, without a traceback)."""
    try:
        return load_settings(checks)
    except ConfigError as exc:
        for line in exc.lines:
            print(f"{program}: {line}", file=sys.stderr)
        return None


def effective(settings: Settings) -> dict[str, object]:
    """The settings as the worker uses them, by variable name, secrets masked: for the log."""
    values = masked(settings.model_dump(), SECRETS, URLS)
    return {f"FICHAS_{name.upper()}": value for name, value in values.items()}


def _problem(error: ErrorDetails) -> str:
    """``FICHAS_X='value': expected ...`` for one pydantic error, naming the variable; a
    disagreement between variables (``Settings._modo_evaluador``) names them itself."""
    if not error["loc"]:
        return str(error.get("ctx", {}).get("error", error["msg"]))
    name = str(error["loc"][0])
    return _line(name, error.get("input"), _expected(name, error))


def _line(name: str, given: object, expected: str) -> str:
    """``FICHAS_X='value' is not valid: expected ...`` (``is not set`` when ``given`` is None);
    a path is quoted as the variable gave it."""
    variable = f"FICHAS_{name.upper()}"
    if given is None:
        return f"{variable} is not set: expected {expected}"
    shown = str(given) if isinstance(given, Path) else given
    return f"{variable}={shown!r} is not valid: expected {expected}"


def _expected(name: str, error: ErrorDetails) -> str:
    """What the field accepts, in words: its type and bounds, or the validator's own text."""
    if error["type"] == "value_error":
        return str(error.get("ctx", {}).get("error", error["msg"]))
    if error["type"] == "literal_error":  # FICHAS_EVALUADOR, FICHAS_PUERTA: one of a list
        return str(error.get("ctx", {}).get("expected", error["msg"]))
    field = Settings.model_fields[name]
    kinds: dict[object, str] = {
        int: "an integer",
        float: "a number",
        int | None: "an integer",
        float | None: "a number",
        bool | None: "true or false",
    }
    kind = kinds.get(field.annotation, "a value")
    unset = ", or empty for unset" if field.default is None else ""
    bounds = []
    for meta in field.metadata:
        for attr, word in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            limit = getattr(meta, attr, None)
            if limit is not None:
                bounds.append(f"{word} {limit}")
    expected = f"{kind} {' and '.join(bounds)}".strip() + unset
    return expected + ("" if field.default is None else f" (default {field.default})")
