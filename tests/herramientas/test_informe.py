"""``fichas informe`` on known outcomes: exact counts, rates, verdict, PNG; and over Kafka.

The Kafka tests use the session broker of tests/stream/conftest.py (fixture ``kafka``).
"""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from esquemas import FichaEnRevision, FichaPublicada
from harness.kafka_broker import KafkaBroker
from harness.topicos import settings_for
from harness.version_siguiente import siguiente
from herramientas.informe import (
    calcular_informe,
    deduplicar,
    main_informe,
    read_jsonl,
    read_kafka,
    render_text,
)

FICHA = {
    "titulo": "Zapatilla Runner X2 negra de malla",
    "descripcion": "Zapatilla de running ligera con empeine de malla y suela de goma.",
    "atributos": {"talla": "42", "color": "negro", "material": "malla", "genero": "hombre"},
}


def publicada(event_id: str, intentos: int) -> dict[str, Any]:
    return FichaPublicada(
        event_id=event_id,
        sku=f"ZAP-{event_id}",
        version=1,
        familia="zapatillas",
        ficha=FICHA,  # type: ignore[arg-type]
        intentos=intentos,
        criterios_version="v1",
        modelo="fake",
        publicada_en="2026-11-29T10:00:05Z",  # type: ignore[arg-type]
    ).model_dump(mode="json")


def en_revision(event_id: str, motivo: str, rondas: list[list[str]]) -> dict[str, Any]:
    """A FichaEnRevision whose attempt n was rejected for the criteria in ``rondas[n-1]``."""
    historial: list[dict[str, Any]] = [
        {
            "intento": n,
            "ficha": None if criterios == ["salida_invalida"] else FICHA,
            "veredicto": {
                "aprobada": False,
                "problemas": [{"criterio": c, "detalle": f"falla {c}"} for c in criterios],
            },
        }
        for n, criterios in enumerate(rondas, start=1)
    ]
    return FichaEnRevision(
        event_id=event_id,
        sku=f"ZAP-{event_id}",
        version=1,
        familia="zapatillas",
        ficha=historial[-1]["ficha"],
        intentos=len(rondas),
        motivo=motivo,  # type: ignore[arg-type]
        problemas=historial[-1]["veredicto"]["problemas"],
        historial=historial,  # type: ignore[arg-type]
        criterios_version="v1",
        enviada_en="2026-11-29T10:00:09Z",  # type: ignore[arg-type]
    ).model_dump(mode="json")


DLQ = {
    "error": {"codigo": "json_invalido", "mensaje": "no es JSON"},
    "payload": "{roto",
    "origen": {"topic": "proveedor.cambios", "particion": 0, "offset": 3},
    "recibido_en": "2026-11-29T10:00:00Z",
}


def _linea(destino: str, evento: dict[str, Any]) -> str:
    return json.dumps({"destino": destino, "evento": evento}, ensure_ascii=False)


LINEAS = [
    _linea("fichas.publicadas", publicada("p1", 1)),
    _linea("fichas.publicadas", publicada("p2", 2)),
    _linea("fichas.publicadas", publicada("p3", 3)),
    _linea("fichas.publicadas", publicada("p1", 1)),  # redelivered: same event_id
    _linea(
        "fichas.revision_manual",
        en_revision("r1", "rechazada", [["C04"], ["C04", "C01"], ["C06"]]),
    ),
    _linea("fichas.revision_manual", en_revision("r2", "salida_invalida", [["salida_invalida"]])),
    _linea("dlq", DLQ),
    "",
    json.dumps(publicada("p4", 1)),  # a raw event, as read from the topic
    json.dumps(publicada("p5", 2)),
    "esto no es JSON",
]
# Reached / approved per attempt:
#   1: p1 p2 p3 p4 p5 r1 r2 = 7, approved p1 p4 = 2 -> 28.6%
#   2: p2 p3 p5 r1 = 4, approved p2 p5 = 2 -> 50.0%
#   3: p3 r1 = 2, approved p3 = 1 -> 50.0%


@pytest.fixture
def entrada(tmp_path: Path) -> Path:
    path = tmp_path / "salidas.jsonl"
    path.write_text("\n".join(LINEAS) + "\n", encoding="utf-8")
    return path


def _filas(texto: str) -> list[list[str]]:
    return [line.split() for line in texto.splitlines()]


