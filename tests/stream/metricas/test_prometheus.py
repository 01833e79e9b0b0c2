"""The Prometheus sensor counts what docs/metricas.md says; the HTTP server serves it."""

from __future__ import annotations

import dataclasses
import math
import re
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
from prometheus_client import generate_latest

from esquemas.constantes import DESTINO_PUBLICADAS, DESTINO_REVISION
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from grafo import LogprobsProbe, Rechazo, Resultado, ResumenIntento
from stream.candidata.metricas import SensorCandidata
from stream.metricas.prometheus import METRIC_NAMES, PrometheusSensor
from stream.serving.http import HealthServer

DOCS = Path(__file__).parents[3] / "docs" / "metricas.md"


def _intento(
    n: int, aprobada: bool, rechazos: tuple[tuple[str, str], ...] = (), invalida: bool = False
) -> ResumenIntento:
    return ResumenIntento(
        intento=n,
        aprobada=aprobada,
        rechazos=tuple(Rechazo(criterio=c, por=por) for c, por in rechazos),
        invalida=invalida,
    )


def _resultado(
    destino: str, intentos: int, resumen: tuple[ResumenIntento, ...], reentregada: bool = False
) -> Resultado:
    salida = {"event_id": "e1", "sku": "S1", "version": 1, "intentos": intentos}
    return Resultado(
        destino=destino,
        salida=salida,
        sku="S1",
        event_id="e1",
        version=1,
        intentos=intentos,
        reentregada=reentregada,
        resumen=resumen,
    )


PUBLICADA_EN_2 = _resultado(
    DESTINO_PUBLICADAS,
    2,
    (_intento(1, False, (("C01", "codigo"), ("C04", "evaluador"))), _intento(2, True)),
)
REVISADA_EN_3 = _resultado(
    DESTINO_REVISION,
    3,
    (
        _intento(1, False, (("C04", "evaluador"),)),
        _intento(2, False, (("C04", "evaluador"), ("C05", "codigo"))),
        _intento(3, False, invalida=True),
    ),
)


def _value(sensor: PrometheusSensor, name: str, **labels: str) -> float | None:
    return sensor.registry.get_sample_value(name, labels)


def _sum(sensor: PrometheusSensor, name: str) -> float:
    """Sum of every sample called ``name`` over all label sets."""
    return sum(
        s.value for family in sensor.registry.collect() for s in family.samples if s.name == name
    )


def test_outcomes_count_events_attempts_verdicts_rejections_and_invalid_output() -> None:
    sensor = PrometheusSensor(criterios_version="vtest")
    sensor.on_outcome(PUBLICADA_EN_2, 4.0)
    sensor.on_outcome(REVISADA_EN_3, 30.0)

    assert _value(sensor, "fichas_events_total", result="publicada") == 1
    assert _value(sensor, "fichas_events_total", result="revision_manual") == 1
    assert _value(sensor, "fichas_events_total", result="reentregada") == 0
    assert _value(sensor, "fichas_events_total", result="dlq") == 0
    assert _value(sensor, "fichas_attempts_total") == 5
    assert _value(sensor, "fichas_attempts_per_ficha_count") == 2
    assert _value(sensor, "fichas_attempts_per_ficha_sum") == 5
    assert _value(sensor, "fichas_attempts_per_ficha_bucket", le="1.0") == 0
    assert _value(sensor, "fichas_attempts_per_ficha_bucket", le="2.0") == 1
    assert _value(sensor, "fichas_attempts_per_ficha_bucket", le="3.0") == 2

    assert _value(sensor, "fichas_verdicts_total", attempt="1", approved="false") == 2
    assert _value(sensor, "fichas_verdicts_total", attempt="1", approved="true") == 0
    assert _value(sensor, "fichas_verdicts_total", attempt="2", approved="true") == 1
    assert _value(sensor, "fichas_verdicts_total", attempt="2", approved="false") == 1
    assert _value(sensor, "fichas_verdicts_total", attempt="3", approved="false") == 1
    assert _sum(sensor, "fichas_verdicts_total") == 5

    assert _value(sensor, "fichas_rejections_total", criterion="C01", by="codigo") == 1
    assert _value(sensor, "fichas_rejections_total", criterion="C04", by="evaluador") == 3
    assert _value(sensor, "fichas_rejections_total", criterion="C05", by="codigo") == 1
    assert _value(sensor, "fichas_rejections_total", criterion="C06", by="evaluador") == 0
    assert _sum(sensor, "fichas_rejections_total") == 5

    assert _value(sensor, "fichas_llm_errors_total", kind="invalid_output") == 1
    assert _value(sensor, "fichas_event_duration_seconds_count") == 2
    assert _value(sensor, "fichas_event_duration_seconds_sum") == 34.0


