"""Behaviour of the fake LLM server, through the same clients the processor uses.

These tests pin what other tests and the benchmarks rely on: per-SKU scripts, error
statuses as the `openai` client classifies them, outages, the concurrency limit and
continuity of scripts across a server restart.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from langchain_openai import ChatOpenAI
from openai.types.shared_params import ResponseFormatJSONSchema
from pydantic import SecretStr

from grafo.puntuacion import puntuacion_veredicto
from harness.fake_llm.client import FakeLLM, FakeLLMError

FICHA_FORMAT: ResponseFormatJSONSchema = {
    "type": "json_schema",
    "json_schema": {
        "name": "Ficha",
        "schema": {
            "type": "object",
            "properties": {
                "titulo": {"type": "string", "maxLength": 80},
                "descripcion": {"type": "string"},
                "atributos": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "required": ["titulo", "descripcion", "atributos"],
        },
    },
}
VEREDICTO_FORMAT: ResponseFormatJSONSchema = {
    "type": "json_schema",
    "json_schema": {
        "name": "Veredicto",
        "schema": {
            "type": "object",
            "properties": {
                "aprobada": {"type": "boolean"},
                "problemas": {"type": "array", "items": {"type": "object"}},
            },
            "required": ["aprobada", "problemas"],
        },
    },
}


def generator_prompt(sku: str) -> str:
    origin = {
        "sku": sku,
        "familia": "botellas",
        "atributos_obligatorios": ["capacidad_ml", "material", "color"],
        "ficha_proveedor": {
            "titulo": "Steel bottle 750 ml",
            "descripcion": "Insulated bottle.",
            "atributos": {"capacidad_ml": "750", "material": "acero", "peso_g": "300"},
        },
        "cifras": {"capacidad_ml": 750},
    }
    return "Redacta la ficha de este producto.\n```json\n" + json.dumps(origin) + "\n```"


def evaluator_prompt(sku: str) -> str:
    block = {
        "ficha": {"titulo": f"Producto {sku}", "descripcion": "Botella.", "atributos": {}},
        "comprobaciones": [],
        "origen": {"sku": sku, "familia": "botellas"},
    }
    return "Evalúa esta ficha.\n```json\n" + json.dumps(block) + "\n```"


def sync_client(llm: FakeLLM, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=llm.url, api_key="x", max_retries=0, timeout=timeout)


def evaluate(client: openai.OpenAI, sku: str) -> dict[str, Any]:
    response = client.chat.completions.create(
        model="m",
        messages=[
            {"role": "system", "content": "Eres el evaluador."},
            {"role": "user", "content": evaluator_prompt(sku)},
        ],
        response_format=VEREDICTO_FORMAT,
    )
    content = response.choices[0].message.content
    assert content is not None
    result: dict[str, Any] = json.loads(content)
    return result


def generate(llm: FakeLLM, sku: str) -> str:
    """A plain ChatOpenAI call, as the generador's model makes it; returns the raw content."""
    model = ChatOpenAI(base_url=llm.url, api_key=SecretStr("x"), model="m", max_retries=0)
    message = model.invoke([("user", generator_prompt(sku))], response_format=FICHA_FORMAT)
    assert isinstance(message.content, str)
    return message.content


@pytest.fixture(scope="module")
def shared_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def llm(shared_llm: FakeLLM) -> FakeLLM:
    """The shared server with default config, no outage and no history."""
    shared_llm.configure({})
    shared_llm.serve_identity()
    shared_llm.up()
    shared_llm.reset()
    return shared_llm


def test_models_speaks_vllms_shape_and_swaps_weights_under_the_same_name(llm: FakeLLM) -> None:
    """``/v1/models`` as vLLM answers it (root, max_model_len, parent, permission), its identity
    changed at run time and kept across a restart; down with the chat route during an outage."""
    from grafo.fuente_puerta import modelo_servido

    client = sync_client(llm)
    (modelo,) = client.models.list().data
    datos = modelo.model_dump()
    assert datos["id"] == "fake-llm" and datos["owned_by"] == "vllm"
    assert datos["root"] == "fichas/fake-llm-weights" and datos["max_model_len"] == 32768
    assert datos["parent"] is None and datos["permission"][0]["object"] == "model_permission"
    antes = modelo_servido(client.get("/models", cast_to=object), "fake")
    assert antes == "max_model_len=32768 owned_by=vllm root=fichas/fake-llm-weights"

    assert llm.serve_identity({"root": "otros/pesos"})["id"] == "fake-llm"
    despues = modelo_servido(client.get("/models", cast_to=object), "fake")
    assert despues == "max_model_len=32768 owned_by=vllm root=otros/pesos"
    llm.restart()
    assert modelo_servido(sync_client(llm).get("/models", cast_to=object), "fake") == despues
    with pytest.raises(FakeLLMError, match="unknown identity fields"):
        llm.serve_identity({"pesos": "x"})
    with pytest.raises(FakeLLMError, match="max_model_len"):
        llm.serve_identity({"max_model_len": 0})

    llm.down(30)
    with pytest.raises(openai.InternalServerError):
        sync_client(llm).models.list()
    llm.up()
    assert sync_client(llm).models.list().data[0].model_dump()["root"] == "otros/pesos"