def test_lineas_de_la_version_siguiente_cuentan_con_su_destino_nuevo() -> None:
    """v1.6: a ``fichas procesar`` line of a later version, with a destination this version
    does not know and an outcome with a field at every level, is counted, not ignored."""
    evento = siguiente(FichaEnRevision, en_revision("n1", "rechazada", [["C04"]]), {"motivo": "x"})
    lineas = [json.dumps({"destino": "fichas.descartadas", "evento": evento}), *LINEAS]
    salidas, _, ignoradas = deduplicar(read_jsonl(lineas))
    informe = calcular_informe(salidas, ignoradas=ignoradas)
    assert informe.destinos["fichas.descartadas"] == 1 and ignoradas == 1
    assert "fichas.descartadas" in render_text(informe)


def test_report_numbers() -> None:
    salidas, duplicadas, ignoradas = deduplicar(read_jsonl(LINEAS))
    informe = calcular_informe(
        salidas, duplicadas=duplicadas, ignoradas=ignoradas, muestra_minima=1
    )

    assert informe.destinos == {"dlq": 1, "fichas.publicadas": 5, "fichas.revision_manual": 2}
    assert (informe.duplicadas, informe.ignoradas) == (1, 1)
    assert [(t.intento, t.llegaron, t.aprobadas) for t in informe.por_intento] == [
        (1, 7, 2),
        (2, 4, 2),
        (3, 2, 1),
    ]
    assert informe.rechazos == {"C01": 1, "C04": 2, "C06": 1}
    assert informe.rechazos_sin_detalle == 4  # p2: 1, p3: 2, p5: 1
    assert informe.salidas_invalidas == 1
    assert informe.motivos == {"rechazada": 1, "salida_invalida": 1}
    assert informe.ultimo is not None and informe.ultimo.intento == 3
    assert informe.compensa is True


def test_text_report_prints_the_expected_rates(entrada: Path) -> None:
    out = io.StringIO()
    assert main_informe([str(entrada), "--muestra-minima", "2"], stdout=out) == 0
    texto = out.getvalue()
    filas = _filas(texto)
    assert ["1", "7", "2", "28.6%"] in filas
    assert ["2", "4", "2", "50.0%"] in filas
    assert ["3", "2", "1", "50.0%"] in filas
    assert ["fichas.publicadas", "5"] in filas
    assert ["fichas.revision_manual", "2"] in filas
    assert ["dlq", "1"] in filas
    assert ["C04", "2", "Fiel", "al", "origen:"] in [f[:5] for f in filas]
    assert ["salida_invalida", "1"] in filas
    assert "Salidas: 8 (duplicadas descartadas: 1, líneas ignoradas: 1)" in texto
    assert "El intento 3 aprueba el 50.0%" in texto
    assert "compensa mantenerlo" in texto


def test_last_attempt_below_threshold_suggests_fewer_attempts(entrada: Path) -> None:
    out = io.StringIO()
    assert main_informe([str(entrada), "--umbral", "0.6", "--muestra-minima", "2"], stdout=out) == 0
    assert (
        "El intento 3 aprueba el 50.0% de las fichas que llegan a él, por debajo del umbral "
        "del 60.0%: no compensa; considera bajar FICHAS_MAX_INTENTOS a 2." in out.getvalue()
    )


def test_stdin_and_explicit_last_attempt() -> None:
    out = io.StringIO()
    stdin = io.StringIO("\n".join(LINEAS))
    assert main_informe(["-", "--max-intentos", "4"], stdout=out, stdin=stdin) == 0
    assert "Ninguna ficha llegó al intento 4" in out.getvalue()


def test_single_attempt_and_empty_input() -> None:
    solo = calcular_informe([("fichas.publicadas", publicada("a", 1))])
    assert solo.compensa is None and "Solo hay un intento" in solo.conclusion
    vacio = calcular_informe([])
    assert vacio.por_intento == [] and vacio.compensa is None
    assert "(sin intentos)" in render_text(vacio)


def test_png_is_written(entrada: Path, tmp_path: Path) -> None:
    png = tmp_path / "informe.png"
    out = io.StringIO()
    assert main_informe([str(entrada), "--png", str(png)], stdout=out) == 0
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = pytest.importorskip("PIL.Image")
    with image.open(png) as opened:
        assert opened.format == "PNG"
        assert opened.size == (1500, 480)


def test_usage_and_read_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main_informe([])
    assert exit_info.value.code == 2
    assert main_informe([str(tmp_path / "no-existe.jsonl")]) == 1
    assert "no-existe.jsonl" in capsys.readouterr().err


