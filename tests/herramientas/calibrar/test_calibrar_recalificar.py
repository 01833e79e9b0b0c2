"""``fichas calibrar --recalificar`` through its entry point: a real process, the reviewer app's
store (SQLite) with people's decisions and each item's attempts, the labelled set, the fake LLM
server as the running evaluator, scripted per attempt: the histories replayed (kept, dropped by
each reason, the refusal) and the evaluator variants counted across runs."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from criterios import atributos_obligatorios, comprobar, fallos, mapear_origen
from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import ClavePuerta
from esquemas.ficha import Ficha, Problema, Veredicto
from esquemas.salidas import FichaEnRevision, Intento, Origen
from grafo.repeticion import MOTIVOS
from harness.estados_puerta import clave_fake, fichas_calibrar
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
    return fichas_calibrar(args, env, cwd)


def _recalificar_almacen(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``--recalificar --desde-almacen --salida puerta.json``, and that audit file's path."""
    salida = tmp_path / "puerta.json"
    args = ["--recalificar", "--desde-almacen", "--salida", str(salida)]
    return _calibrar(args, _env(fake_llm, data_dir), tmp_path), salida


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


Intentos = list[tuple[dict, list[dict[str, str]]]]  # each attempt's ficha and stored problems


def _en_revision(
    sku: str, caso: dict, ficha: dict, clave: ClavePuerta | None, antes: Intentos | None = None
) -> dict[str, Any]:
    """The FichaEnRevision the worker wrote for a ficha, as the store keeps it: ``antes``, the
    attempts before it (each ficha with the problems its verdict listed), then ``ficha``."""
    evento = caso["evento"]
    modelo = Ficha.model_validate(ficha)
    historial = [
        Intento(
            intento=i,
            ficha=Ficha.model_validate(f),
            veredicto=Veredicto(
                aprobada=not problemas, problemas=[Problema(**p) for p in problemas]
            ),
            puntuacion=0.4,
        )
        for i, (f, problemas) in enumerate([*(antes or []), (ficha, [])], start=1)
    ]
    return FichaEnRevision(
        event_id=sku,
        sku=sku,
        version=1,
        familia=evento["familia"],
        ficha=modelo,
        intentos=len(historial),
        motivo="sin_garantia",
        problemas=[],
        historial=historial,
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
    antes: dict[str, Intentos] | None = None,
) -> None:
    """Store each item, as arrived in shadow mode (its gate closed) or not, with the attempts
    before its ficha (``antes``, by SKU), and close it with a person's decision (or as
    obsoleta)."""
    almacen = await Almacen.abrir(None, data_dir)
    try:
        for i, (sku, caso, ficha, clave, decision) in enumerate(items):
            datos = _en_revision(sku, caso, ficha, clave, (antes or {}).get(sku, []))
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
    """31 good and 3 bad fichas of the running generator, each its loop's first attempt,
    decided by people under an older evaluator; the running evaluator approves them all (so the
    new loop ends on each: kept), scoring the good ones 0.97 and the bad ones 0.2, so the new
    key certifies at 0.97 (n 31, k 0). Three fichas of another generator, which it would score
    0.99 and people rejected, are left out and counted: pooled, they would block it."""
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
                # approved with a low score: a judge that rejected them would have the new loop
                # retry them (dropped, test_repite_cada_historial_bajo_el_juez_nuevo)
                {"sku": "M-.*", "evaluador": {"accion": "aprobar", "puntuacion": 0.2}},
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
    assert conjunta.origen_datos.endswith("; variantes del evaluador en estas etiquetas: 1")
    assert doc["origen"]["recalificado"][0]["otro_generador"] == 3
    assert doc["origen"]["variantes"]["variantes"] == 1
    assert "evaluator variants tried on these labels: 1" in proc.stdout

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
    # the same variant again: still one variant, in two runs
    assert "evaluator variants tried on these labels: 1 (keys " in proc.stdout
    assert "; 2 run(s) of --recalificar)" in proc.stdout


