"""Checkpoint rows per ficha, on SQLite and on a real PostgreSQL, and strict msgpack reads."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from esquemas import EventoCambio
from grafo.checkpointer import SQLITE_FILE
from grafo.ejecucion import thread_id
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.procesador import abrir_procesador

MAX_FILAS = 9  # input, start, 3 x generar, 3 x evaluar, publicar (the target allows 12)


def _script_tres_intentos(llm: FakeLLM, sku: str) -> None:
    llm.configure({"rules": [{"sku": sku, "evaluador": ["rechazar", "rechazar", "aprobar"]}]})


async def test_sqlite_tres_intentos_como_mucho_9_filas_en_el_padre(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    _script_tres_intentos(fake_llm, "CKP-1")
    evento = EventoCambio.model_validate(evento_dict("CKP-1"))
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(evento)
    assert resultado.salida["intentos"] == 3
    with sqlite3.connect(data_dir / SQLITE_FILE) as conn:
        filas = conn.execute(
            "select checkpoint_ns from checkpoints where thread_id = ?", (thread_id(evento),)
        ).fetchall()
        otros = conn.execute(
            "select count(*) from checkpoints where thread_id != ?", (thread_id(evento),)
        ).fetchone()[0]
    assert 0 < len(filas) <= MAX_FILAS
    assert {ns for (ns,) in filas} == {""}  # nothing under an agent's namespace
    assert otros == 0


@pytest.mark.postgres
async def test_postgres_tres_intentos_como_mucho_9_filas_en_el_padre(
    fake_llm: FakeLLM, data_dir: Path, postgres_dsn: str
) -> None:
    import psycopg

    _script_tres_intentos(fake_llm, "CKP-2")
    evento = EventoCambio.model_validate(evento_dict("CKP-2"))
    async with abrir_procesador(fake_llm.url, data_dir, postgres_dsn=postgres_dsn) as (proc, _):
        resultado = await proc.procesar(evento)
        again = await proc.procesar(evento)
    assert resultado.salida["intentos"] == 3
    assert again.reentregada and again.salida == resultado.salida
    with psycopg.connect(postgres_dsn) as conn:
        filas = conn.execute(
            "select checkpoint_ns from checkpoints where thread_id = %s", (thread_id(evento),)
        ).fetchall()
    assert 0 < len(filas) <= MAX_FILAS
    assert {ns for (ns,) in filas} == {""}
    assert len(fake_llm.requests()) == 6  # the replay called nothing


@pytest.mark.lento
async def test_lectura_estricta_de_msgpack_no_avisa(fake_llm: FakeLLM, data_dir: Path) -> None:
    _script_tres_intentos(fake_llm, "CKP-3")
    evento = EventoCambio.model_validate(evento_dict("CKP-3"))
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        await proc.procesar(evento)
    reader = textwrap.dedent(
        f"""
        import asyncio, logging, warnings
        logging.basicConfig(level=logging.DEBUG)
        warnings.simplefilter("always")
        from pathlib import Path
        from grafo.checkpointer import open_checkpointer

        async def main():
            async with open_checkpointer(None, Path({str(data_dir)!r})) as saver:
                n = 0
                async for item in saver.alist(None):
                    assert isinstance(item.checkpoint["channel_values"], dict)
                    n += 1
                for_thread = {{"configurable": {{"thread_id": {thread_id(evento)!r}}}}}
                last = await saver.aget_tuple(for_thread)
                values = last.checkpoint["channel_values"]
                assert values["salida"]["destino"] == "fichas.publicadas", values
                print("READ", n)

        asyncio.run(main())
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", reader],
        env={"LANGGRAPH_STRICT_MSGPACK": "true", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
    )
    assert proc.returncode == 0, proc.stderr
    assert "READ" in proc.stdout
    salida = proc.stdout + proc.stderr
    assert "unregistered" not in salida.lower()
    assert "Deserializing" not in salida
    assert "blocked" not in salida.lower()
