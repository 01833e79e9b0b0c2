"""Every constant of the contract, written once: destinations, reasons, codes and limits.

Other packages import these names instead of repeating the literals, so a change to the
contract is a change to this file (and to the models that use it), never a search across the
tree. The prompts are filled from here too (``grafo.mensajes``), so the lengths the generator is
told are the lengths the code checks.
"""

from __future__ import annotations

from typing import Final, Literal

# Where an outcome goes. The two topics' default names double as destination labels in
# ``fichas procesar`` output and in the graph's state; invalid input is "dlq".
DESTINO_PUBLICADAS: Final = "fichas.publicadas"
DESTINO_REVISION: Final = "fichas.revision_manual"
DESTINO_DLQ: Final = "dlq"
Destino = Literal["fichas.publicadas", "fichas.revision_manual", "dlq"]

# Why a ficha went to manual review (``FichaEnRevision.motivo``).
MOTIVO_RECHAZADA: Final = "rechazada"
MOTIVO_SALIDA_INVALIDA: Final = "salida_invalida"
# v1.2: code checks passed and the evaluator scored the ficha, but no certified gate lets it
# through (closed gate, a gate key other than the running configuration's, or a low score).
MOTIVO_SIN_GARANTIA: Final = "sin_garantia"
Motivo = Literal["rechazada", "salida_invalida", "sin_garantia"]

# The pseudo-criterion of a problem that says the model's answer was unusable.
CRITERIO_SALIDA_INVALIDA: Final = MOTIVO_SALIDA_INVALIDA

# Why an input message went to the DLQ (``EventoRechazado.error.codigo``).
CodigoRechazo = Literal[
    "json_invalido",
    "esquema_invalido",
    "familia_desconocida",
    "demasiado_grande",
    "error_procesamiento",
    "event_id_reutilizado",
]

# How the DLQ record carries the original value.
PayloadCodificacion = Literal["texto", "base64"]

# Human review (contract v1.1).
TipoRevision = Literal["revision", "muestra"]
DecisionHumana = Literal["aprobada", "editada", "rechazada", "correcta", "incorrecta", "obsoleta"]
DecisionPublicacion = Literal["aprobada", "editada"]

# Limits of the ficha (C01, C02) and of a problem's explanation.
MAX_TITULO: Final = 80
MAX_DESCRIPCION: Final = 1200
MAX_DETALLE: Final = 200

# Limits of the input event.
SKU_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
MAX_EVENT_ID: Final = 128
MAX_TITULO_PROVEEDOR: Final = 500
MAX_DESCRIPCION_PROVEEDOR: Final = 10_000
MAX_ATRIBUTOS: Final = 100
MAX_MESSAGE_BYTES: Final = 64 * 1024
MAX_VERSION: Final = 2**53 - 1
MAX_CIFRA_TEXTO: Final = 200
# Figures are bounded so that every accepted value survives JSON, msgpack (checkpoints) and a
# float64 round trip unchanged: integers within ±(2^53 − 1), floats finite and within ±1e15.
MAX_CIFRA_ABS: Final = 2**53 - 1

# The reviewer app (contract v1.1): the decisions topic's default name, the reason a sample
# item is queued under (next to ``Motivo``), and who closes an item superseded by a newer version.
TOPIC_DECISIONES: Final = "fichas.decisiones"
MOTIVO_MUESTRA: Final = "muestra"
TIPO_REVISION: Final = "revision"
TIPO_MUESTRA: Final = "muestra"
DECISION_APROBADA: Final = "aprobada"
DECISION_EDITADA: Final = "editada"
DECISION_RECHAZADA: Final = "rechazada"
DECISION_CORRECTA: Final = "correcta"
DECISION_INCORRECTA: Final = "incorrecta"
DECISION_OBSOLETA: Final = "obsoleta"
REVISOR_SISTEMA: Final = "sistema"
# v1.6 (issue 47): why a published ficha is on the sample topic (``FichaPublicada.muestreo``):
# the hash of its event_id fell under FICHAS_MUESTRA_PROPORCION, or it is among the first
# FICHAS_MUESTRA_MINIMA_DIA published fichas of its family that UTC day on its worker.
MUESTREO_PROPORCION: Final = "proporcion"
MUESTREO_MINIMO_DIARIO: Final = "minimo_diario"
Muestreo = Literal["proporcion", "minimo_diario"]

