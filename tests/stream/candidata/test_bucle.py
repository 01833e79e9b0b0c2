"""The candidate loop's pure parts: routing by SKU, its settings, its key, its record.

The routing share is checked against the exact (Clopper-Pearson) binomial interval at 99.9 %:
a correct hash fails it once in a thousand runs of a fresh set of SKUs; the set here is fixed,
so the test is deterministic and fails only if the routing rule changes.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from unittest import mock

import pytest

from esquemas import EventoCambio, FichaEnRevision
from esquemas.constantes import DESTINO_PUBLICADAS, DESTINO_REVISION
from esquemas.estado_puerta import ClavePuerta
from grafo import Resultado
from grafo.mensajes import prompt_del_evaluador, prompt_generador
from harness import forkserver
from harness.entorno import entorno
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from infra.config import ConfigError, Settings, load_settings
from stream.candidata.ajustes import candidata, candidata_concurrencia
from stream.candidata.bucle import (
    a_candidata,
    comprobar,
    misma_clave_declarada,
    prefijo_hilo,
    registro_candidata,
)
from stream.gobierno.clave import clave_de
from stream.gobierno.runtime import build_processor

REPO = Path(__file__).resolve().parents[3]
SKUS = [f"SKU-{i:05d}" for i in range(2000)]
NIVEL = 0.999


def _beta_cdf(x: float, a: float, b: float) -> float:
    """Regularised incomplete beta I_x(a, b), by Lentz's continued fraction (Numerical
    Recipes 6.4): exact to ~1e-12 for the sizes here, with no SciPy."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _beta_cdf(1 - x, b, a)
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
    front = math.exp(ln + b * math.log1p(-x)) / a
    tiny = 1e-300
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c if abs(c) > tiny else tiny
        f *= c * d
        if abs(1.0 - c * d) < 1e-15:
            break
    return front * (f - 1.0)


def _beta_ppf(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b), by bisection on ``_beta_cdf``."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if _beta_cdf(mid, a, b) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, nivel: float) -> tuple[float, float]:
    """The exact two-sided interval of a binomial proportion after ``k`` of ``n``."""
    alfa = 1 - nivel
    bajo = 0.0 if k == 0 else _beta_ppf(alfa / 2, k, n - k + 1)
    alto = 1.0 if k == n else _beta_ppf(1 - alfa / 2, k + 1, n - k)
    return bajo, alto


def test_el_intervalo_exacto_es_el_de_referencia() -> None:
    """The helper against published values: k=3, n=10 at 95 % is (0.0667, 0.6525)."""
    bajo, alto = clopper_pearson(3, 10, 0.95)
    assert abs(bajo - 0.066739) < 1e-5 and abs(alto - 0.652453) < 1e-5


@pytest.mark.parametrize("proporcion", [0.1, 0.3])
def test_la_proporcion_cae_en_su_intervalo_binomial(proporcion: float) -> None:
    k = sum(a_candidata(sku, proporcion) for sku in SKUS)
    bajo, alto = clopper_pearson(k, len(SKUS), NIVEL)
    assert bajo <= proporcion <= alto, (k, bajo, alto)


def test_el_mismo_sku_va_siempre_por_el_mismo_camino() -> None:
    """A pure function of the SKU: the same answer on every call, for a share of 0 nobody, of
    1 everybody, and a SKU routed at 0.1 stays routed at 0.3 (a wider share only adds SKUs)."""
    for sku in SKUS[:200]:
        assert a_candidata(sku, 0.3) == a_candidata(sku, 0.3)
        assert not a_candidata(sku, 0.0) and a_candidata(sku, 1.0)
        assert not a_candidata(sku, 0.1) or a_candidata(sku, 0.3)


def test_la_regla_de_reparto_no_cambia_entre_versiones() -> None:
    """Pinned: a release that changed the hash would move SKUs between the loops mid-run."""
    elegidos = [i for i in range(12) if a_candidata(f"SKU-{i:05d}", 0.3)]
    assert elegidos == [2, 6, 9, 10], "the routing rule changed"


