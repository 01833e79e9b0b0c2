"""``fichas calibrar --recalificar`` through its entry point: a real process, the reviewer app's
store (SQLite) with people's decisions, the labelled set, the fake LLM server as the running
evaluator."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from criterios import comprobar, fallos, mapear_origen
from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import ClavePuerta
from esquemas.ficha import Ficha, Veredicto
from esquemas.salidas import FichaEnRevision, Intento, Origen
from harness import forkserver
from harness.estados_puerta import clave_fake
from harness.fake_llm.client import FakeLLM
from herramientas.evaluar.casos import CASOS_POR_DEFECTO, cargar_casos, origen_de_caso
from puerta import auditoria
from revision.almacen.cola import Almacen, Cierre, ItemNuevo, Llegada
from revision.almacen.decisiones import decision_de

pytestmark = pytest.mark.lento  # every test runs `fichas calibrar` as a process

REPO = Path(__file__).resolve().parents[3]
CLAVE = clave_fake()  # the running key of _env: model "fake", the repository's criteria
# the same generator, an older evaluator: the labels carry over
EVALUADOR_VIEJO = CLAVE.model_copy(update={"prompt_evaluador_sha256": "a" * 64})
OTRO_GENERADOR = CLAVE.model_copy(update={"prompt_generador_sha256": "0" * 64})


def _env(llm: FakeLLM, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FICHAS_")}
    return env | {
        "FICHAS_LLM_URL": llm.url,
        "FICHAS_LLM_MODELO": "fake",
        "FICHAS_DATA_DIR": str(data_dir),
        "FICHAS_LLM_TIMEOUT_S": "60",
        "PYTHONPATH": str(REPO),
    }


def _calibrar(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "calibrar", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def _candidatas_limpias() -> tuple[list[tuple[dict, dict]], list[tuple[dict, dict]]]:
    """(case, candidate) of the labelled set that pass every code check: good ones, bad ones."""
    buenas: list[tuple[dict, dict]] = []
    malas: list[tuple[dict, dict]] = []
    for caso in cargar_casos(CASOS_POR_DEFECTO):
        origen = mapear_origen(origen_de_caso(caso)).origen
        for c in caso["candidatas"]:
            if not fallos(comprobar(c["ficha"], origen)):
                (buenas if c["aprobada"] else malas).append((caso, c))
    return buenas, malas


def _en_revision(sku: str, caso: dict, ficha: dict, clave: ClavePuerta | None) -> dict[str, Any]:
    """The FichaEnRevision the worker wrote for a ficha, as the store keeps it."""
    evento = caso["evento"]
    veredicto = Veredicto(aprobada=True, problemas=[])
    modelo = Ficha.model_validate(ficha)
    return FichaEnRevision(
        event_id=sku,
        sku=sku,
        version=1,
        familia=evento["familia"],
        ficha=modelo,
        intentos=1,
        motivo="sin_garantia",
        problemas=[],
        historial=[Intento(intento=1, ficha=modelo, veredicto=veredicto, puntuacion=0.4)],
        criterios_version=CLAVE.criterios_version,
        enviada_en=datetime.now(UTC),
        origen=Origen(ficha_proveedor=evento["ficha_proveedor"], cifras=evento.get("cifras", {})),
        clave=clave,
    ).model_dump(mode="json")


async def _guardar(
    data_dir: Path,
    items: Sequence[tuple[str, dict, dict, ClavePuerta | None, str]],
    tipo: str = "revision",
    sombra: bool = True,
) -> None:
    """Store each item, as arrived in shadow mode (its gate closed) or not, and close it with a
    person's decision (or as obsoleta)."""
    almacen = await Almacen.abrir(None, data_dir)
    try:
        for i, (sku, caso, ficha, clave, decision) in enumerate(items):
            datos = _en_revision(sku, caso, ficha, clave)
            llegada = Llegada(clave, 0.4, True, sombra) if clave is not None else None
            nuevo = ItemNuevo.de_registro(datos, tipo, "sin_garantia", [])
            await almacen.guardar_item(nuevo, float(i), llegada)
            if decision == "obsoleta":
                await almacen.observar_version(sku, 2, float(i))
                continue
            item = await almacen.item(sku)
            assert item is not None
            instante = 1000.0 + i
            registro = decision_de(item, decision, "ana", instante)
            await almacen.decidir(item, Cierre(decision, [], "ana", instante, registro, None))
    finally:
        await almacen.cerrar()