# The contract's schemas by name (``contrato/esquemas/<name>.json``) and their versions.
# Minor versions only add fields or codes; a removal or a change of meaning is a new major
# version, written to a new topic whose name ends in ``.v<major>`` (docs/contrato.md).
ESQUEMA_EVENTO_CAMBIO: Final = "EventoCambio"
ESQUEMA_FICHA_PUBLICADA: Final = "FichaPublicada"
ESQUEMA_FICHA_EN_REVISION: Final = "FichaEnRevision"
ESQUEMA_EVENTO_RECHAZADO: Final = "EventoRechazado"
ESQUEMA_DECISION_REVISION: Final = "DecisionRevision"
ESQUEMA_ESTADO_PUERTA: Final = "EstadoPuerta"
ESQUEMAS: Final = (
    ESQUEMA_EVENTO_CAMBIO,
    ESQUEMA_FICHA_PUBLICADA,
    ESQUEMA_FICHA_EN_REVISION,
    ESQUEMA_EVENTO_RECHAZADO,
    ESQUEMA_DECISION_REVISION,
    ESQUEMA_ESTADO_PUERTA,
)
ESQUEMA_VERSION: Final = "1.6"

# Kafka headers of every record the processor writes, so that a consumer can route on them
# without parsing the value. Values are UTF-8 text; ``version`` is the decimal SKU version.
CABECERA_SKU: Final = "sku"
CABECERA_VERSION: Final = "version"
CABECERA_EVENT_ID: Final = "event_id"
CABECERA_ESQUEMA: Final = "esquema"
CABECERA_ESQUEMA_VERSION: Final = "esquema_version"

# The publication gate (contract v1.2): a ficha is published without a person only where the
# precision of automatic approvals against people is certified (docs/puerta.md).
TOPIC_PUERTA: Final = "fichas.puerta"
FAMILIA_TODAS: Final = "*"  # the pooled gate, for families whose data do not certify alone
OBJETIVO_PUERTA: Final = 0.9  # the precision the gate certifies
DELTA_PUERTA: Final = 0.05  # the risk that a certified gate is in truth below the objective
# FICHAS_PUERTA: ``certificada`` publishes on a certified score; ``veredicto`` on the judge's
# yes, uncertified (the behaviour before v1.2, an explicit opt-in).
PUERTA_CERTIFICADA: Final = "certificada"
PUERTA_VEREDICTO: Final = "veredicto"
ModoPuerta = Literal["certificada", "veredicto"]
# FICHAS_EVALUADOR: the single verdict, the rubric of yes/no questions, the quoter whose
# claims code judges, or (v1.6, issue 48) code alone reading every claim against the origin
# with a reader of translations, no model call (docs/grafo.md). Each has its own prompt (the
# reader's: the text naming its model and threshold), so its own gate key.
ModoEvaluador = Literal["veredicto", "rubrica", "citas", "lector"]
MODO_VEREDICTO: Final = "veredicto"
MODO_RUBRICA: Final = "rubrica"
MODO_CITAS: Final = "citas"
MODO_LECTOR: Final = "lector"
MODOS_EVALUADOR: Final = (MODO_VEREDICTO, MODO_RUBRICA, MODO_CITAS, MODO_LECTOR)