def test_se_niega_si_cambio_el_generador(fake_llm: FakeLLM, data_dir: Path, tmp_path: Path) -> None:
    buenas, _ = _candidatas_limpias()
    items = [
        (f"O-{i:03d}", c, f["ficha"], OTRO_GENERADOR, "aprobada")
        for i, (c, f) in enumerate(buenas[:3])
    ]
    asyncio.run(_guardar(data_dir, items))
    proc, salida = _recalificar_almacen(fake_llm, data_dir, tmp_path)
    assert proc.returncode == 2, proc.stdout
    assert "--recalificar refused" in proc.stderr
    assert "A new generator writes new fichas" in proc.stderr
    assert "shadow mode" in proc.stderr and "Traceback" not in proc.stderr
    assert not salida.exists()
    assert int(fake_llm.stats()["by_agent"].get("evaluador", 0)) == 0


def test_recalifica_el_conjunto_etiquetado(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    """The labelled set (a few cases of it), written by hand, shows no loop history: with a
    loop that retries (the default 3 attempts) none of it can stand for what the new loop ends
    on, so the command refuses before asking the model anything (exit 2); with a loop that never
    retries (FICHAS_MAX_INTENTOS=1: its first attempt is final whatever the judge says) every
    candidate counts, the code-vetoed ones never approvable; too few labels here, so closed."""
    asyncio.run(_guardar(data_dir, []))  # the store, where every variant tried is counted
    casos = [c for c in CASOS_POR_DEFECTO.read_text(encoding="utf-8").splitlines() if c.strip()]
    pocos = tmp_path / "casos.jsonl"
    pocos.write_text("\n".join(casos[:3]) + "\n", encoding="utf-8")
    n = sum(len(c["candidatas"]) for c in cargar_casos(pocos))
    args = ["--recalificar", "--casos", str(pocos), "--dry-run"]
    proc = _calibrar(args, _env(fake_llm, data_dir), tmp_path)
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.startswith("fichas calibrar: --recalificar refused: no labelled ficha")
    assert f"({n} sin_historial)" in proc.stderr and "FICHAS_MAX_INTENTOS=3" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert int(fake_llm.stats()["by_agent"].get("evaluador", 0)) == 0

    proc = _calibrar(args, _env(fake_llm, data_dir) | {"FICHAS_MAX_INTENTOS": "1"}, tmp_path)
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
        # the labelled set too: every variant tried is counted in the store
        (["--recalificar", "--casos"], "counts every evaluator variant"),
    ]
    for args, mensaje in casos:
        proc = _calibrar(args, env, tmp_path)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert mensaje in proc.stderr, (args, proc.stderr)


def _fallos_del_bucle(sku: str, caso: dict, ficha: dict) -> list[dict[str, str]]:
    """The problems the loop's code checks list on ``ficha`` for this item (what a stored
    attempt's verdict holds when its judge listed nothing of its own)."""
    from grafo.estado import origen_de
    from grafo.nodos import comprobar_intento

    evento = caso["evento"] | {"sku": sku}
    origen = origen_de(evento, atributos_obligatorios(evento["familia"]))
    return fallos(comprobar_intento(ficha, origen)[0])


def _historias(prefijo: str) -> tuple[list[tuple[str, dict, dict, ClavePuerta, str]], dict]:
    """One item per outcome of the replay, by SKU (``<prefijo>-<what happens>``), each ending on
    a clean ficha people approved, with the attempts before it."""
    buenas, _ = _candidatas_limpias()
    juez_viejo = [{"criterio": "C06", "detalle": "la descripción no dice para qué sirve"}]
    items: list[tuple[str, dict, dict, ClavePuerta, str]] = []
    antes: dict[str, Intentos] = {}
    for i, nombre in enumerate(
        ("CONSERVA", "APROBADA", "OTRA", "REINTENTA", "INVALIDA", "SINHIST")
    ):
        caso, candidata = buenas[i]
        sku = f"{prefijo}-{nombre}"
        ficha = candidata["ficha"]
        items.append((sku, caso, ficha, EVALUADOR_VIEJO, "aprobada"))
        if nombre in ("CONSERVA", "INVALIDA", "SINHIST"):  # retried for a code failure alone
            con_url = {**ficha, "descripcion": ficha["descripcion"] + " https://tienda.example"}
            antes[sku] = [(con_url, _fallos_del_bucle(sku, caso, con_url))]
            assert antes[sku][0][1][0]["criterio"] == "C05"  # a URL: the code's veto
        elif nombre in ("APROBADA", "OTRA"):  # retried with the old judge's problems
            antes[sku] = [(ficha, juez_viejo)]
    return items, antes