def _settings(**env: str) -> Settings:
    with mock.patch.dict(os.environ, env, clear=True):
        return load_settings()


def test_sin_proporcion_no_hay_candidata() -> None:
    assert candidata(_settings(FICHAS_CANDIDATA_LLM_MODELO="otro")) is None


def test_la_candidata_son_los_ajustes_vivos_con_sus_cambios() -> None:
    viva = _settings(
        FICHAS_CANDIDATA_PROPORCION="0.3",
        FICHAS_CANDIDATA_LLM_MODELO="otro",
        FICHAS_CANDIDATA_EVALUADOR="rubrica",
        FICHAS_CANDIDATA_MAX_INTENTOS="2",
        FICHAS_CONCURRENCIA="40",
    )
    ajustes = candidata(viva)
    assert ajustes is not None
    assert (ajustes.llm_modelo, ajustes.evaluador, ajustes.evaluador_rubrica) == (
        "otro",
        "rubrica",
        True,
    )
    assert ajustes.max_intentos == 2 and ajustes.llm_url == viva.llm_url
    assert ajustes.candidata_proporcion == 0
    assert candidata_concurrencia(viva) == 4  # a tenth of FICHAS_CONCURRENCIA
    assert clave_de(ajustes, "x") != clave_de(viva, "x")


def test_ajustes_de_la_candidata_que_no_valen_una_linea_cada_uno() -> None:
    with pytest.raises(ConfigError) as error:
        _settings(
            FICHAS_CANDIDATA_PROPORCION="1.5",
            FICHAS_CANDIDATA_CONCURRENCIA="-1",
            FICHAS_CANDIDATA_LLM_URL="localhost:8000",
            FICHAS_CANDIDATA_MAX_INTENTOS="0",
            FICHAS_CANDIDATA_EVALUADOR="juez",
        )
    lineas = error.value.lines
    assert len(lineas) == 5, lineas
    for variable in (
        "FICHAS_CANDIDATA_PROPORCION='1.5'",
        "FICHAS_CANDIDATA_CONCURRENCIA='-1'",
        "FICHAS_CANDIDATA_LLM_URL='localhost:8000'",
        "FICHAS_CANDIDATA_MAX_INTENTOS='0'",
        "FICHAS_CANDIDATA_EVALUADOR='juez'",
    ):
        assert sum(linea.startswith(variable) for linea in lineas) == 1, (variable, lineas)


def test_la_senal_heredada_con_otro_evaluador_se_rechaza() -> None:
    with pytest.raises(ConfigError, match=r"FICHAS_CANDIDATA_EVALUADOR_SENAL.*inherits"):
        _settings(FICHAS_EVALUADOR_SENAL="true", FICHAS_CANDIDATA_EVALUADOR="citas")


def _fichas_worker(**env: str) -> subprocess.CompletedProcess[str]:
    """``fichas worker`` as people run it, with only these variables."""
    base = entorno()
    return forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "worker"],
        env=base | env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_fichas_worker_sale_con_2_si_la_candidata_es_la_clave_viva() -> None:
    """A share with every override equal to its live value (or none): exit 2, one line."""
    proc = _fichas_worker(
        FICHAS_CANDIDATA_PROPORCION="0.3",
        FICHAS_LLM_MODELO="qwen",
        FICHAS_CANDIDATA_LLM_MODELO="qwen",
    )
    assert proc.returncode == 2, proc.stderr
    lineas = proc.stderr.strip().splitlines()
    assert lineas == [
        "fichas worker: FICHAS_CANDIDATA_PROPORCION='0.3' is not valid: expected 0 while no "
        "FICHAS_CANDIDATA_* setting differs from its live FICHAS_* value (the candidate would "
        "run under the live key)"
    ]


