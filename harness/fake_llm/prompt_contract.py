"""What the fake LLM reads from a request: its whole dependence on the product's prompts.

The fake runs as its own process and imports nothing of ``grafo``, yet to answer like a model
it must tell which agent asks, for which SKU, from which origin. It reads that from the request
as ``grafo`` builds it, through the markers named here and nowhere else:

* the agent, from the properties of ``response_format.json_schema.schema``: ``aprobada`` is the
  evaluator's verdict (``esquemas.Veredicto``), ``inventa`` the evaluator's rubric
  (``grafo.rubrica.Rubrica``), ``titulo`` the generator's ficha (``esquemas.Ficha``);
* the SKU, from ``"sku": "<SKU>"`` in the last user message (the origin, written as JSON by
  ``grafo.mensajes``);
* the origin, from the first fenced ```` ```json ```` block of the last user message: its
  ``ficha_proveedor.atributos`` and ``atributos_obligatorios`` (``grafo.estado.origen_de``);
* the rubric's questions and the criterion each stands for (``grafo.rubrica.PREGUNTAS``);
* the quoting evaluator (``grafo.citas.Citas``, schema property ``citas``): the claims, from
  the ```` ```json ```` block of the last user message that holds ``afirmaciones``, and the
  fragments a quote may be, from the schema's ``enum`` of ``cita`` (``formato_respuesta``).

``tests/harness/test_fake_llm_contrato.py`` checks every marker against the real prompts.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

GENERATOR = "generador"
EVALUATOR = "evaluador"
AGENTS = (GENERATOR, EVALUATOR)

# Schema properties that tell the agent (response_format.json_schema.schema.properties).
VERDICT_PROPERTY = "aprobada"
RUBRIC_PROPERTY = "inventa"
QUOTES_PROPERTY = "citas"
FICHA_PROPERTY = "titulo"
# The quoting evaluator: where its claims are, and its answer's fields per claim.
CLAIMS_KEY = "afirmaciones"
QUOTE_FIELD = "cita"
SUPPORTED_FIELD = "respaldada"

# The last user message: the SKU as JSON, and the origin as the first ```json block.
SKU_PATTERN = re.compile(r'"sku"\s*:\s*"([^"]+)"')
JSON_BLOCK_PATTERN = re.compile(r"```json\s*\n(.*?)\n?```", re.DOTALL)
ORIGIN_SUPPLIER_KEY = "ficha_proveedor"
ORIGIN_ATTRIBUTES_KEY = "atributos"
ORIGIN_REQUIRED_KEY = "atributos_obligatorios"

# The rubric: criterion -> question, and the fields of each answer.
RUBRIC_QUESTIONS = {"C04": "inventa", "C05": "publicidad", "C06": "vacia"}
RUBRIC_ANSWER_FIELDS = ("cita", "falla")


def schema_properties(body: dict[str, Any]) -> dict[str, Any]:
    """The properties of the JSON schema the request asks the answer to follow ({} if none)."""
    response_format = body.get("response_format")
    json_schema = response_format.get("json_schema") if isinstance(response_format, dict) else None
    schema = json_schema.get("schema") if isinstance(json_schema, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return properties if isinstance(properties, dict) else {}


def detect_agent(body: dict[str, Any]) -> str | None:
    """Tell the generator from the evaluator by the properties of the requested schema."""
    properties = schema_properties(body)
    if {VERDICT_PROPERTY, RUBRIC_PROPERTY, QUOTES_PROPERTY} & set(properties):
        return EVALUATOR
    if FICHA_PROPERTY in properties:
        return GENERATOR
    return None


def is_rubric(body: dict[str, Any]) -> bool:
    """Whether the evaluator was asked for the rubric (three questions) instead of a verdict."""
    return RUBRIC_PROPERTY in schema_properties(body)


def quoting_task(body: dict[str, Any]) -> tuple[list[str], list[str]] | None:
    """The quoting evaluator's claims and the origin fragments its schema allows, or None
    when the request is not the quoter's."""
    properties = schema_properties(body)
    if QUOTES_PROPERTY not in properties:
        return None
    schema = body["response_format"]["json_schema"]["schema"]
    item = properties[QUOTES_PROPERTY].get("items", {})
    if "$ref" in item:
        item = schema.get("$defs", {}).get(str(item["$ref"]).rsplit("/", 1)[-1], {})
    enum = item.get("properties", {}).get(QUOTE_FIELD, {}).get("enum", [])
    fragments = [str(f) for f in enum if f]
    claims: list[str] = []
    for match in JSON_BLOCK_PATTERN.finditer(last_user_text(body)):
        with contextlib.suppress(ValueError):
            value = json.loads(match.group(1))
            if isinstance(value, dict) and isinstance(value.get(CLAIMS_KEY), list):
                claims = [str(c) for c in value[CLAIMS_KEY]]
    return claims, fragments


def message_text(message: dict[str, Any]) -> str:
    """Text of a chat message whose content may be a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def last_user_text(body: dict[str, Any]) -> str:
    """The last user message: where ``grafo`` writes the origin."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return message_text(message)
    return ""


def detect_sku(body: dict[str, Any]) -> str | None:
    """The SKU the request is about, from the origin in its last user message."""
    match = SKU_PATTERN.search(last_user_text(body))
    return match.group(1) if match else None


def json_block(text: str) -> dict[str, Any] | None:
    """The first ```json fenced object of a prompt, or None when there is none."""
    for match in JSON_BLOCK_PATTERN.finditer(text):
        with contextlib.suppress(ValueError):
            value = json.loads(match.group(1))
            if isinstance(value, dict):
                return value
    return None


def required_supplier_attributes(prompt: str) -> dict[str, str]:
    """The required attributes the supplier gave, read from the origin block of ``prompt``."""
    origin = json_block(prompt) or {}
    supplier = origin.get(ORIGIN_SUPPLIER_KEY)
    attributes = supplier.get(ORIGIN_ATTRIBUTES_KEY) if isinstance(supplier, dict) else None
    required = origin.get(ORIGIN_REQUIRED_KEY)
    if not isinstance(attributes, dict) or not isinstance(required, list):
        return {}
    return {key: str(attributes[key]) for key in required if key in attributes}