# A prompt file (FICHAS_PROMPT_GENERADOR_ARCHIVO, FICHAS_PROMPT_EVALUADOR_ARCHIVO and their
# FICHAS_CANDIDATA_ forms) replaces one of the package's templates and is formatted like it:
# the placeholders each template offers, and the ones a replacement must keep (the criteria's
# texts: a prompt without them does not tell its agent the house rules of the version in the
# key). The lengths may be written out; the code checks them either way.
PLANTILLA_GENERADOR: Final = "generador.md"
PLANTILLA_EVALUADOR: Final = {
    MODO_VEREDICTO: "evaluador.md",
    MODO_RUBRICA: "evaluador_rubrica.md",
    MODO_CITAS: "evaluador_citas.md",
    MODO_LECTOR: "evaluador_lector.md",
}
MARCADORES_PLANTILLA: Final[dict[str, tuple[str, ...]]] = {
    "generador.md": ("criterios", "max_titulo", "max_descripcion"),
    "evaluador.md": ("criterios",),
    "evaluador_rubrica.md": (),
    "evaluador_citas.md": (),
    "evaluador_lector.md": (),
}
MARCADORES_REQUERIDOS: Final = ("criterios",)
# Why a gate is open or closed (``EstadoPuerta.motivo``).
MOTIVO_PUERTA_CERTIFICADA: Final = "certificada"
MOTIVO_PUERTA_SIN_DATOS: Final = "sin_datos_suficientes"
MOTIVO_PUERTA_NO_CERTIFICADA: Final = "precision_no_certificada"
MOTIVO_PUERTA_COTA_BAJA: Final = "cota_en_linea_bajo_objetivo"
# v1.5: a family's record open because the pooled gate covers it (docs/puerta.md, "Coverage"):
# ``umbral`` is the pooled λ, ``conjunta_actualizada_en`` names the pooled certification.
MOTIVO_PUERTA_CUBIERTA: Final = "cubierta_por_conjunta"
# v1.5: a family's own evidence showed, at risk δ, its precision at the pooled λ below the
# objective (its exclusion e-process crossed 1/δ): the pooled gate no longer covers it.
MOTIVO_PUERTA_EXCLUIDA: Final = "excluida_de_conjunta"
# v1.5: a person's hold and release, on the hold record of a gate (``id_retencion``).
MOTIVO_PUERTA_RETENIDA: Final = "retenida"
MOTIVO_PUERTA_LIBERADA: Final = "liberada"
# v1.5 (issue 41): a gate closed because its key was replaced by a promoted candidate key
# (``fichas puerta promover``): the old key publishes nothing any more, its certification stands.
MOTIVO_PUERTA_SUSTITUIDA: Final = "sustituida"
# v1.6 (issue 47): closed by the change detector on the sampled verdicts (a drop in precision
# seen whatever came before it; docs/puerta.md, "Closing: a change detector").
MOTIVO_PUERTA_CAMBIO: Final = "cambio_detectado"
# The closures by what people say of published fichas: they restart the gate's sequence, and a
# family whose covered record one of them closed is not covered again without its own gate.
MOTIVOS_VIGILANCIA: Final = ("cota_en_linea_bajo_objetivo", "cambio_detectado")
MotivoPuerta = Literal[
    "certificada",
    "sin_datos_suficientes",
    "precision_no_certificada",
    "cota_en_linea_bajo_objetivo",
    "cubierta_por_conjunta",
    "excluida_de_conjunta",
    "retenida",
    "liberada",
    "sustituida",
    "cambio_detectado",
]
MOTIVOS_RETENCION: Final = (MOTIVO_PUERTA_RETENIDA, MOTIVO_PUERTA_LIBERADA)
SUFIJO_RETENCION: Final = "retencion"  # a hold record's key: ``<gate id>|retencion``
MAX_NOTA_RETENCION: Final = 500  # characters of a hold's or release's reason (``nota``)
MAX_RETENIDA_POR: Final = 200  # characters of the name of who held or released a gate
# Who opened a gate (``EstadoPuerta.abierta_por``, v1.3): the reviewer app's sequential
# certifier, the command line, or, in manual mode, the reviewer's name (any other string).
ABIERTA_POR_AUTOMATICO: Final = "automatico"
ABIERTA_POR_CALIBRAR: Final = "calibrar"
# What a gate was certified on (``EstadoPuerta.origen_datos``, v1.3: method, then data).
ORIGEN_SECUENCIAL_SOMBRA: Final = "secuencial:sombra"
ORIGEN_LTT_CONJUNTO: Final = "ltt:conjunto"
ORIGEN_LTT_RECALIFICADO: Final = "ltt:recalificado"
# fixed-n Learn-then-Test on a batch of people's decisions read with their evidence
ORIGEN_LTT_DECISIONES: Final = "ltt:decisiones"
# v1.5: a hold or release is a person's act, not a certification (``origen_datos`` of a hold
# record); a family covered by the pooled gate on its own shadow-mode evidence (of a covered
# record; method ``cobertura``, data ``sombra``, then the pooled certification it rests on).
ORIGEN_PERSONA: Final = "persona"
ORIGEN_COBERTURA_SOMBRA: Final = "cobertura:sombra"
# ... or covered on a batch (``fichas calibrar``: ``puerta.certificacion.cubrir_por_lote``).
ORIGEN_COBERTURA_LOTE: Final = "cobertura:lote"
# v1.5 (issue 41): the closed record of a replaced key names the key that replaced it:
# ``promocion:<new key id>`` (``fichas puerta promover``).
ORIGEN_PROMOCION: Final = "promocion"