def test_a_redelivered_outcome_only_counts_as_reentregada() -> None:
    sensor = PrometheusSensor()
    for original in (PUBLICADA_EN_2, REVISADA_EN_3):
        redelivered = dataclasses.replace(original, reentregada=True)
        sensor.on_outcome(redelivered, 0.2)

    assert _value(sensor, "fichas_events_total", result="reentregada") == 2
    for result in ("publicada", "revision_manual", "dlq", "obsoleto"):
        assert _value(sensor, "fichas_events_total", result=result) == 0
    assert _value(sensor, "fichas_attempts_total") == 0
    assert _value(sensor, "fichas_attempts_per_ficha_count") == 0
    assert _sum(sensor, "fichas_verdicts_total") == 0
    assert _sum(sensor, "fichas_rejections_total") == 0
    assert _value(sensor, "fichas_llm_errors_total", kind="invalid_output") == 0


def test_criteria_the_model_invents_share_one_label() -> None:
    sensor = PrometheusSensor()
    inventado = _resultado(
        DESTINO_REVISION,
        1,
        (_intento(1, False, (("tono raro", "evaluador"), ("C99", "evaluador"))),),
    )
    sensor.on_outcome(inventado, 1.0)
    assert _value(sensor, "fichas_rejections_total", criterion="otro", by="evaluador") == 2
    assert _value(sensor, "fichas_rejections_total", criterion="C99", by="evaluador") is None


def test_sensor_hooks_and_worker_gauges() -> None:
    sensor = PrometheusSensor(criterios_version="v1-abc")
    sensor.on_node("generar", 1.5)
    sensor.on_node("publicar", 0.001)
    sensor.on_llm_call("generador", 1.5, 900, 200)
    sensor.on_llm_call("evaluador", 0.5, 1200, 40)
    sensor.on_llm_call("evaluador", 0.7, 1000, 60)
    sensor.on_llm_error("timeout")
    sensor.on_llm_error("timeout")
    sensor.on_llm_error("request")
    sensor.on_llm_paused(True)
    sensor.on_dlq()
    sensor.on_obsolete()
    sensor.on_obsolete()
    sensor.on_sample("zapatillas", "proporcion")
    sensor.on_sample("botellas", "minimo_diario")
    sensor.set_in_flight(7)
    sensor.set_lag("proveedor.cambios", 3, 42)

    assert _value(sensor, "fichas_node_duration_seconds_count", node="generar") == 1
    assert _value(sensor, "fichas_node_duration_seconds_count", node="evaluar") == 0
    assert _value(sensor, "fichas_node_duration_seconds_count", node="publicar") == 1
    assert _value(sensor, "fichas_llm_request_duration_seconds_count", agent="evaluador") == 2
    assert _value(sensor, "fichas_llm_request_duration_seconds_sum", agent="evaluador") == 1.2
    assert _value(sensor, "fichas_llm_tokens_total", agent="generador", type="prompt") == 900
    assert _value(sensor, "fichas_llm_tokens_total", agent="generador", type="completion") == 200
    assert _value(sensor, "fichas_llm_tokens_total", agent="evaluador", type="prompt") == 2200
    assert _value(sensor, "fichas_llm_tokens_total", agent="evaluador", type="completion") == 100
    assert _value(sensor, "fichas_llm_errors_total", kind="timeout") == 2
    assert _value(sensor, "fichas_llm_errors_total", kind="request") == 1
    assert _value(sensor, "fichas_llm_errors_total", kind="connection") == 0
    assert _value(sensor, "fichas_llm_paused") == 1
    assert _value(sensor, "fichas_events_total", result="dlq") == 1
    assert _value(sensor, "fichas_events_total", result="obsoleto") == 2
    assert _value(sensor, "fichas_sample_total") == 2
    assert _value(sensor, "fichas_muestra_minima_total", family="botellas") == 1
    assert _value(sensor, "fichas_muestra_minima_total", family="zapatillas") is None
    assert _value(sensor, "fichas_in_flight") == 7
    assert _value(sensor, "fichas_consumer_lag", topic="proveedor.cambios", partition="3") == 42
    assert _value(sensor, "fichas_criteria_info", version="v1-abc") == 1

    sensor.on_llm_paused(False)
    sensor.set_oldest_age("proveedor.cambios", 3, 12.5)
    assert (
        _value(sensor, "fichas_oldest_event_age_seconds", topic="proveedor.cambios", partition="3")
        == 12.5
    )
    sensor.clear_lag("proveedor.cambios", 3)
    assert (
        _value(sensor, "fichas_oldest_event_age_seconds", topic="proveedor.cambios", partition="3")
        is None
    )
    sensor.clear_lag("proveedor.cambios", 9)  # never set: no error
    assert _value(sensor, "fichas_llm_paused") == 0
    assert _value(sensor, "fichas_consumer_lag", topic="proveedor.cambios", partition="3") is None