def test_misma_clave_por_sus_ajustes_se_rechaza_al_arrancar() -> None:
    """The worker's own check, on the key itself: an override that differs as text but not in
    the key (here the rubric set both ways) is refused."""
    viva = _settings(FICHAS_EVALUADOR="rubrica")
    copia = viva.model_copy(update={"candidata_proporcion": 0.2})
    igual = viva.model_copy(update={"evaluador": "rubrica"})
    assert misma_clave_declarada(copia, igual)
    with pytest.raises(ConfigError, match="the candidate's gate key is the live key"):
        comprobar(copia, igual)
    otra_url = igual.model_copy(update={"llm_url": "http://otro:8000/v1"})
    assert not misma_clave_declarada(copia, otra_url)  # its served model decides, at run time


def test_los_hilos_de_la_candidata_no_son_los_vivos() -> None:
    ajustes = candidata(
        _settings(FICHAS_CANDIDATA_PROPORCION="0.3", FICHAS_CANDIDATA_LLM_MODELO="otro")
    )
    assert ajustes is not None
    prefijo = prefijo_hilo(ajustes)
    assert prefijo.startswith("candidata-") and prefijo.endswith(":")
    assert prefijo == prefijo_hilo(ajustes)  # stable: a crash's thread is resumed
    otra = ajustes.model_copy(update={"llm_modelo": "otra"})
    assert prefijo_hilo(otra) != prefijo  # another candidate never resumes it


def _resultado(destino: str, candidata: bool) -> Resultado:
    salida = {"sku": "S1", "event_id": "e1", "version": 1, "motivo": "sin_garantia"}
    if candidata:
        salida["candidata"] = True
    return Resultado(destino, salida, "S1", "e1", 1, 1, False)


def test_solo_un_item_candidato_va_al_topic_de_revision() -> None:
    settings = _settings()
    record = registro_candidata(settings, _resultado(DESTINO_REVISION, True))
    assert record.topic == settings.topic_revision and record.key == b"S1"
    for destino, marcada in ((DESTINO_PUBLICADAS, True), (DESTINO_REVISION, False)):
        with pytest.raises(ValueError, match="not a candidate item"):
            registro_candidata(settings, _resultado(destino, marcada))


def test_el_campo_candidata_se_omite_en_lo_vivo() -> None:
    assert "candidata" not in FichaEnRevision.model_json_schema()["required"]
    assert FichaEnRevision.model_fields["candidata"].default is False


# -- a candidate with another prompt text (FICHAS_CANDIDATA_PROMPT_*_ARCHIVO) ---------------


def _plantilla(nombre: str) -> str:
    """The package's template, as the image ships it."""
    return resources.files("grafo.prompts").joinpath(nombre).read_text(encoding="utf-8")


def _archivo(tmp_path: Path, nombre: str, texto: str) -> Path:
    ruta = tmp_path / nombre
    ruta.write_text(texto, encoding="utf-8")
    return ruta


def _arreglada(texto: str) -> str:
    """The template with one line fixed, as a prompt change would."""
    return texto.replace("escribes la ficha que se publica", "escribes, breve, la ficha", 1)


def test_el_archivo_con_el_texto_del_paquete_es_la_misma_clave(tmp_path: Path) -> None:
    """Baking a tried prompt into a later image keeps its gates: same text, same key."""
    viva = _settings()
    generador = _archivo(tmp_path, "g.md", _plantilla("generador.md"))
    evaluador = _archivo(tmp_path, "e.md", _plantilla("evaluador.md"))
    con_archivos = _settings(
        FICHAS_PROMPT_GENERADOR_ARCHIVO=str(generador),
        FICHAS_PROMPT_EVALUADOR_ARCHIVO=str(evaluador),
    )
    assert clave_de(con_archivos, "x") == clave_de(viva, "x")
    arreglado = _archivo(tmp_path, "g2.md", _arreglada(_plantilla("generador.md")))
    otra = clave_de(_settings(FICHAS_PROMPT_GENERADOR_ARCHIVO=str(arreglado)), "x")
    assert otra != clave_de(viva, "x")
    assert otra.prompt_evaluador_sha256 == clave_de(viva, "x").prompt_evaluador_sha256