def test_scripted_sequence_reject_reject_approve(llm: FakeLLM) -> None:
    llm.configure({"rules": [{"sku": "SEQ-.*", "evaluador": ["rechazar", "rechazar", "aprobar"]}]})
    client = sync_client(llm)

    verdicts = [evaluate(client, "SEQ-1") for _ in range(4)]

    assert [v["aprobada"] for v in verdicts] == [False, False, True, True]
    assert verdicts[0]["problemas"] == [
        {"criterio": "C06", "detalle": "La descripción repite el título."}
    ]
    records = llm.requests(sku="SEQ-1")
    assert [r["step"] for r in records] == [0, 1, 2, 3]
    assert {r["agent"] for r in records} == {"evaluador"}
    assert all(r["status"] == 200 for r in records)
    assert records[0]["body"]["response_format"]["json_schema"]["name"] == "Veredicto"


def test_counters_are_independent_per_sku_and_agent(llm: FakeLLM) -> None:
    llm.configure(
        {
            "default": {"evaluador": ["rechazar:C04", "aprobar"]},
            "rules": [{"sku": "OTRO-.*", "evaluador": ["aprobar", "rechazar"]}],
        }
    )
    client = sync_client(llm)

    first_a = evaluate(client, "A-1")
    first_b = evaluate(client, "B-1")
    generate(llm, "A-1")  # the generador's counter must not move the evaluador's
    second_a = evaluate(client, "A-1")
    first_other = evaluate(client, "OTRO-1")
    second_other = evaluate(client, "OTRO-1")

    assert first_a["problemas"][0]["criterio"] == "C04"
    assert first_b["aprobada"] is False
    assert second_a["aprobada"] is True
    assert (first_other["aprobada"], second_other["aprobada"]) == (True, False)


def test_generator_actions(llm: FakeLLM) -> None:
    llm.configure(
        {
            "rules": [
                {"sku": "LARGO-1", "generador": ["titulo_largo"]},
                {"sku": "VACIO-1", "generador": ["sin_atributos"]},
                {"sku": "ROTO-1", "generador": ["json_roto"]},
                {"sku": "LITERAL-1", "generador": ['texto:{"titulo": "x"}']},
            ]
        }
    )

    valida = json.loads(generate(llm, "OK-1"))
    largo = json.loads(generate(llm, "LARGO-1"))
    vacio = json.loads(generate(llm, "VACIO-1"))

    assert valida["titulo"] == "Producto OK-1"
    # Only required attributes the supplier gave: color is missing there, peso_g not required.
    assert valida["atributos"] == {"capacidad_ml": "750", "material": "acero"}
    assert not any(char.isdigit() for char in valida["descripcion"])
    assert len(largo["titulo"]) == 90
    assert vacio["atributos"] == {}
    with pytest.raises(ValueError):
        json.loads(generate(llm, "ROTO-1"))
    assert generate(llm, "LITERAL-1") == '{"titulo": "x"}'


def test_response_has_openai_shape(llm: FakeLLM) -> None:
    response = sync_client(llm).chat.completions.create(
        model="qwen3-30b-a3b",
        messages=[{"role": "user", "content": evaluator_prompt("FORMA-1")}],
        response_format=VEREDICTO_FORMAT,
    )

    assert response.object == "chat.completion"
    assert response.model == "qwen3-30b-a3b"
    assert response.choices[0].finish_reason == "stop"
    assert response.choices[0].message.role == "assistant"
    assert response.usage is not None
    assert response.usage.total_tokens == (
        response.usage.prompt_tokens + response.usage.completion_tokens
    )
    models = sync_client(llm).models.list()
    assert len(models.data) == 1


def test_error_429_is_a_rate_limit_error_with_retry_after(llm: FakeLLM) -> None:
    llm.configure({"rules": [{"sku": "LIMITE-1", "evaluador": ["error:429", "aprobar"]}]})
    client = sync_client(llm)

    with pytest.raises(openai.RateLimitError) as caught:
        evaluate(client, "LIMITE-1")

    assert caught.value.response.headers["retry-after"] == "1"
    assert evaluate(client, "LIMITE-1")["aprobada"] is True
    assert [r["status"] for r in llm.requests(sku="LIMITE-1")] == [429, 200]


