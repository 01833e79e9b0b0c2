"""The app on PostgreSQL (FICHAS_POSTGRES_DSN), as deployed: store, users, sessions, versions."""

from __future__ import annotations

import re
import urllib.parse

import pytest

from harness.revisor import RevisorProcess, ficha_en_revision, revisor_env
from harness.topicos import Topics
from infra.network import free_port
from tests.revision.conftest import (
    CLAVE,
    decisiones_topic,
    esperar,
    leer,
    pedir,
    producir,
    topics_env,
)

pytestmark = [pytest.mark.kafka, pytest.mark.postgres]


def _login(url: str, usuario: str) -> dict[str, str]:
    _, headers, cuerpo = pedir(url + "/login")
    csrf_login = headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
    token = re.search(r'name="csrf" value="([^"]+)"', cuerpo).group(1)
    status, headers, _ = pedir(
        url + "/login",
        data={"csrf": token, "usuario": usuario, "clave": CLAVE, "siguiente": "/"},
        cookies={"fichas_csrf_login": csrf_login},
    )
    assert status == 303
    sesion = headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
    return {"fichas_sesion": sesion}


def test_aprobar_con_postgres(kafka, postgres_dsn, tmp_path):
    topics = Topics()
    env = revisor_env(
        kafka.bootstrap, topics_env(topics), tmp_path / "datos", FICHAS_POSTGRES_DSN=postgres_dsn
    )
    app = RevisorProcess(env, free_port(), tmp_path / "revisor.log")
    usuario = f"pg-{topics.prefix}"
    app.add_user(usuario, CLAVE)
    app.start()
    try:
        app.wait_ready()
        item = ficha_en_revision(f"PG-{topics.prefix}")
        producir(kafka, topics.revision, [item])
        cookies = _login(app.url, usuario)
        url_item = app.url + "/item?" + urllib.parse.urlencode({"id": item["event_id"]})
        cuerpo = esperar(
            lambda: (r := pedir(url_item, cookies=cookies))[0] == 200 and r[2], "the item stored"
        )
        csrf = re.search(r'name="csrf" value="([^"]+)"', cuerpo).group(1)
        ficha = item["ficha"]
        datos = {
            "csrf": csrf,
            "event_id": item["event_id"],
            "titulo": ficha["titulo"],
            "descripcion": ficha["descripcion"],
            **{f"atributo__{k}": v for k, v in ficha["atributos"].items()},
        }
        for _ in range(2):  # a double submit changes nothing
            status, _, _ = pedir(app.url + "/item/aprobar", data=datos, cookies=cookies)
        assert status == 409
        decisiones = [
            r for r in leer(kafka, decisiones_topic(topics)) if r["event_id"] == item["event_id"]
        ]
        assert [d["decision"] for d in decisiones] == ["aprobada"]
        # The ficha to publish travels in the decision (the worker publishes it, never the app).
        publicacion = decisiones[0]["publicacion"]
        assert publicacion["revision"] == {
            "revisor": usuario,
            "decision": "aprobada",
            "decidida_en": publicacion["publicada_en"],
        }
        assert not leer(kafka, topics.publicadas)
        assert 'fichas_revision_decisions_total{decision="aprobada",type="revision"}' in (
            app.metrics()
        )
    finally:
        app.stop()
