"""contrato/asyncapi.yaml: valid for the AsyncAPI parser, usable to generate a client, and saying
what the code does (topics, settings, headers, schemas).

The tools are contrato/asyncapi.cjs, run by Node on the npm packages ``@asyncapi/parser`` and
``@asyncapi/modelina`` pinned in contrato/package.json (what the AsyncAPI CLI validates and
generates with); scripts/test.sh installs them (``npm ci --prefix contrato``). Where they are
missing the tool tests are skipped on a developer's machine and fail in CI (CI=true).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from esquemas.constantes import (
    CABECERA_ESQUEMA,
    CABECERA_ESQUEMA_VERSION,
    CABECERA_EVENT_ID,
    CABECERA_SKU,
    CABECERA_VERSION,
    ESQUEMA_ESTADO_PUERTA,
    ESQUEMA_EVENTO_RECHAZADO,
    ESQUEMA_FICHA_EN_REVISION,
    ESQUEMA_FICHA_PUBLICADA,
    ESQUEMA_VERSION,
    ESQUEMAS,
    FAMILIA_TODAS,
    SKU_PATTERN,
    TOPIC_PUERTA,
)
from esquemas.estado_puerta import ClavePuerta, id_puerta, id_retencion
from infra.config import Settings
from infra.kafka.topics import topic_configs

REPO = Path(__file__).resolve().parents[2]
CONTRATO = REPO / "contrato"
ASYNCAPI = CONTRATO / "asyncapi.yaml"
HERRAMIENTA = CONTRATO / "asyncapi.cjs"
LIBRERIAS = [CONTRATO / "node_modules" / "@asyncapi" / nombre for nombre in ("parser", "modelina")]
EN_CI = os.environ.get("CI", "").lower() == "true"


def _documento() -> dict[str, Any]:
    return dict(yaml.safe_load(ASYNCAPI.read_text(encoding="utf-8")))


def _cli(args: list[str], cwd: Path = CONTRATO) -> subprocess.CompletedProcess[str]:
    """Run contrato/asyncapi.cjs (``validate ...`` or ``models python ...``) with Node."""
    if not all(p.is_dir() for p in LIBRERIAS) or shutil.which("node") is None:
        mensaje = "the AsyncAPI parser and Modelina are not installed (npm ci --prefix contrato)"
        if EN_CI:
            pytest.fail(mensaje + "; in CI they are required")
        pytest.skip(mensaje)
    return subprocess.run(
        ["node", str(HERRAMIENTA), *args],
        cwd=cwd,
        env=dict(os.environ, NO_COLOR="1"),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.lento  # runs Node: a second or two each
def test_asyncapi_valida_con_el_parser() -> None:
    r = _cli(["validate", "asyncapi.yaml", "--fail-severity", "warn"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 errors, 0 warnings" in r.stdout + r.stderr


@pytest.mark.lento  # runs Node: a second or two each
def test_el_parser_detecta_errores_en_el_documento_y_en_los_esquemas(tmp_path: Path) -> None:
    """The validator follows the $refs into the schema files: it is not a yes to everything."""
    copia = tmp_path / "contrato"
    shutil.copytree(CONTRATO / "esquemas", copia / "esquemas")
    texto = ASYNCAPI.read_text(encoding="utf-8")
    texto = texto.replace("./esquemas/FichaEnRevision.json", "./esquemas/NoExiste.json")
    (copia / "asyncapi.yaml").write_text(texto, encoding="utf-8")
    roto = json.loads((copia / "esquemas" / "FichaPublicada.json").read_text(encoding="utf-8"))
    roto["properties"]["version"]["type"] = "entero"
    (copia / "esquemas" / "FichaPublicada.json").write_text(json.dumps(roto), encoding="utf-8")
    r = _cli(["validate", str(copia / "asyncapi.yaml")])
    salida = r.stdout + r.stderr
    assert r.returncode == 1, salida
    errores = re.search(r"^(\d+) errors, ", r.stdout, re.MULTILINE)
    assert errores is not None and int(errores.group(1)) >= 2, salida  # the $ref and the type
    assert "NoExiste.json" in salida
    assert "properties.version.type" in salida


@pytest.mark.lento  # runs Node: a second or two each
def test_genera_modelos_de_cliente_que_leen_un_mensaje_real(tmp_path: Path) -> None:
    """A team generates its client models from the document alone, and they read our values."""
    paquete = f"modelos_{uuid.uuid4().hex[:8]}"
    r = _cli(["models", "python", "asyncapi.yaml", str(tmp_path / paquete)])
    assert r.returncode == 0, r.stdout + r.stderr
    generados = {p.stem for p in (tmp_path / paquete).glob("*.py")}
    assert set(ESQUEMAS) <= generados, generados
    sys.path.insert(0, str(tmp_path))
    try:
        modulo = importlib.import_module(f"{paquete}.FichaPublicada")
    finally:
        sys.path.remove(str(tmp_path))
    valor = {
        "event_id": "e1",
        "sku": "S1",
        "version": 2,
        "familia": "botellas",
        "ficha": {"titulo": "Botella", "descripcion": "Para agua.", "atributos": {"color": "azul"}},
        "intentos": 1,
        "criterios_version": "v1",
        "modelo": "m",
        "publicada_en": "2026-11-30T12:00:00Z",
        "revision": None,
    }
    ficha = modulo.FichaPublicada(valor)
    assert (ficha.sku, ficha.version, ficha.ficha.titulo) == ("S1", 2, "Botella")


def test_los_topics_y_su_configuracion_son_los_del_worker() -> None:
    canales = _documento()["channels"]
    settings = Settings()
    direcciones = {c["address"] for c in canales.values()}
    configs = topic_configs(settings)
    # fichas.puerta is written by fichas calibrar and the reviewer app (the worker may create it
    # too: then it is in configs as well); fichas.decisiones the worker creates and consumes.
    assert direcciones == set(configs) | {TOPIC_PUERTA}
    for canal in canales.values():
        config = configs.get(canal["address"])
        if config is None:
            continue
        declarada = canal["bindings"]["kafka"]["topicConfiguration"]
        assert declarada["cleanup.policy"] == [config["cleanup.policy"]], canal["address"]
        if "retention.ms" in config:
            assert declarada["retention.ms"] == int(config["retention.ms"]), canal["address"]
    assert canales["fichasPublicadas"]["bindings"]["kafka"]["topicConfiguration"] == {
        "cleanup.policy": ["compact"]
    }
    operacion = _documento()["operations"]["recibirCambio"]
    assert operacion["bindings"]["kafka"]["groupId"]["const"] == settings.grupo


def test_mensajes_esquemas_y_cabeceras_son_los_del_codigo() -> None:
    componentes = _documento()["components"]
    referidos = set()
    for mensaje in componentes["messages"].values():
        ref = mensaje["payload"]["schema"]["$ref"]
        nombre = re.fullmatch(r"\./esquemas/(\w+)\.json", ref).group(1)  # type: ignore[union-attr]
        assert (CONTRATO / "esquemas" / f"{nombre}.json").exists()
        assert mensaje["name"] == nombre
        referidos.add(nombre)
    assert referidos == set(ESQUEMAS)
    esquemas = componentes["schemas"]
    assert esquemas["ClaveSku"]["pattern"] == SKU_PATTERN
    base = esquemas["CabecerasEsquema"]
    assert set(base["properties"]) == {CABECERA_ESQUEMA, CABECERA_ESQUEMA_VERSION}
    assert set(base["properties"][CABECERA_ESQUEMA]["enum"]) == {
        ESQUEMA_FICHA_PUBLICADA,
        ESQUEMA_FICHA_EN_REVISION,
        ESQUEMA_EVENTO_RECHAZADO,
        ESQUEMA_ESTADO_PUERTA,
    }
    assert re.fullmatch(base["properties"][CABECERA_ESQUEMA_VERSION]["pattern"], ESQUEMA_VERSION)
    (_, resultado) = esquemas["CabecerasResultado"]["allOf"]
    assert set(resultado["required"]) == {CABECERA_SKU, CABECERA_VERSION, CABECERA_EVENT_ID}
    assert _documento()["info"]["version"].startswith(ESQUEMA_VERSION + ".")


def test_el_topic_de_las_puertas_es_compactado_y_su_clave_el_id_de_la_puerta() -> None:
    """v1.2: fichas.puerta keeps the newest state per gate; its key is ``id_puerta``'s."""
    documento = _documento()
    (canal,) = [c for c in documento["channels"].values() if c["address"] == TOPIC_PUERTA]
    assert canal["bindings"]["kafka"]["topicConfiguration"]["cleanup.policy"] == ["compact"]
    (mensaje,) = canal["messages"].values()
    assert mensaje["$ref"] == "#/components/messages/EstadoPuerta"
    clave_kafka = documento["components"]["messages"]["EstadoPuerta"]["bindings"]["kafka"]["key"]
    assert clave_kafka["$ref"] == "#/components/schemas/IdPuerta"
    patron = documento["components"]["schemas"]["IdPuerta"]["pattern"]
    clave = ClavePuerta(
        modelo="qwen|raro",
        prompt_evaluador_sha256="a" * 64,
        criterios_version="v1",
        modo_evaluador="rubrica",
    )
    for familia in ("zapatillas", FAMILIA_TODAS):
        assert re.fullmatch(patron, id_puerta(familia, clave))
        assert re.fullmatch(patron, id_retencion(familia, clave))  # v1.5: a hold's own key
    assert not re.fullmatch(patron, "zapatillas")
    assert not re.fullmatch(patron, id_puerta("zapatillas", clave) + "|abierta")
    acciones = {
        o["action"]
        for o in documento["operations"].values()
        if o["channel"]["$ref"] == "#/channels/fichasPuerta"
    }
    assert acciones == {"send", "receive"}