def test_recalifica_el_almacen_y_certifica_la_clave_nueva(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    """31 good and 3 bad fichas of the running generator, decided by people under an older
    evaluator; the running evaluator scores the good ones 0.97 and the bad ones 0.2, so the
    new key certifies at 0.97 (n 31, k 0). Three fichas of another generator, which it would
    score 0.99 and people rejected, are left out and counted: pooled, they would block it."""
    buenas, malas = _candidatas_limpias()
    items: list[tuple[str, dict, dict, ClavePuerta | None, str]] = []
    items += [
        (f"B-{i:03d}", c, f["ficha"], EVALUADOR_VIEJO, "aprobada")
        for i, (c, f) in enumerate(buenas[:31])
    ]
    items += [
        (f"M-{i:03d}", c, f["ficha"], EVALUADOR_VIEJO, "rechazada")
        for i, (c, f) in enumerate(malas[:3])
    ]
    items += [
        (f"O-{i:03d}", c, f["ficha"], OTRO_GENERADOR, "rechazada")
        for i, (c, f) in enumerate(malas[3:6])
    ]
    items += [("V-000", buenas[40][0], buenas[40][1]["ficha"], None, "aprobada")]  # before v1.3
    items += [("X-000", buenas[41][0], buenas[41][1]["ficha"], EVALUADOR_VIEJO, "obsoleta")]
    asyncio.run(_guardar(data_dir, items))
    fake_llm.configure(
        {
            "default": {"evaluador": {"accion": "aprobar", "puntuacion": 0.97}},
            "rules": [
                {"sku": "M-.*", "evaluador": {"accion": "rechazar", "puntuacion": 0.2}},
                {"sku": "O-.*", "evaluador": {"accion": "aprobar", "puntuacion": 0.99}},
            ],
        }
    )
    salida = tmp_path / "puerta.json"
    args = ["--recalificar", "--desde-almacen", "--salida", str(salida)]
    proc = _calibrar(args, _env(fake_llm, data_dir), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "re-scored by the running evaluator: 34 from almacen" in proc.stdout
    assert "left out: 3 written by another generator" in proc.stdout
    assert "left out: 1 written before v1.3" in proc.stdout
    assert "left out: 1 obsolete" in proc.stdout
    assert int(fake_llm.stats()["by_agent"].get("evaluador", 0)) == 34  # none of the others
    estados, doc = auditoria.leer(salida)
    conjunta = next(e for e in estados if e.familia == FAMILIA_TODAS)
    assert conjunta.abierta and conjunta.umbral == pytest.approx(0.97, abs=1e-3)
    assert (conjunta.n, conjunta.k) == (31, 0)
    assert conjunta.clave == CLAVE  # the running key, not the one the labels were taken under
    assert conjunta.abierta_por == "calibrar"
    assert conjunta.origen_datos.startswith("ltt:recalificado; almacen ")
    assert doc["origen"]["recalificado"][0]["otro_generador"] == 3

    assert "selection bias" not in proc.stdout

    # Decided since, while the gate was open: a sampled ficha it published and one it held
    # back under λ. Chosen by the gate, so never used (issue 38): a second run scores nothing
    # new (the cache beside the audit file has every other answer), and says what it left out.
    muestra = [("S-000", buenas[42][0], buenas[42][1]["ficha"], EVALUADOR_VIEJO, "correcta")]
    asyncio.run(_guardar(data_dir, muestra, tipo="muestra", sombra=False))
    retenida = [("R-000", buenas[43][0], buenas[43][1]["ficha"], EVALUADOR_VIEJO, "aprobada")]
    asyncio.run(_guardar(data_dir, retenida, sombra=False))
    fake_llm.reset()
    proc = _calibrar(args, _env(fake_llm, data_dir), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert int(fake_llm.stats()["by_agent"].get("evaluador", 0)) == 0
    assert "re-scored by the running evaluator: 34 from almacen" in proc.stdout
    assert "left out: 2 arrived while its family's gate was open" in proc.stdout
    assert "selection bias" not in proc.stdout


def test_se_niega_si_cambio_el_generador(fake_llm: FakeLLM, data_dir: Path, tmp_path: Path) -> None:
    buenas, _ = _candidatas_limpias()
    items = [
        (f"O-{i:03d}", c, f["ficha"], OTRO_GENERADOR, "aprobada")
        for i, (c, f) in enumerate(buenas[:3])
    ]
    asyncio.run(_guardar(data_dir, items))
    salida = tmp_path / "puerta.json"
    proc = _calibrar(
        ["--recalificar", "--desde-almacen", "--salida", str(salida)],
        _env(fake_llm, data_dir),
        tmp_path,
    )
    assert proc.returncode == 2, proc.stdout
    assert "--recalificar refused" in proc.stderr
    assert "A new generator writes new fichas" in proc.stderr
    assert "shadow mode" in proc.stderr and "Traceback" not in proc.stderr
    assert not salida.exists()
    assert int(fake_llm.stats()["by_agent"].get("evaluador", 0)) == 0


def test_recalifica_el_conjunto_etiquetado(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    """The labelled set (a few cases of it) scored by the running evaluator: every candidate
    counts, the code-vetoed ones never approvable; too few labels here, so closed."""
    casos = [c for c in CASOS_POR_DEFECTO.read_text(encoding="utf-8").splitlines() if c.strip()]
    pocos = tmp_path / "casos.jsonl"
    pocos.write_text("\n".join(casos[:3]) + "\n", encoding="utf-8")
    n = sum(len(c["candidatas"]) for c in cargar_casos(pocos))
    proc = _calibrar(
        ["--recalificar", "--casos", str(pocos), "--dry-run"], _env(fake_llm, data_dir), tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert f"re-scored by the running evaluator: {n} from conjunto {pocos}" in proc.stdout
    assert "CLOSED, too few labels" in proc.stdout
    assert int(fake_llm.stats()["by_agent"].get("evaluador", 0)) == n
    assert '"origen_datos": "ltt:recalificado; conjunto ' in proc.stdout


def test_recalificar_sin_fuente_o_con_otras_entradas_sale_con_2(
    data_dir: Path, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FICHAS_")}
    env |= {"FICHAS_DATA_DIR": str(data_dir), "PYTHONPATH": str(REPO)}
    casos = [
        (["--recalificar"], "needs --desde-almacen and/or --casos"),
        (["--recalificar", "--casos", "x.json", "ev.json"], "takes no result files"),
        (["--recalificar", "--casos", "--modelo", "m"], "give no key options"),
        (["--desde-almacen"], "go with --recalificar"),
        (["--recalificar", "--desde-almacen"], "no reviewer store"),
    ]
    for args, mensaje in casos:
        proc = _calibrar(args, env, tmp_path)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert mensaje in proc.stderr, (args, proc.stderr)