def test_down_503_then_up_without_using_script_steps(llm: FakeLLM) -> None:
    llm.configure({"rules": [{"sku": "CAIDA-1", "evaluador": ["rechazar", "aprobar"]}]})
    client = sync_client(llm)
    llm.down(30, "503")

    with pytest.raises(openai.InternalServerError) as caught:
        evaluate(client, "CAIDA-1")
    assert caught.value.status_code == 503
    assert caught.value.response.headers["retry-after"] == "1"

    llm.down(30, "close")
    with pytest.raises(openai.APIConnectionError):
        evaluate(client, "CAIDA-1")

    llm.up()
    # The outage did not consume steps: the script starts at "rechazar".
    assert evaluate(client, "CAIDA-1")["aprobada"] is False
    assert llm.stats()["by_status"] == {"503": 1, "closed": 1, "200": 1}


def test_colgar_holds_until_the_client_gives_up(llm: FakeLLM) -> None:
    llm.configure({"rules": [{"sku": "COLGADO-1", "evaluador": ["colgar", "aprobar"]}]})

    with pytest.raises(openai.APITimeoutError):
        evaluate(sync_client(llm, timeout=0.5), "COLGADO-1")
    assert evaluate(sync_client(llm), "COLGADO-1")["aprobada"] is True

    records = llm.wait_for_requests(2)
    assert [r["outcome"] for r in records] == ["client_gone", "answered"]
    assert llm.stats()["hanging"] == 0


def test_cerrar_drops_the_connection(llm: FakeLLM) -> None:
    llm.configure({"rules": [{"sku": "CERRADO-1", "generador": ["cerrar", "valida"]}]})

    with pytest.raises(openai.APIConnectionError):
        generate(llm, "CERRADO-1")
    assert json.loads(generate(llm, "CERRADO-1"))["titulo"] == "Producto CERRADO-1"


def test_streaming_and_unknown_agent_are_refused(llm: FakeLLM) -> None:
    client = sync_client(llm)

    with pytest.raises(openai.BadRequestError, match="streaming"):
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": evaluator_prompt("S-1")}],
            response_format=VEREDICTO_FORMAT,
            stream=True,
        )
    with pytest.raises(openai.BadRequestError, match="cannot tell the agent"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hola"}])


def test_bad_config_is_refused_and_the_old_one_kept(llm: FakeLLM) -> None:
    with pytest.raises(FakeLLMError, match="unknown action"):
        llm.configure({"default": {"generador": ["aprobar"]}})

    assert llm.config()["default"] == {"generador": ["valida"], "evaluador": ["aprobar"]}


async def test_max_parallel_queues_the_rest(llm: FakeLLM) -> None:
    await llm.aconfigure({"max_parallel": 2, "latency_ms": 300})
    client = openai.AsyncOpenAI(base_url=llm.url, api_key="x", max_retries=0, timeout=10)

    async def one(sku: str) -> None:
        await client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": generator_prompt(sku)}],
            response_format=FICHA_FORMAT,
        )

    started = time.monotonic()
    await asyncio.gather(*(one(f"PAR-{i}") for i in range(6)))
    elapsed = time.monotonic() - started
    await client.close()

    stats = await llm.astats()
    assert elapsed >= 0.85  # three waves of two, 300 ms each
    assert stats["peak_in_flight"] == 2
    assert stats["by_agent"] == {"generador": 6}
    assert stats["in_flight"] == 0
    # each record says how long it held a slot, apart from its wait in the queue
    records = await llm.arequests(bodies=False)
    assert all(0.29 <= r["slot_ms"] / 1000 < 0.6 for r in records), records
    assert max(r["duration_ms"] - r["slot_ms"] for r in records) >= 550  # the third wave


@pytest.mark.lento
def test_records_and_counters_survive_restart(tmp_path: Path) -> None:
    record_path = tmp_path / "requests.jsonl"
    script = {"rules": [{"sku": "R-1", "evaluador": ["rechazar", "rechazar", "aprobar"]}]}
    with FakeLLM(script, record_path=record_path) as llm:
        url = llm.url
        first = evaluate(sync_client(llm), "R-1")

        llm.kill()
        llm.start()
        assert llm.url == url
        second = evaluate(sync_client(llm), "R-1")

        llm.restart()
        third = evaluate(sync_client(llm), "R-1")
        records = llm.requests(sku="R-1")

    assert [first["aprobada"], second["aprobada"], third["aprobada"]] == [False, False, True]
    assert [r["step"] for r in records] == [0, 1, 2]
    lines = record_path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0, 1, 2]