async def _produce(bootstrap: str, records: list[tuple[str, str, bytes | str]]) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        for topic, key, value in records:
            data = value if isinstance(value, bytes) else value.encode()
            await producer.send_and_wait(topic, data, key=key.encode())
    finally:
        await producer.stop()


def _informe_kafka(
    kafka: KafkaBroker,
    monkeypatch: pytest.MonkeyPatch,
    publicadas: str,
    revision: str,
    records: list[tuple[str, str, bytes | str]],
) -> tuple[str, list[list[str]]]:
    """``fichas informe --kafka`` over ``records`` written to the two topics: text and rows."""
    asyncio.run(_produce(kafka.bootstrap, records))
    monkeypatch.setenv("FICHAS_TOPIC_PUBLICADAS", publicadas)
    monkeypatch.setenv("FICHAS_TOPIC_REVISION", revision)
    out = io.StringIO()
    assert main_informe(["--kafka", kafka.bootstrap, "--timeout", "60"], stdout=out) == 0
    return out.getvalue(), _filas(out.getvalue())


@pytest.mark.kafka
def test_kafka_mode_reads_both_topics_to_their_end(
    kafka: KafkaBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    sufijo = uuid.uuid4().hex[:8]
    publicadas, revision = f"pub-{sufijo}", f"rev-{sufijo}"
    kafka.create_topic(publicadas, partitions=2)
    kafka.create_topic(revision, partitions=2)
    records: list[tuple[str, str, bytes | str]] = [
        (publicadas, "ZAP-p1", json.dumps(publicada("p1", 1)).encode()),
        (publicadas, "ZAP-p1", json.dumps(publicada("p1", 1)).encode()),  # redelivered
        (publicadas, "ZAP-p2", json.dumps(publicada("p2", 2)).encode()),
        (publicadas, "ZAP-xx", b"\xff not json"),
        (revision, "ZAP-r1", json.dumps(en_revision("r1", "rechazada", [["C04"], ["C06"]]))),
    ]
    texto, filas = _informe_kafka(kafka, monkeypatch, publicadas, revision, records)
    assert "Salidas: 3 (duplicadas descartadas: 1, líneas ignoradas: 1)" in texto
    assert ["fichas.publicadas", "2"] in filas
    assert ["fichas.revision_manual", "1"] in filas
    assert ["1", "3", "1", "33.3%"] in filas
    assert ["2", "2", "1", "50.0%"] in filas


@pytest.mark.kafka
def test_kafka_mode_reports_a_missing_topic(kafka: KafkaBroker) -> None:
    missing = f"nada-{uuid.uuid4().hex[:8]}"
    salidas, duplicadas, ignoradas, avisos = asyncio.run(
        read_kafka(settings_for(kafka.bootstrap), {missing: "fichas.publicadas"}, timeout_s=30)
    )
    assert (salidas, duplicadas, ignoradas) == ([], 0, 0)
    assert avisos == [f"el topic {missing} no existe o no tiene particiones"]
    assert missing not in kafka.list_topics()  # reading never creates it


@pytest.mark.kafka
def test_kafka_mode_reads_the_next_contract_version(
    kafka: KafkaBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """v1.6, "Readers never fail open": outcomes of a later version (a field at every level, a
    motivo this version does not know) are counted like any other; a record that is not an
    outcome of its topic is ignored, as before."""
    sufijo = uuid.uuid4().hex[:8]
    publicadas, revision = f"pub-{sufijo}", f"rev-{sufijo}"
    kafka.create_topic(publicadas, partitions=1)
    kafka.create_topic(revision, partitions=1)
    nueva = siguiente(
        FichaEnRevision, en_revision("r1", "rechazada", [["C04"]]), {"motivo": "deriva"}
    )
    records: list[tuple[str, str, bytes | str]] = [
        (publicadas, "ZAP-p1", json.dumps(siguiente(FichaPublicada, publicada("p1", 2)))),
        (revision, "ZAP-r1", json.dumps(nueva)),
        (revision, "ZAP-xx", json.dumps({"event_id": "xx", "motivo": "rechazada"})),
    ]
    texto, filas = _informe_kafka(kafka, monkeypatch, publicadas, revision, records)
    assert "Salidas: 2 (duplicadas descartadas: 0, líneas ignoradas: 1)" in texto
    assert ["deriva", "1"] in filas and ["C04", "1"] in [f[:2] for f in filas]
    assert ["1", "2", "0", "0.0%"] in filas and ["2", "1", "1", "100.0%"] in filas
