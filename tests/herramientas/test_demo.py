"""The demo's pure parts: the sample feed, the completion rule, the summary, the live view.

No broker and no model: outcome records are built by hand in the shape the worker writes them.
The end-to-end run with the real model is ``tests/herramientas/test_demo_smoke.py``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest

from criterios import familias_conocidas
from criterios.tablas import atributos_obligatorios
from esquemas import EventoCambio
from estadistica import percentile
from harness.estados_puerta import clave_fake
from harness.estados_puerta import estado as estado_puerta
from herramientas.demo import avance, kafka, principal, resumen, servicios, vista
from herramientas.demo.avance import (
    DLQ,
    OBSOLETO,
    PENDING,
    PUBLICADA,
    REVISION,
    FeedLine,
    Progress,
)
from herramientas.demo.estados_puerta import lineas_puerta
from herramientas.demo.vista import LiveView
from herramientas.informe import deduplicar, read_jsonl
from infra.config import Settings
from stream.metricas.prometheus import PrometheusSensor

ENTRADA = "proveedor.cambios.demo-x"
TOPICS = {
    "fichas.publicadas.demo-x": "fichas.publicadas",
    "fichas.revision_manual.demo-x": "fichas.revision_manual",
    "proveedor.cambios.dlq.demo-x": "dlq",
}


def _evento(sku: str, version: int, familia: str = "botellas") -> EventoCambio:
    return EventoCambio.model_validate(
        {
            "event_id": f"{sku}-v{version}",
            "sku": sku,
            "version": version,
            "proveedor": "P",
            "familia": familia,
            "ocurrido_en": "2026-11-29T10:00:00Z",
            "ficha_proveedor": {"titulo": "t", "descripcion": "d"},
        }
    )


def _line(number: int, sku: str, version: int | None) -> FeedLine:
    evento = _evento(sku, version) if version is not None else None
    raw = evento.model_dump_json().encode() if evento else b"{broken"
    return FeedLine(number, raw, sku.encode() if evento else None, evento, None)


def _publicada(sku: str, version: int, intentos: int) -> bytes:
    return json.dumps(
        {"event_id": f"{sku}-v{version}", "sku": sku, "version": version, "intentos": intentos}
    ).encode()


def _revision(sku: str, version: int, aprobadas: list[bool]) -> bytes:
    historial = [
        {
            "intento": n,
            "ficha": None,
            "veredicto": {"aprobada": a, "problemas": [] if a else [{"criterio": "C04"}]},
        }
        for n, a in enumerate(aprobadas, start=1)
    ]
    return json.dumps(
        {
            "event_id": f"{sku}-v{version}",
            "sku": sku,
            "version": version,
            "intentos": len(aprobadas),
            "motivo": "rechazada",
            "historial": historial,
        }
    ).encode()


def _dlq(partition: int, offset: int, topic: str = ENTRADA) -> bytes:
    return json.dumps(
        {
            "error": {"codigo": "json_invalido", "mensaje": "x"},
            "payload": "{broken",
            "origen": {"topic": topic, "particion": partition, "offset": offset},
        }
    ).encode()


@pytest.fixture
def progress() -> Progress:
    """A v1 and v2 of one SKU, another SKU, and a broken line, produced at t = 1000 ms."""
    lines = [_line(1, "A", 1), _line(2, "A", 2), _line(3, "B", 1), _line(4, "X", None)]
    p = Progress(lines, ENTRADA, TOPICS)
    for offset, line in enumerate(lines):
        p.produced(line, 0, offset, 1000)
    return p


# -- the sample feed ------------------------------------------------------------------------


def test_sample_feed_has_the_mess_the_issue_asks_for() -> None:
    lines = avance.read_feed(principal.DEFAULT_FEED)
    validos = [line.evento for line in lines if line.evento is not None]
    invalidos = [line for line in lines if line.evento is None]
    assert len(lines) >= 12
    assert {e.familia for e in validos} == set(familias_conocidas())
    assert {e.ficha_proveedor.idioma for e in validos} >= {"es", "en"}
    assert invalidos, "at least one message must go to the DLQ"
    assert any(line.key is None for line in invalidos), "a line with no readable SKU"
    versions: dict[str, list[int]] = {}
    for e in validos:
        versions.setdefault(e.sku, []).append(e.version)
    assert any(len(v) > 1 for v in versions.values()), "two versions of one SKU"
    assert all(v == sorted(v) for v in versions.values()), "versions in feed order"
    assert any(e.cifras for e in validos)
    assert any(
        not set(atributos_obligatorios(e.familia)) <= set(e.ficha_proveedor.atributos)
        for e in validos
    ), "a required attribute missing from the supplier's attributes"
    textos = [e.ficha_proveedor.titulo + " " + e.ficha_proveedor.descripcion for e in validos]
    assert any("€" in t or "$" in t for t in textos), "a price in the text"
    assert any(sum(w.isupper() and len(w) > 3 for w in t.split()) >= 3 for t in textos)
    for line in lines:
        if line.evento is not None:
            assert line.key == line.evento.sku.encode()
        assert len(line.raw) < 1000, "short lines: the CPU model reads ~80 tokens/s"


# -- completion ---------------------------------------------------------------------------


def test_run_is_complete_only_when_every_line_has_its_fate(progress: Progress) -> None:
    a1, a2, b1, roto = progress.lines
    assert not progress.complete()
    assert progress.record("fichas.publicadas.demo-x", _publicada("A", 2, 1), 5000) is a2
    # v1 has no outcome but a newer version has one: obsolete, never waited for.
    assert progress.state(a1) == OBSOLETO
    assert progress.state(b1) == PENDING
    assert progress.record("proveedor.cambios.dlq.demo-x", _dlq(0, 3), 1500) is roto
    assert progress.state(roto) == DLQ
    assert not progress.complete()
    assert progress.record("fichas.revision_manual.demo-x", _revision("B", 1, [False]), 9000)
    assert progress.complete()
    assert [progress.state(line) for line in progress.lines] == [
        OBSOLETO,
        PUBLICADA,
        REVISION,
        DLQ,
    ]


def test_newer_version_in_flight_does_not_make_the_older_obsolete(progress: Progress) -> None:
    a1, a2, _, _ = progress.lines
    assert progress.state(a1) == PENDING  # v2 exists in the feed but has no outcome yet
    progress.record("fichas.publicadas.demo-x", _publicada("A", 1, 1), 3000)
    progress.record("fichas.publicadas.demo-x", _publicada("A", 2, 1), 4000)
    assert (progress.state(a1), progress.state(a2)) == (PUBLICADA, PUBLICADA)


def test_late_outcome_of_an_obsolete_looking_line_wins(progress: Progress) -> None:
    a1, _, _, _ = progress.lines
    progress.record("fichas.publicadas.demo-x", _publicada("A", 2, 1), 5000)
    assert progress.state(a1) == OBSOLETO
    # Read from the other topic after v2 (topics are read in parallel): it did finish.
    progress.record("fichas.revision_manual.demo-x", _revision("A", 1, [False]), 4000)
    assert progress.state(a1) == REVISION


def test_duplicates_and_foreign_records_are_ignored(progress: Progress) -> None:
    assert progress.record("fichas.publicadas.demo-x", _publicada("B", 1, 1), 2000)
    assert progress.record("fichas.publicadas.demo-x", _publicada("B", 1, 1), 2500) is None
    assert progress.duplicates == 1
    assert progress.lines[2].outcome_ms == 2000  # the first one counts
    assert progress.record("fichas.publicadas.demo-x", _publicada("Z", 1, 1), 2000) is None
    assert progress.record("proveedor.cambios.dlq.demo-x", _dlq(0, 3, "other"), 2000) is None
    assert progress.record("proveedor.cambios.dlq.demo-x", _dlq(1, 3), 2000) is None
    assert progress.record("proveedor.cambios.dlq.demo-x", b"not json", 2000) is None
    assert progress.record("elsewhere", _publicada("B", 1, 1), 2000) is None
    assert progress.unmatched == 5


# -- summary -------------------------------------------------------------------------------


def _finish(progress: Progress) -> None:
    progress.record("fichas.publicadas.demo-x", _publicada("A", 2, 2), 11_000)
    progress.record("fichas.revision_manual.demo-x", _revision("B", 1, [False, False]), 21_000)
    progress.record("proveedor.cambios.dlq.demo-x", _dlq(0, 3), 1_200)


def test_summary_numbers(progress: Progress) -> None:
    _finish(progress)
    summary = resumen.summarize(progress, max_intentos=2)
    assert summary.counts == {PUBLICADA: 1, REVISION: 1, DLQ: 1, OBSOLETO: 1}
    assert summary.pending == 0
    # A published at attempt 2 reached 1 and 2; B reached 1 and 2, approved at neither.
    tasas = [(t.intento, t.llegaron, t.aprobadas) for t in summary.informe.por_intento]
    assert tasas == [(1, 2, 0), (2, 2, 1)]
    assert summary.informe.rechazos == {"C04": 2}
    # Latency of fichas only (not DLQ, not obsolete): 10 s and 20 s after produce.
    assert sorted(summary.latencies_ms) == [10_000, 20_000]
    assert (summary.p50_ms, summary.p95_ms) == (10_000, 20_000)
    text = resumen.render_summary(summary, ["topic-a (publicada)", "salida/demo-x.jsonl"])
    assert "publicadas 1   revisión manual 1   DLQ 1   obsoletas 1" in text
    assert "intento 2: 1/2 aprobadas (50%)" in text
    assert "p50 10.0 s, p95 20.0 s (n=2)" in text
    assert "salida/demo-x.jsonl" in text


def test_summary_of_an_unfinished_run_says_so(progress: Progress) -> None:
    summary = resumen.summarize(progress)
    assert summary.pending == 4
    assert summary.p50_ms is None
    text = resumen.render_summary(summary, [])
    assert "sin terminar 4" in text and "(ninguna ficha terminada)" in text


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 0.5) is None
    assert percentile([7], 0.95) == 7
    values = list(range(1, 21))  # 1..20
    assert percentile(values, 0.50) == 10
    assert percentile(values, 0.95) == 19
    assert percentile(reversed(values), 1.0) == 20


def test_outcomes_file_is_what_fichas_procesar_writes(progress: Progress, tmp_path: Path) -> None:
    _finish(progress)
    path = tmp_path / "salida" / "demo-x.jsonl"
    kafka.write_outcomes(progress, path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["destino"] for r in rows] == ["fichas.publicadas", "fichas.revision_manual", "dlq"]
    assert all(set(r) == {"destino", "evento"} for r in rows)
    with path.open() as handle:  # and `fichas informe` reads it
        salidas, duplicadas, ignoradas = deduplicar(read_jsonl(handle))
    assert ([d for d, _ in salidas], duplicadas, ignoradas) == ([r["destino"] for r in rows], 0, 0)


# -- live view ------------------------------------------------------------------------------


def test_rows_show_sku_version_attempts_fate_and_time(progress: Progress) -> None:
    progress.record("fichas.publicadas.demo-x", _publicada("A", 2, 2), 13_500)
    rows = vista.render_rows(progress, now_ms=61_000)
    assert rows[0].split() == ["#", "SKU", "versión", "intentos", "destino", "tiempo"]
    assert rows[1].split() == ["1", "A", "1", "-", OBSOLETO, "-"]
    assert rows[2].split() == ["2", "A", "2", "2", PUBLICADA, "12.5", "s"]
    assert rows[3].split() == ["3", "B", "1", "-", PENDING, "60", "s"]  # still running
    assert rows[4].split() == ["4", "-", "-", "-", PENDING, "60", "s"]


def test_pipe_gets_one_line_per_change(progress: Progress) -> None:
    out = io.StringIO()
    view = LiveView(out, "x", tty=False)
    view.update(progress, 2000)
    assert out.getvalue() == ""
    progress.record("fichas.publicadas.demo-x", _publicada("A", 2, 1), 4000)
    view.update(progress, 5000)
    view.update(progress, 6000)  # nothing new: nothing printed
    assert out.getvalue().splitlines() == [
        f"línea  1 A v1: {OBSOLETO}",
        f"línea  2 A v2: {PUBLICADA} intentos 1 en 3.0 s",
    ]
    assert "\x1b" not in out.getvalue()


def test_terminal_redraws_the_table_in_place(progress: Progress) -> None:
    out = io.StringIO()
    view = LiveView(out, "x", tty=True)
    view.update(progress, 2000)
    first = out.getvalue()
    assert first.startswith("\x1b[J") and first.count("\n") == 6  # header + titles + 4 rows
    view.update(progress, 3000)
    second = out.getvalue()[len(first) :]
    assert second.startswith("\x1b[6F\x1b[J")  # back to the top of the table, clear, redraw
    progress.record("proveedor.cambios.dlq.demo-x", _dlq(0, 3), 2500)
    view.update(progress, 4000)
    assert f"\x1b[31m{DLQ}\x1b[0m" in out.getvalue()


# -- wiring ---------------------------------------------------------------------------------


def test_worker_env_isolates_the_run_and_tunes_for_the_cpu_model(tmp_path: Path) -> None:
    topics = servicios.demo_topics(Settings(), "r1")
    assert topics["FICHAS_TOPIC_ENTRADA"] == "proveedor.cambios.demo-r1"
    assert topics["FICHAS_TOPIC_DLQ"] == "proveedor.cambios.dlq.demo-r1"
    env = _worker_env(
        {"PATH": "/bin", "FICHAS_CONCURRENCIA": "64", "FICHAS_LLM_API_KEY": "k"}, tmp_path
    )
    settings = Settings(**{k[len("FICHAS_") :].lower(): v for k, v in _fichas(env).items()})
    assert settings.topic_publicadas == "fichas.publicadas.demo-r1"
    assert settings.grupo == "fichas-demo-r1"
    assert settings.concurrencia == 2  # the demo's, not the caller's
    assert settings.llm_api_key == "k"  # the caller's own settings pass through
    assert (settings.llm_modelo, settings.llm_repeat_penalty) == ("local", 1.1)
    assert settings.llm_timeout_s == 300 and settings.max_intentos == 3
    assert settings.data_dir == tmp_path and env["PATH"] == "/bin"
    assert settings.evaluador == "lector"  # the measured default (docs/calidad.md, issue 48)
    propio = _worker_env({"FICHAS_EVALUADOR": "citas"}, tmp_path)
    assert propio["FICHAS_EVALUADOR"] == "citas"  # the caller's choice wins


def _worker_env(env: dict[str, str], data_dir: Path) -> dict[str, str]:
    """The demo's worker environment for run ``r1`` over ``env``."""
    return servicios.worker_env(
        env,
        brokers="127.0.0.1:1",
        llm_url="http://127.0.0.1:2/v1",
        llm_model="local",
        topics=servicios.demo_topics(Settings(), "r1"),
        run_id="r1",
        data_dir=data_dir,
        metrics_port=3,
        max_intentos=3,
    )