def test_la_candidata_con_otro_prompt_tiene_otra_clave(tmp_path: Path) -> None:
    arreglado = _archivo(tmp_path, "g.md", _arreglada(_plantilla("generador.md")))
    viva = _settings(
        FICHAS_CANDIDATA_PROPORCION="0.3", FICHAS_CANDIDATA_PROMPT_GENERADOR_ARCHIVO=str(arreglado)
    )
    ajustes = candidata(viva)
    assert ajustes is not None and ajustes.prompt_generador_archivo == arreglado
    comprobar(viva, ajustes)  # another key: it starts
    assert clave_de(ajustes, "x") != clave_de(viva, "x")
    # Promotion: the candidate's file as the live one gives the candidate's key.
    promovida = _settings(FICHAS_PROMPT_GENERADOR_ARCHIVO=str(arreglado))
    assert clave_de(promovida, "x") == clave_de(ajustes, "x")


def test_la_candidata_con_el_texto_del_paquete_es_la_clave_viva(tmp_path: Path) -> None:
    """A file whose text is the package's template is the live loop: refused at start-up."""
    copia = _archivo(tmp_path, "g.md", _plantilla("generador.md"))
    viva = _settings(
        FICHAS_CANDIDATA_PROPORCION="0.3", FICHAS_CANDIDATA_PROMPT_GENERADOR_ARCHIVO=str(copia)
    )
    ajustes = candidata(viva)
    assert ajustes is not None
    with pytest.raises(ConfigError, match="the candidate's gate key is the live key"):
        comprobar(viva, ajustes)


async def test_los_agentes_del_bucle_envian_el_texto_del_archivo(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """``fichas procesar``'s and the worker's loop (``build_processor``): the generator's system
    prompt sent is the file's, the evaluator's its own file's, and the outcome's key is
    ``clave_de`` of the same settings."""
    generador = _arreglada(_plantilla("generador.md"))
    evaluador = "Corrige fichas, MARCA-EV-9:\n{criterios}\nResponde solo con el JSON pedido.\n"
    settings = Settings(
        llm_url=fake_llm.url,
        llm_modelo="fake",
        data_dir=tmp_path / "datos",
        puerta="veredicto",
        prompt_generador_archivo=_archivo(tmp_path, "g.md", generador),
        prompt_evaluador_archivo=_archivo(tmp_path, "e.md", evaluador),
    )
    clave = clave_de(settings, None)
    async with build_processor(settings, clave) as proc:
        resultado = await proc.procesar(EventoCambio.model_validate(evento_dict("PRA-1")))
    (gen,) = fake_llm.requests(agent="generador", sku="PRA-1")
    (ev,) = fake_llm.requests(agent="evaluador", sku="PRA-1")
    assert gen["body"]["messages"][0] == {
        "role": "system",
        "content": prompt_generador(False, generador),
    }
    assert "escribes, breve, la ficha" in gen["body"]["messages"][0]["content"]
    assert ev["body"]["messages"][0]["content"] == prompt_del_evaluador(False, False, evaluador)
    assert "MARCA-EV-9" in ev["body"]["messages"][0]["content"]
    assert "escribes, breve" not in json.dumps(ev["body"], ensure_ascii=False)
    assert ClavePuerta.model_validate(resultado.salida["clave"]) == clave


def test_fichas_worker_sale_con_2_si_un_archivo_de_prompt_no_vale(tmp_path: Path) -> None:
    """Through the entry point: a bad prompt file is one line naming its variable, exit 2."""
    malo = _archivo(tmp_path, "g.md", "Escribe la ficha de {producto}.\n")
    proc = _fichas_worker(
        FICHAS_CANDIDATA_PROPORCION="0.3", FICHAS_CANDIDATA_PROMPT_GENERADOR_ARCHIVO=str(malo)
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"fichas worker: FICHAS_CANDIDATA_PROMPT_GENERADOR_ARCHIVO={str(malo)!r} is not valid: "
        "expected only the placeholders of generador.md: {criterios}, {max_titulo}, "
        "{max_descripcion} (it has {producto}; write a literal brace as {{ or }})"
    ]