def test_repite_cada_historial_bajo_el_juez_nuevo(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    """Each labelled history replayed under the new judge, scripted per attempt (issue 47):
    - CONSERVA: attempt 1 failed a code check (a URL; the old judge added nothing), attempt 2 is the
      labelled one; the new judge approves both (attempt 1 still vetoed by the code): same
      feedback, the new loop ends on attempt 2: kept, with the new score of attempt 2;
    - APROBADA: the old judge rejected attempt 1, the new one approves it: the new loop would
      publish attempt 1, which nobody labelled;
    - OTRA: the new judge rejects attempt 1 with problems of its own: attempt 2 would be written
      from other feedback;
    - REINTENTA: one attempt, which the new judge rejects: the new loop would retry;
    - INVALIDA: the new judge's answer on attempt 1 is broken: the new loop stops there;
    - SINHIST: two attempts, none kept in the record: nothing to replay, nothing asked."""
    items, antes = _historias("H")
    asyncio.run(_guardar(data_dir, items, antes=antes))
    asyncio.run(_sin_historial(data_dir, "H-SINHIST"))
    fake_llm.configure(
        {
            "rules": [
                {"sku": "H-CONSERVA", "evaluador": [
                    {"accion": "aprobar", "puntuacion": 0.9},
                    {"accion": "aprobar", "puntuacion": 0.93},
                ]},
                {"sku": "H-APROBADA", "evaluador": {"accion": "aprobar", "puntuacion": 0.9}},
                {"sku": "H-OTRA", "evaluador": {"accion": "rechazar", "puntuacion": 0.3}},
                {"sku": "H-REINTENTA", "evaluador": {"accion": "rechazar", "puntuacion": 0.3}},
                {"sku": "H-INVALIDA", "evaluador": "json_roto"},
            ],
        }
    )  # fmt: skip
    proc, salida = _recalificar_almacen(fake_llm, data_dir, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "re-scored by the running evaluator: 1 from almacen" in proc.stdout
    for motivo in (
        "left out: 1 the new judge approves an earlier attempt",
        "left out: 1 a retry's feedback would differ",
        "left out: 1 the new judge rejects the labelled attempt with attempts left",
        "left out: 1 the new judge's answer on an earlier attempt is invalid",
        "left out: 1 its attempts cannot be replayed",
    ):
        assert motivo in proc.stdout, proc.stdout
    por_sku = {
        sku: len(fake_llm.requests(agent="evaluador", sku=sku, bodies=False)) for sku, *_ in items
    }
    assert por_sku == {
        "H-CONSERVA": 2, "H-APROBADA": 1, "H-OTRA": 1, "H-REINTENTA": 1, "H-INVALIDA": 1,
        "H-SINHIST": 0,
    }  # fmt: skip
    _, doc = auditoria.leer(salida)
    (fuente,) = doc["origen"]["recalificado"]
    assert fuente["candidatas"] == 1
    assert {m: fuente[m] for m in MOTIVOS} == dict.fromkeys(MOTIVOS, 1) | {"tope_antes": 0}
    assert fuente["sin_historial"] == 1
    (puerta,) = [p for p in doc["puertas"] if p["estado"]["familia"] == FAMILIA_TODAS]
    assert puerta["certificacion"]["candidatas"] == 1  # the kept one, its attempt 2's score
    assert puerta["certificacion"]["curva"][0]["umbral"] == pytest.approx(0.93, abs=1e-3)


def test_se_niega_si_el_bucle_reintenta_y_nada_se_conserva(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    """Every labelled ficha is one the new loop would not end on (its judge approves an earlier
    attempt, or rejects the labelled one with attempts left): exit 2, one line saying why, no
    audit file, nothing counted as a variant tried."""
    items, antes = _historias("N")
    solo = [it for it in items if it[0] in ("N-APROBADA", "N-REINTENTA")]
    asyncio.run(_guardar(data_dir, solo, antes=antes))
    fake_llm.configure(
        {
            "rules": [
                {"sku": "N-APROBADA", "evaluador": {"accion": "aprobar", "puntuacion": 0.9}},
                {"sku": "N-REINTENTA", "evaluador": {"accion": "rechazar", "puntuacion": 0.3}},
            ]
        }
    )
    proc, salida = _recalificar_almacen(fake_llm, data_dir, tmp_path)
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.splitlines()[-1].startswith(  # after the progress lines
        "fichas calibrar: --recalificar refused: no labelled ficha is one the new loop would "
        "end on (1 aprobada_antes, 1 reintentaria). With FICHAS_MAX_INTENTOS=3 the loop retries"
    ), proc.stderr
    assert "shadow mode" in proc.stderr and "Traceback" not in proc.stderr
    assert not salida.exists()
    assert asyncio.run(_variantes(data_dir)) == {}


def test_cuenta_las_variantes_probadas_en_las_mismas_etiquetas(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    """A dry run with the evaluator's own prompt, then a run with another evaluator prompt, on
    the same stored labels: the second says two variants were tried (the dry run counts: its
    result could decide which variant to publish), in its summary, its audit file and the
    gate's origen_datos; the store keeps both for the Puertas page."""
    buenas, _ = _candidatas_limpias()
    items = [(f"V-{i:03d}", c, f["ficha"], EVALUADOR_VIEJO, "aprobada") for i, (c, f) in
             enumerate(buenas[:3])]  # fmt: skip
    asyncio.run(_guardar(data_dir, items))
    env = _env(fake_llm, data_dir)
    proc = _calibrar(["--recalificar", "--desde-almacen", "--dry-run"], env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "evaluator variants tried on these labels: 1 " in proc.stdout
    prompt = tmp_path / "evaluador.md"
    prompt.write_text("Juzga con rigor, VARIANTE-2:\n{criterios}\nSolo el JSON.\n", "utf-8")
    salida = tmp_path / "puerta.json"
    proc = _calibrar(
        ["--recalificar", "--desde-almacen", "--salida", str(salida)],
        env | {"FICHAS_PROMPT_EVALUADOR_ARCHIVO": str(prompt)},
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "evaluator variants tried on these labels: 2 (keys " in proc.stdout
    assert "; 2 run(s) of --recalificar). The guarantee is per variant (δ 0.05 each): the " \
        "chance that one of them passed by luck is up to 0.1" in proc.stdout  # fmt: skip
    estados, doc = auditoria.leer(salida)
    variantes = doc["origen"]["variantes"]
    assert (variantes["variantes"], variantes["corridas"]) == (2, 2)
    assert variantes["claves"][0] != variantes["claves"][1] == estados[0].clave.texto()
    assert all(
        e.origen_datos.endswith("variantes del evaluador en estas etiquetas: 2") for e in estados
    )
    assert asyncio.run(_variantes(data_dir)) == {k: 2 for k in variantes["claves"]}


async def _sin_historial(data_dir: Path, sku: str) -> None:
    """Remove an item's attempts from its stored record, as records kept before attempts were
    (only the count of attempts is left)."""
    almacen = await Almacen.abrir(None, data_dir)
    try:
        item = await almacen.item(sku)
        assert item is not None
        datos = json.dumps(item.datos | {"historial": []})
        await almacen.database.run(
            "update revision_items set datos = $1 where event_id = $2", (datos, sku)
        )
    finally:
        await almacen.cerrar()


async def _variantes(data_dir: Path) -> dict[str, int]:
    """Per key certified by --recalificar, the variants the store counts on its labels."""
    from revision.almacen.recalificaciones import Recalificaciones

    almacen = await Recalificaciones.abrir(None, data_dir)
    try:
        return {k: v.n for k, v in (await almacen.por_clave()).items()}
    finally:
        await almacen.cerrar()