def _fichas(env: dict[str, str]) -> dict[str, Any]:
    return {k: v for k, v in env.items() if k.startswith("FICHAS_")}


def test_local_model_gets_both_cores_only_when_they_are_idle() -> None:
    assert servicios.choose_threads(0.1, 2) == 2
    assert servicios.choose_threads(0.9, 2) == 1
    assert servicios.choose_threads(0.0, 1) == 1
    assert 0 <= servicios.cpu_busy(0.05) <= 64


def test_interrupt_stops_what_was_started(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    stopped: list[str] = []

    def interrupted(*_: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(principal, "run", interrupted)
    monkeypatch.setattr(servicios.Services, "stop", lambda self: stopped.append("stop"))
    assert principal.main(["--timeout", "1"]) == 130
    assert stopped == ["stop"]


def test_summary_says_per_family_whether_the_gate_is_open(progress: Progress) -> None:
    sensor = PrometheusSensor()
    sensor.on_gate_mode("certificada", "k1", ("zapatillas", "moviles"))
    sensor.set_gate("zapatillas", estado_puerta(clave_fake(), umbral=0.8125, n=61, k=2))
    lineas = lineas_puerta(generate_latest(sensor.registry).decode(), ["zapatillas", "moviles"])
    assert lineas[1:] == [
        "    moviles: cerrada (n 0, k 0); todo a revisión",
        "    zapatillas: abierta, λ 0.8125, n 61, k 2",
    ]
    text = resumen.render_summary(resumen.summarize(progress), [], lineas)
    assert "zapatillas: abierta, λ 0.8125, n 61, k 2" in text
    sensor.set_gate("zapatillas", None)  # a person holds it: closed whatever its state
    sensor.set_gate_held("zapatillas", True)
    lineas = lineas_puerta(generate_latest(sensor.registry).decode(), ["zapatillas"])
    assert lineas[1:] == ["    zapatillas: retenida por una persona; todo a revisión"]
    veredicto = PrometheusSensor()
    veredicto.on_gate_mode("veredicto", "k1", ("zapatillas",))
    texto = generate_latest(veredicto.registry).decode()
    assert "SIN certificar" in lineas_puerta(texto, ["zapatillas"])[0]


def test_el_resumen_cuenta_los_tokens_del_llm() -> None:
    """The summary line the retries' cost is read from: tokens per agent, total, per ficha."""
    from herramientas.demo.estados_puerta import lineas_tokens

    metricas = (
        "# TYPE fichas_llm_tokens counter\n"
        'fichas_llm_tokens_total{agent="generador",type="prompt"} 900.0\n'
        'fichas_llm_tokens_total{agent="generador",type="completion"} 100.0\n'
        'fichas_llm_tokens_total{agent="evaluador",type="prompt"} 450.0\n'
        'fichas_llm_tokens_total{agent="evaluador",type="completion"} 50.0\n'
    )
    assert lineas_tokens(metricas, 3) == [
        "  tokens del LLM: 1500 (evaluador 500, generador 1000), 500 por ficha"
    ]
    assert lineas_tokens("", 3) == []