def test_known_label_sets_start_at_zero_and_process_metrics_are_exported() -> None:
    text = generate_latest(PrometheusSensor(max_intentos=3).registry).decode()
    for line in (
        'fichas_events_total{result="obsoleto"} 0.0',
        'fichas_llm_errors_total{kind="rate_limit"} 0.0',
        'fichas_llm_tokens_total{agent="evaluador",type="completion"} 0.0',
        'fichas_verdicts_total{approved="true",attempt="3"} 0.0',
        'fichas_rejections_total{by="codigo",criterion="C05"} 0.0',
        'fichas_rejections_total{by="evaluador",criterion="C05"} 0.0',
        "fichas_llm_paused 0.0",
    ):
        assert line in text, line
    assert 'fichas_rejections_total{by="evaluador",criterion="C01"}' not in text
    assert "python_info" in text
    assert "process_" in text


def test_hooks_never_raise_on_a_malformed_outcome() -> None:
    sensor = PrometheusSensor()
    roto = _resultado(DESTINO_PUBLICADAS, 1, (ResumenIntento(1, False, (None,)),))  # type: ignore[arg-type]
    sensor.on_outcome(roto, 1.0)  # logged, not raised
    sensor.on_node("generar", "no es un número")  # type: ignore[arg-type]


def test_sensors_do_not_share_a_registry() -> None:
    a, b = PrometheusSensor(), PrometheusSensor()
    a.on_dlq()
    assert _value(a, "fichas_events_total", result="dlq") == 1
    assert _value(b, "fichas_events_total", result="dlq") == 0


def _documented() -> dict[str, tuple[str, frozenset[str]]]:
    """name -> (type, labels) of the worker's rows of docs/metricas.md (| `fichas_...)."""
    rows: dict[str, tuple[str, frozenset[str]]] = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\|\s*`(fichas_[a-z_]+)`\s*\|\s*(\w+)\s*\|\s*([^|]*)\|", line)
        # ``fichas_revision_*`` are the review app's, on its own /metrics (tests/revision).
        if match and not match.group(1).startswith("fichas_revision_"):
            name, kind, labels = match.groups()
            names = {x.strip() for x in labels.split(",")} - {"-", ""}
            rows[name] = (kind, frozenset(names))
    return rows


