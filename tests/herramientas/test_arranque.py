"""The prompt files as every command meets them at start-up (``herramientas.arranque``): one
line per bad file, exit 2, through the real ``fichas`` entry point for every subcommand.

FICHAS_PROMPT_GENERADOR_ARCHIVO / FICHAS_PROMPT_EVALUADOR_ARCHIVO and their
FICHAS_CANDIDATA_ forms: a readable UTF-8 file, not empty, formatted with the placeholders of
the template it replaces (the evaluator's, by the mode the loop runs), never holding the
generator's prompt in the evaluator's. ``infra.config`` checks only that the file can be
opened; the text is the graph's rule (``grafo.prompt_archivo``), run by ``cargar_ajustes``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from harness import forkserver
from harness.entorno import entorno
from herramientas.arranque import cargar_ajustes
from herramientas.cli import SUBCOMANDOS
from infra.config import ConfigError
from infra.network import free_port
from stream.candidata.ajustes import candidata

REPO = Path(__file__).parents[2]

GENERADOR = "FICHAS_PROMPT_GENERADOR_ARCHIVO"
EVALUADOR = "FICHAS_PROMPT_EVALUADOR_ARCHIVO"
CAND_GENERADOR = "FICHAS_CANDIDATA_PROMPT_GENERADOR_ARCHIVO"
CAND_EVALUADOR = "FICHAS_CANDIDATA_PROMPT_EVALUADOR_ARCHIVO"


def _paquete(nombre: str) -> str:
    return resources.files("grafo.prompts").joinpath(nombre).read_text(encoding="utf-8")


def _archivo(tmp_path: Path, nombre: str, contenido: str | bytes) -> Path:
    ruta = tmp_path / nombre
    if isinstance(contenido, bytes):
        ruta.write_bytes(contenido)
    else:
        ruta.write_text(contenido, encoding="utf-8")
    return ruta


def _una_linea(monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]) -> str:
    """The one error line ``cargar_ajustes`` gives for these variables."""
    for nombre, valor in variables.items():
        monkeypatch.setenv(nombre, valor)
    with pytest.raises(ConfigError) as info:
        cargar_ajustes()
    assert len(info.value.lines) == 1, info.value.lines
    return info.value.lines[0]


def test_sin_definir_o_vacias_son_las_plantillas_del_paquete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for nombre in (GENERADOR, EVALUADOR, CAND_GENERADOR, CAND_EVALUADOR):
        monkeypatch.setenv(nombre, "")
    s = cargar_ajustes()
    assert s.prompt_generador_archivo is None and s.prompt_evaluador_archivo is None
    assert s.candidata_prompt_generador_archivo is None
    assert s.candidata_prompt_evaluador_archivo is None


def test_las_plantillas_del_paquete_valen_como_archivo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(GENERADOR, str(_archivo(tmp_path, "g.md", _paquete("generador.md"))))
    monkeypatch.setenv(EVALUADOR, str(_archivo(tmp_path, "e.md", _paquete("evaluador.md"))))
    rubrica = _archivo(tmp_path, "r.md", _paquete("evaluador_rubrica.md"))
    monkeypatch.setenv(CAND_EVALUADOR, str(rubrica))
    monkeypatch.setenv("FICHAS_CANDIDATA_EVALUADOR", "rubrica")
    s = cargar_ajustes()
    assert s.prompt_generador_archivo == tmp_path / "g.md"
    assert s.candidata_prompt_evaluador_archivo == rubrica


@pytest.mark.parametrize(
    ("contenido", "esperado"),
    [
        (b"\xff\xfe no es utf-8", "a UTF-8 text file (byte 0xff at offset 0 is not UTF-8)"),
        ("  \n\n", "a file with a prompt in it (it is empty)"),
        ("Reglas:\n{criterios}\n{precio}\n", "only the placeholders of generador.md: {crit"),
        ("Reglas: {criterios} y {}\n", "(it has {}; write a literal brace as {{ or }})"),
        ('Reglas: {criterios}\nResponde {"titulo": "..."}\n', '(it has {"titulo"}'),
        ("Sin reglas, {max_titulo} caracteres.\n", "the placeholder {criterios} of generador.md"),
        ("Reglas: {criterios\n", "a template like generador.md (expected '}' before end"),
        ("Reglas: {criterios} de {max_titulo:s}\n", "a template like generador.md (ValueError"),
    ],
)
def test_archivo_del_generador_invalido_una_linea_que_lo_nombra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, contenido: str | bytes, esperado: str
) -> None:
    ruta = _archivo(tmp_path, "g.md", contenido)
    linea = _una_linea(monkeypatch, {GENERADOR: str(ruta)})
    assert linea.startswith(f"{GENERADOR}={str(ruta)!r} is not valid: expected ")
    assert esperado in linea


def test_archivo_que_no_se_puede_leer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    falta = tmp_path / "no-existe.md"
    linea = _una_linea(monkeypatch, {EVALUADOR: str(falta)})
    assert linea == (
        f"{EVALUADOR}={str(falta)!r} is not valid: expected a readable file "
        "(No such file or directory)"
    )
    linea = _una_linea(monkeypatch, {EVALUADOR: str(tmp_path)})
    assert "expected a readable file (Is a directory)" in linea


@pytest.mark.parametrize(
    ("modo", "contenido", "esperado"),
    [
        ("veredicto", "Corrige.\n", "the placeholder {criterios} of evaluador.md"),
        ("veredicto", "{criterios} en {max_titulo}\n", "only the placeholders of evaluador.md"),
        ("rubrica", "Tres preguntas: {criterios}\n", "of evaluador_rubrica.md: none (it has"),
        ("citas", 'Responde {"citas": []}\n', "of evaluador_citas.md: none"),
    ],
)
def test_archivo_del_evaluador_segun_el_modo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, modo: str, contenido: str, esperado: str
) -> None:
    ruta = _archivo(tmp_path, "e.md", contenido)
    linea = _una_linea(monkeypatch, {"FICHAS_EVALUADOR": modo, EVALUADOR: str(ruta)})
    assert linea.startswith(f"{EVALUADOR}=") and esperado in linea


def test_el_evaluador_nunca_lleva_el_prompt_del_generador(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    texto = "Redacta la ficha con estas reglas:\n{criterios}\n"
    generador = _archivo(tmp_path, "g.md", texto)
    linea = _una_linea(monkeypatch, {GENERADOR: str(generador), EVALUADOR: str(generador)})
    assert linea.startswith(f"{EVALUADOR}=") and "the evaluator never sees" in linea
    evaluador = _archivo(tmp_path, "e.md", "Corrige esto.\n" + texto)
    linea = _una_linea(monkeypatch, {EVALUADOR: str(evaluador)})
    assert "the evaluator never sees the generator's prompt" in linea


def test_la_candidata_se_comprueba_con_su_modo_y_hereda_el_archivo_vivo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A candidate that changes the evaluator's mode inherits the live evaluator file, written
    for the live mode: refused on the candidate's line, which says so."""
    vivo = _archivo(tmp_path, "e.md", "Corrige:\n{criterios}\n")
    linea = _una_linea(
        monkeypatch,
        {EVALUADOR: str(vivo), "FICHAS_CANDIDATA_EVALUADOR": "rubrica"},
    )
    assert linea.startswith(f"{CAND_EVALUADOR} is not set: expected only the placeholders of ")
    assert linea.endswith("it inherits FICHAS_PROMPT_EVALUADOR_ARCHIVO")
    rubrica = _archivo(tmp_path, "r.md", "Tres preguntas.\n")
    monkeypatch.setenv(CAND_EVALUADOR, str(rubrica))
    assert cargar_ajustes().candidata_prompt_evaluador_archivo == rubrica
    monkeypatch.setenv(CAND_EVALUADOR, str(tmp_path / "falta.md"))
    linea = _una_linea(monkeypatch, {})
    assert linea.startswith(f"{CAND_EVALUADOR}=") and "a readable file" in linea