def _evaluate_with_logprobs(llm: FakeLLM, sku: str, top: int = 5) -> Any:
    return sync_client(llm).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": evaluator_prompt(sku)}],
        response_format=VEREDICTO_FORMAT,
        logprobs=True,
        top_logprobs=top,
    )


def test_logprobs_only_when_asked_and_tokens_rebuild_the_answer(llm: FakeLLM) -> None:
    plain = sync_client(llm).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": evaluator_prompt("LP-1")}],
        response_format=VEREDICTO_FORMAT,
    )
    assert plain.choices[0].logprobs is None

    response = _evaluate_with_logprobs(llm, "LP-1", top=2)
    content = response.choices[0].message.content
    logprobs = response.choices[0].logprobs
    assert content is not None and logprobs is not None and logprobs.content
    assert "".join(t.token for t in logprobs.content) == content
    assert all(bytes(t.bytes or []) == t.token.encode() for t in logprobs.content)
    assert all(len(t.top_logprobs) == 2 for t in logprobs.content)  # as many as asked, always
    (verdict,) = [t for t in logprobs.content if t.token.strip() == "true"]
    assert verdict.token == " true"  # with its leading space, as a BPE tokenizer cuts it
    assert [a.token for a in verdict.top_logprobs] == [" true", " false"]
    assert math.exp(verdict.logprob) == pytest.approx(0.95 * 0.98)


def test_scripted_score_per_step_and_null_gives_no_logprobs(llm: FakeLLM) -> None:
    llm.configure(
        {
            "rules": [
                {
                    "sku": "LP-2",
                    "evaluador": [
                        {"accion": "aprobar", "puntuacion": 0.83},
                        {"accion": "rechazar", "puntuacion": 0.6},
                        {"accion": "aprobar", "puntuacion": None},
                    ],
                }
            ]
        }
    )
    scores = []
    for _ in range(2):
        response = _evaluate_with_logprobs(llm, "LP-2", top=10)
        assert response.choices[0].logprobs is not None
        assert {len(t.top_logprobs) for t in response.choices[0].logprobs.content or []} == {10}
        scores.append(puntuacion_veredicto(response.choices[0].logprobs.model_dump()))
    assert scores == pytest.approx([0.83, 0.6])
    third = _evaluate_with_logprobs(llm, "LP-2")
    assert json.loads(third.choices[0].message.content or "")["aprobada"] is True
    assert third.choices[0].logprobs is None
    recorded = [r.get("puntuacion") for r in llm.requests(sku="LP-2")]
    assert recorded == [0.83, 0.6, None]


def test_bad_score_steps_are_refused(llm: FakeLLM) -> None:
    with pytest.raises(FakeLLMError, match="puntuacion"):
        llm.configure({"default": {"evaluador": [{"accion": "aprobar", "puntuacion": 1.5}]}})
    with pytest.raises(FakeLLMError, match="evaluador"):
        llm.configure({"default": {"generador": [{"accion": "valida", "puntuacion": 0.5}]}})
    with pytest.raises(FakeLLMError, match="unknown action"):
        llm.configure({"default": {"evaluador": [{"accion": "publicar", "puntuacion": 0.5}]}})


def test_max_tokens_stops_the_answer_there_as_vllm_does(llm: FakeLLM) -> None:
    """An answer longer than ``max_tokens`` stops mid-JSON with finish_reason "length", its
    logprobs cover the tokens sent and give the verdict's score; a longer limit changes nothing."""
    llm.configure(
        {"rules": [{"sku": "MT-1", "evaluador": [{"accion": "rechazar", "puntuacion": 0.3}] * 2}]}
    )
    corta = sync_client(llm).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": evaluator_prompt("MT-1")}],
        response_format=VEREDICTO_FORMAT,
        logprobs=True,
        top_logprobs=10,
        max_tokens=6,
    )
    larga = _evaluate_with_logprobs(llm, "MT-1", top=10)
    choice, entera = corta.choices[0], larga.choices[0]
    assert choice.message.content == '{"aprobada": false'
    assert choice.finish_reason == "length" and entera.finish_reason == "stop"
    assert choice.logprobs is not None and entera.logprobs is not None
    assert len(choice.logprobs.content or []) == 6
    assert "".join(t.token for t in choice.logprobs.content or []) == choice.message.content
    assert puntuacion_veredicto(choice.logprobs.model_dump()) == pytest.approx(0.3)
    assert puntuacion_veredicto(entera.logprobs.model_dump()) == pytest.approx(0.3)
    assert (entera.message.content or "").startswith(choice.message.content)
    assert corta.usage is not None and larga.usage is not None
    assert corta.usage.completion_tokens < larga.usage.completion_tokens