def _exported(sensor: PrometheusSensor) -> dict[str, tuple[str, frozenset[str]]]:
    """name as in /metrics -> (type, labels) from the sensor's own registry."""
    suffix = {"counter": "_total", "info": "_info"}
    exported: dict[str, tuple[str, frozenset[str]]] = {}
    for family in sensor.registry.collect():
        if not family.name.startswith("fichas_"):
            continue
        labels = frozenset(k for s in family.samples for k in s.labels) - {"le"}
        kind = "gauge" if family.type == "info" else family.type
        exported[family.name + suffix.get(family.type, "")] = (kind, labels)
    return exported


def test_metric_names_types_and_labels_match_docs() -> None:
    documented = _documented()
    assert set(documented) == METRIC_NAMES
    sensor = PrometheusSensor()
    sensor.set_lag("proveedor.cambios", 0, 0)  # the per-partition families have no
    sensor.set_oldest_age("proveedor.cambios", 0, 0)  # pre-set series
    sensor.on_gate_mode("certificada", "0123456789abcdef", ("zapatillas",))
    sensor.on_key("fedcba9876543210", "0123456789abcdef", "root=pesos", cambio=False)
    # the candidate loop's series, labelled once a candidate exists (stream.candidata.metricas)
    candidata = SensorCandidata(sensor.series)
    candidata.on_key("", "00112233aabbccdd", "root=pesos", cambio=False)
    assert _exported(sensor) == documented


async def test_http_server_serves_metrics_and_probes() -> None:
    sensor = PrometheusSensor()
    sensor.set_lag("proveedor.cambios", 0, 5)
    estado = {"ready": False}

    def ready() -> tuple[bool, str]:
        if estado.get("boom"):
            raise RuntimeError("consumer gone")
        return (True, "ok") if estado["ready"] else (False, "partitions not assigned yet")

    server = HealthServer(sensor.registry, ready, port=0, host="127.0.0.1")
    await server.start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        assert server.port != 0
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/metrics") as response:
                assert response.status == 200
                assert response.headers["Content-Type"].startswith("text/plain")
                text = await response.text()
            for name in METRIC_NAMES:
                assert name in text, name
            assert 'fichas_consumer_lag{partition="0",topic="proveedor.cambios"} 5.0' in text

            headers = {"Accept": "application/openmetrics-text; version=1.0.0"}
            async with http.get(f"{base}/metrics", headers=headers) as response:
                assert response.headers["Content-Type"].startswith("application/openmetrics")

            async with http.get(f"{base}/health/live") as response:
                assert response.status == 200

            async with http.get(f"{base}/health/ready") as response:
                assert response.status == 503
                assert (await response.json())["reason"] == "partitions not assigned yet"
            estado["ready"] = True
            async with http.get(f"{base}/health/ready") as response:
                assert response.status == 200
            estado["boom"] = True
            async with http.get(f"{base}/health/ready") as response:
                assert response.status == 503
                assert "consumer gone" in (await response.json())["reason"]
    finally:
        await server.stop()
        await server.stop()
    async with aiohttp.ClientSession() as http:
        try:
            async with http.get(f"{base}/health/live") as response:
                raise AssertionError(f"still serving after stop: {response.status}")
        except aiohttp.ClientConnectionError:
            pass