def test_la_candidata_del_generador_se_comprueba_y_se_aplica(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    malo = _archivo(tmp_path, "malo.md", "Sin reglas.\n")
    linea = _una_linea(
        monkeypatch, {CAND_GENERADOR: str(malo), "FICHAS_CANDIDATA_PROPORCION": "0.1"}
    )
    assert linea.startswith(f"{CAND_GENERADOR}=") and "{criterios}" in linea
    bueno = _archivo(tmp_path, "bueno.md", "Reglas:\n{criterios}\n")
    monkeypatch.setenv(CAND_GENERADOR, str(bueno))
    s = cargar_ajustes()
    cand = candidata(s)
    assert cand is not None and s.prompt_generador_archivo is None
    assert cand.prompt_generador_archivo == bueno and cand.prompt_evaluador_archivo is None


def test_una_proporcion_solo_con_el_mismo_archivo_vivo_se_rechaza(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ruta = _archivo(tmp_path, "g.md", "Reglas:\n{criterios}\n")
    linea = _una_linea(
        monkeypatch,
        {GENERADOR: str(ruta), CAND_GENERADOR: str(ruta), "FICHAS_CANDIDATA_PROPORCION": "0.2"},
    )
    assert linea.startswith("FICHAS_CANDIDATA_PROPORCION=")


# -- every subcommand, through the real entry point ----------------------------------------

# Per subcommand of ``herramientas.cli.SUBCOMANDOS`` that loads its settings: arguments that
# reach the settings ({d}: the test's folder, {p}: a port nothing listens on), and what it says
# once past them with a good prompt file: its own next step, failing fast where it needs a
# broker or an LLM (none here), done where it needs neither (``migrar``, on SQLite).
CASOS: dict[tuple[str, ...], tuple[str, int, str]] = {
    ("procesar",): ("procesar --espera-llm 1 {d}/vacio.jsonl", 3, "unavailable after"),
    ("worker",): ("worker", 4, "unreachable after"),
    ("producir",): ("producir {d}/vacio.jsonl", 4, "nothing sent"),
    ("demo",): ("demo --feed {d}/vacio.jsonl", 1, "has no lines"),
    ("informe",): ("informe --kafka 127.0.0.1:{p} --timeout 1", 1, "Unable to bootstrap"),
    ("migrar",): ("migrar", 0, ""),
    ("evaluar",): (
        "evaluar --modo evaluador --limite 1 --espera-llm 1 --salida {d}/evaluacion.json",
        3,
        "LLM unavailable",
    ),
    ("calibrar",): ("calibrar {d}/falta.json", 2, "cannot read it"),
    ("puerta", "promover"): (
        "puerta promover --de a --a b --kafka 127.0.0.1:{p}",
        4,
        "Kafka unreachable",
    ),
    ("puerta",): ("puerta retener * --motivo prueba --kafka 127.0.0.1:{p}", 4, "Kafka unreachable"),
}
# The subcommands that do not check prompt files, and why.
SIN_PROMPTS = {
    ("llm-local",): "serves a model file; reads no FICHAS_* setting",
    ("revisor",): "the review app uses no prompt ('revision' may not import 'grafo'): "
    "infra.config still refuses a path it cannot open",
}


def test_cada_subcomando_tiene_su_caso() -> None:
    """A new subcommand joins ``CASOS`` (it loads its settings through
    ``herramientas.arranque``) or says in ``SIN_PROMPTS`` why it checks no prompt file."""
    assert {s.palabras for s in SUBCOMANDOS} == set(CASOS) | set(SIN_PROMPTS)


@pytest.mark.lento
@pytest.mark.parametrize("palabras", sorted(CASOS), ids=" ".join)
def test_un_archivo_de_prompt_malo_no_deja_arrancar_ningun_comando(
    palabras: tuple[str, ...], tmp_path: Path
) -> None:
    """A bad file: one line naming its variable, exit 2; a good one: past the start."""
    argumentos, codigo, dice = CASOS[palabras]
    (tmp_path / "vacio.jsonl").write_text("", encoding="utf-8")
    malo = _archivo(tmp_path, "malo.md", "Escribe la ficha de {producto}.\n")
    bueno = _archivo(tmp_path, "bueno.md", "Reglas:\n{criterios}\n")
    argv = argumentos.format(d=tmp_path, p=free_port()).split()
    proc = _fichas(argv, tmp_path, malo)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        f"fichas {' '.join(palabras)}: {GENERADOR}={str(malo)!r} is not valid: expected only "
        "the placeholders of generador.md: {criterios}, {max_titulo}, {max_descripcion} "
        "(it has {producto}; write a literal brace as {{ or }})"
    ]
    proc = _fichas(argv, tmp_path, bueno)
    assert f"{GENERADOR}={str(bueno)!r} is not valid" not in proc.stderr, proc.stderr
    assert (proc.returncode, dice in proc.stderr) == (codigo, True), proc.stderr[-2000:]


def _fichas(argv: list[str], carpeta: Path, prompt: Path) -> subprocess.CompletedProcess[str]:
    """``fichas ARGV`` with ``prompt`` as the generator's file, no broker and no LLM."""
    puerto = free_port()
    env = entorno(
        data_dir=carpeta / "datos",
        FICHAS_PROMPT_GENERADOR_ARCHIVO=str(prompt),
        FICHAS_KAFKA_BROKERS=f"127.0.0.1:{puerto}",
        FICHAS_KAFKA_ESPERA_S="1",
        FICHAS_LLM_URL=f"http://127.0.0.1:{puerto}/v1",
        FICHAS_PUERTA="veredicto",
    )
    proc = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", *argv],
        env=env,
        cwd=REPO,
        capture_output=True,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


def test_solo_el_arranque_carga_los_ajustes() -> None:
    """No command module loads its settings but through ``herramientas.arranque`` (the review
    app aside, which reads no prompt setting), so none can skip the prompt files' check."""
    permitidos = {REPO / "herramientas" / "arranque.py", REPO / "revision" / "web" / "app.py"}
    cargas = {"load_settings", "load_settings_or_report"}
    fuera = [
        f"{archivo.relative_to(REPO)}:{nodo.lineno}"
        for paquete in ("herramientas", "stream", "revision", "puerta", "grafo")
        for archivo in sorted((REPO / paquete).rglob("*.py"))
        if archivo not in permitidos
        for nodo in ast.walk(ast.parse(archivo.read_text(encoding="utf-8")))
        if (isinstance(nodo, ast.Name) and nodo.id in cargas)
        or (isinstance(nodo, ast.alias) and nodo.name in cargas)
    ]
    assert fuera == []
    revision = "".join(a.read_text(encoding="utf-8") for a in (REPO / "revision").rglob("*.py"))
    assert "prompt_generador_archivo" not in revision
    assert "prompt_evaluador_archivo" not in revision
