"""``bench.backlog``'s bounds: what it holds a run to, and what it prints (the run itself, 100,000
events against a real broker, is a benchmark: docs/rendimiento.md, "Memory on a backlog")."""

from __future__ import annotations

from dataclasses import replace

from bench.backlog import CRECIMIENTO_MAX_MIB, Resultado, cotas, informe, parse_args

BIEN = Resultado(
    eventos=100_000,
    concurrencia=16,
    latencia_ms=1000.0,
    observar_s=40.0,
    publicadas=600,
    llm_a_la_vez=16,
    rss_listo_mib=280.0,
    rss_pico_mib=290.5,
)


def test_un_worker_que_respeta_su_buffer_cumple_cada_cota() -> None:
    assert BIEN.crecimiento_mib == 10.5
    assert all(cotas(BIEN).values())
    texto = informe(BIEN)
    assert "growth 10.5 MiB" in texto and "MISSED" not in texto


def test_cada_cota_falla_sola() -> None:
    """The figures of the mutations docs/stream.md lists: a worker that buffers the backlog
    (388 -> 979 MiB), graph runs not bounded by the concurrency (32 calls at once)."""
    que_acumula = replace(BIEN, rss_listo_mib=388.0, rss_pico_mib=979.0)
    sin_cota = replace(BIEN, llm_a_la_vez=32)
    justo = replace(BIEN, rss_pico_mib=BIEN.rss_listo_mib + CRECIMIENTO_MAX_MIB)
    for malo, cuantas in ((que_acumula, 2), (sin_cota, 1), (justo, 1)):
        fallan = [nombre for nombre, ok in cotas(malo).items() if not ok]
        assert len(fallan) == cuantas, fallan
        assert "MISSED" in informe(malo)


def test_por_omision_el_tamano_de_la_cifra() -> None:
    args = parse_args([])
    assert (args.eventos, args.concurrencia, args.latencia_ms, args.observar_s) == (
        100_000,
        16,
        1000.0,
        40.0,
    )