def _estado_puerta(abierta: bool, cota: float | None = None) -> EstadoPuerta:
    clave = ClavePuerta(
        modelo="m",
        prompt_evaluador_sha256="0" * 64,
        criterios_version="v",
        modo_evaluador="veredicto",
    )
    return EstadoPuerta(
        familia="zapatillas",
        clave=clave,
        abierta=abierta,
        umbral=0.75 if abierta else None,
        objetivo=0.9,
        delta=0.05,
        n=40,
        k=1,
        origen_datos="test",
        motivo="certificada" if abierta else "cota_en_linea_bajo_objetivo",
        cota_inferior=cota,
        actualizada_en=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_gate_series_start_closed_and_follow_the_gate_in_force() -> None:
    sensor = PrometheusSensor()
    sensor.on_gate_mode("certificada", "k1", ("zapatillas", "moviles"))
    gate = {"family": "zapatillas", "key": "k1"}
    assert _value(sensor, "fichas_puerta_abierta", **gate) == 0
    assert math.isnan(_value(sensor, "fichas_puerta_umbral", **gate) or 0.0)
    assert _value(sensor, "fichas_puerta_n", family="moviles", key="k1") == 0
    assert _value(sensor, "fichas_sin_garantia_total", **gate) == 0
    assert _value(sensor, "fichas_puerta_sin_certificar") == 0
    sensor.set_gate("zapatillas", _estado_puerta(True, cota=0.93))
    assert _value(sensor, "fichas_puerta_abierta", **gate) == 1
    assert _value(sensor, "fichas_puerta_umbral", **gate) == 0.75
    assert (
        _value(sensor, "fichas_puerta_n", **gate),
        _value(sensor, "fichas_puerta_k", **gate),
    ) == (
        40,
        1,
    )
    assert _value(sensor, "fichas_puerta_cota_inferior", **gate) == 0.93
    sensor.set_gate("zapatillas", _estado_puerta(False))  # closed by the online bound
    assert _value(sensor, "fichas_puerta_abierta", **gate) == 0
    assert math.isnan(_value(sensor, "fichas_puerta_umbral", **gate) or 0.0)
    assert math.isnan(_value(sensor, "fichas_puerta_cota_inferior", **gate) or 0.0)
    assert _value(sensor, "fichas_puerta_n", **gate) == 40


def test_sin_garantia_counts_first_outcomes_held_back_by_the_gate_only() -> None:
    sensor = PrometheusSensor()
    sensor.on_gate_mode("certificada", "k1", ("zapatillas",))

    def revision(motivo: str, reentregada: bool = False) -> Resultado:
        r = _resultado(DESTINO_REVISION, 1, (_intento(1, False),), reentregada)
        return dataclasses.replace(r, salida=r.salida | {"motivo": motivo, "familia": "zapatillas"})

    sensor.on_outcome(revision("sin_garantia"), 1.0)
    sensor.on_outcome(revision("sin_garantia", reentregada=True), 1.0)
    sensor.on_outcome(revision("rechazada"), 1.0)
    assert _value(sensor, "fichas_sin_garantia_total", family="zapatillas", key="k1") == 1


def test_veredicto_mode_flags_uncertified_publication() -> None:
    sensor = PrometheusSensor()
    sensor.on_gate_mode("veredicto", "k1", ("zapatillas",))
    assert _value(sensor, "fichas_puerta_sin_certificar") == 1
    assert _value(sensor, "fichas_puerta_abierta", family="zapatillas", key="k1") is None


def test_evaluator_scores_count_present_and_missing_per_family_once() -> None:
    sensor = PrometheusSensor()
    sensor.on_gate_mode("veredicto", "k1", ("zapatillas", "moviles"))  # any mode
    for familia in ("zapatillas", "moviles"):
        for score in ("present", "missing"):
            labels = {"family": familia, "score": score}
            assert _value(sensor, "fichas_evaluator_scores_total", **labels) == 0

    def con(familia: str, *intentos: ResumenIntento, reentregada: bool = False) -> Resultado:
        r = _resultado(DESTINO_REVISION, len(intentos), intentos, reentregada)
        return dataclasses.replace(r, salida=r.salida | {"familia": familia})

    puntuado = dataclasses.replace(_intento(1, False), puntuacion=0.4)
    sin = _intento(2, False)  # no score: the server gave no usable logprobs
    invalido = _intento(3, False, invalida=True)  # no evaluator answer at all: neither
    sensor.on_outcome(con("zapatillas", puntuado, sin, invalido), 1.0)
    sensor.on_outcome(con("zapatillas", puntuado, sin, reentregada=True), 1.0)  # counted once
    sensor.on_outcome(con("moviles", sin), 1.0)
    scores = "fichas_evaluator_scores_total"
    assert _value(sensor, scores, family="zapatillas", score="present") == 1
    assert _value(sensor, scores, family="zapatillas", score="missing") == 1
    assert _value(sensor, scores, family="moviles", score="missing") == 1


def test_logprobs_gauge_is_unknown_until_the_probe_answers() -> None:
    sensor = PrometheusSensor()
    assert math.isnan(_value(sensor, "fichas_llm_logprobs") or 0.0)
    sensor.on_logprobs_probe(LogprobsProbe("missing"))
    assert _value(sensor, "fichas_llm_logprobs") == 0
    sensor.on_logprobs_probe(LogprobsProbe("refused"))
    assert _value(sensor, "fichas_llm_logprobs") == 0
    sensor.on_logprobs_probe(LogprobsProbe("present", 0.9))
    assert _value(sensor, "fichas_llm_logprobs") == 1
    sensor.on_logprobs_probe(LogprobsProbe("no_answer"))
    assert math.isnan(_value(sensor, "fichas_llm_logprobs") or 0.0)


def test_outcomes_per_family_and_key_count_first_outcomes_only() -> None:
    sensor = PrometheusSensor()
    sensor.on_gate_mode("certificada", "k1", ("zapatillas", "moviles"))
    assert (
        _value(sensor, "fichas_outcomes_total", family="moviles", key="k1", result="publicada") == 0
    )

    def con(destino: str, familia: str, reentregada: bool = False) -> Resultado:
        r = _resultado(destino, 1, (_intento(1, destino == DESTINO_PUBLICADAS),), reentregada)
        return dataclasses.replace(r, salida=r.salida | {"familia": familia})

    sensor.on_outcome(con(DESTINO_PUBLICADAS, "zapatillas"), 1.0)
    sensor.on_outcome(con(DESTINO_REVISION, "zapatillas"), 1.0)
    sensor.on_outcome(con(DESTINO_REVISION, "zapatillas", reentregada=True), 1.0)
    sensor.on_outcome(con(DESTINO_REVISION, "moviles"), 1.0)
    zapatillas = {"family": "zapatillas", "key": "k1"}
    assert _value(sensor, "fichas_outcomes_total", **zapatillas, result="publicada") == 1
    assert _value(sensor, "fichas_outcomes_total", **zapatillas, result="revision_manual") == 1
    moviles = {"family": "moviles", "key": "k1", "result": "revision_manual"}
    assert _value(sensor, "fichas_outcomes_total", **moviles) == 1


def test_un_cambio_de_clave_deja_solo_las_series_de_la_nueva() -> None:
    """The served model changed under a running worker: the gate gauges follow the new key
    (the old key's are dropped, not left at their last value), the counters stay, and the
    change is counted once; the first reading is not a change."""
    sensor = PrometheusSensor()
    sensor.on_key("", "aaaaaaaaaaaaaaaa", "root=viejos", cambio=False)
    sensor.on_gate_mode("certificada", "aaaaaaaaaaaaaaaa", ("zapatillas",))
    sensor.set_gate_held("zapatillas", True)
    sensor.on_gate_mode("certificada", "bbbbbbbbbbbbbbbb", ("zapatillas",))
    sensor.on_key("aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "root=nuevos", cambio=True)
    sensor.set_gates_suspended(False)
    valores = {
        (m.name, tuple(sorted(m.labels.items()))): m.value
        for familia in sensor.registry.collect()
        for m in familia.samples
    }
    viejas = [k for k in valores if ("key", "aaaaaaaaaaaaaaaa") in k[1] and "puerta" in k[0]]
    assert viejas == []
    nueva = (("family", "zapatillas"), ("key", "bbbbbbbbbbbbbbbb"))
    assert valores[("fichas_puerta_retenida", nueva)] == 0
    assert valores[("fichas_puerta_abierta", nueva)] == 0
    info = [k for k in valores if k[0] == "fichas_modelo_servido_info"]
    assert info == [
        (
            "fichas_modelo_servido_info",
            (("key", "bbbbbbbbbbbbbbbb"), ("modelo_servido", "root=nuevos")),
        )
    ]
    assert valores[("fichas_modelo_servido_cambios_total", ())] == 1
    assert valores[("fichas_puerta_suspendida", ())] == 0
