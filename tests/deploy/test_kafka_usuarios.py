"""The Kafka users of k8s/: one ``KafkaUser`` per component, ACLs that name what the
configuration names, the deployment guide's table equal to the manifest, each workload entering
with its own user's mounted credentials, and KEDA authenticating as the configuration says.

The ACLs themselves are proven sufficient, and each one needed by some step, against a real
secured broker in tests/infra/test_seguridad_kafka.py; here the manifests must agree with each
other, with the code's settings and with the guide.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.acls import kafka_users, names_for
from harness.kustomize import renderizar, sin_hash
from infra.config import Settings

RAIZ = Path(__file__).resolve().parents[2]
K8S = RAIZ / "k8s"
GUIA = RAIZ / "docs" / "despliegue.md"
EJEMPLOS = {
    "scram": K8S / "base" / "kafka-usuarios" / "secretos.example.yaml",
    "tls": K8S / "componentes" / "kafka-tls-mutuo" / "secretos.example.yaml",
}
RENDERS = {
    "base": ("base", ("base/calibrar", "base/operador"), "scram"),
    "produccion": (
        "overlays/produccion",
        ("overlays/produccion/calibrar", "overlays/produccion/operador"),
        "scram",
    ),
    "tls-mutuo": (
        "overlays/produccion-tls-mutuo",
        ("overlays/produccion-tls-mutuo/calibrar", "overlays/produccion-tls-mutuo/operador"),
        "tls",
    ),
}
# The workload of each component and the Secret its pods take the Kafka credentials from.
COMPONENTES = {
    ("Deployment", "fichas"): "fichas-kafka-worker",
    ("Deployment", "fichas-revisor"): "fichas-kafka-revisor",
    ("Job", "fichas-calibrar"): "fichas-kafka-calibrar",
    ("Pod", "fichas-operador"): "fichas-kafka-operador",
}
# Containers that read the user's files themselves (Kafka's tools, client.properties), with no
# FICHAS_KAFKA_USUARIO.
SIN_VARIABLES = {("fichas-operador", "kafka")}
KEDA_SASL = {"PLAIN": "plaintext", "SCRAM-SHA-256": "scram_sha256", "SCRAM-SHA-512": "scram_sha512"}


def _render(nombre: str) -> list[dict[str, Any]]:
    despliegue, aparte, _ = RENDERS[nombre]
    unicos: dict[tuple[str, str, str], dict[str, Any]] = {}
    for d in (despliegue, *aparte):  # the Job and the toolbox render the deployment's ConfigMaps
        for o in renderizar(K8S / d):
            unicos.setdefault(
                (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]), o
            )
    return list(unicos.values())


def _uno(objetos: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (objeto,) = [
        o for o in objetos if o["kind"] == kind and sin_hash(o["metadata"]["name"]) == name
    ]
    return objeto


def _ejemplo(modo: str) -> dict[str, dict[str, str]]:
    """Secret name -> its example's keys and values (the base's CA comes with either)."""
    secretos = {}
    for ruta in (EJEMPLOS["scram"], EJEMPLOS[modo]):
        for s in yaml.safe_load_all(ruta.read_text(encoding="utf-8")):
            secretos[s["metadata"]["name"]] = s["stringData"]
    return secretos


def _acl(usuario: str, acl: dict[str, Any]) -> tuple[str, str, str, str, frozenset[str]]:
    recurso = acl["resource"]
    patron = recurso.get("patternType", "literal")
    return usuario, recurso["type"], recurso.get("name", ""), patron, frozenset(acl["operations"])


def test_la_tabla_de_la_guia_es_la_del_manifiesto():
    """docs/despliegue.md, step 1: one row per ACL entry of kafkausers.yaml, nothing more."""
    texto = GUIA.read_text(encoding="utf-8")
    tabla = texto[texto.index("<!-- tabla de ACL") :].split("\n\n")[0]
    fila = re.compile(r"^\| `([^`]+)` \| (\w+) \| `([^`]*)`( \(prefijo\))? \| ([^|]+) \|")
    guia = set()
    for linea in tabla.splitlines():
        m = fila.match(linea)
        if m:
            operaciones = frozenset(o.strip() for o in m.group(5).split(","))
            patron = "prefix" if m.group(4) else "literal"
            guia.add((m.group(1), m.group(2), m.group(3), patron, operaciones))
    manifiesto = {_acl(u, a) for u, acls in kafka_users().items() for a in acls}
    assert guia == manifiesto
    assert set(kafka_users()) == {
        "fichas-worker",
        "fichas-revisor",
        "fichas-calibrar",
        "fichas-keda",
        "fichas-operador",
    }


@pytest.mark.parametrize("overlay", list(RENDERS))
def test_las_acl_nombran_lo_que_la_configuracion_nombra(overlay: str):
    """Every ACL names a topic, the group, the app's group or the transactional-id prefix of
    the rendered ConfigMap: a topic or group renamed in the ConfigMap without its ACLs fails."""
    objetos = _render(overlay)
    datos = _uno(objetos, "ConfigMap", "fichas-config")["data"]
    campos = {k.removeprefix("FICHAS_").lower(): v for k, v in datos.items() if "_TOPIC_" in k}
    settings = Settings.model_construct(grupo=datos["FICHAS_GRUPO"], **campos)
    permitidos = {(t, p, nombre) for (t, p, _), nombre in names_for(settings).items()}
    for usuario in [o for o in objetos if o["kind"] == "KafkaUser"]:
        for acl in usuario["spec"]["authorization"]["acls"]:
            r = acl["resource"]
            clave = (r["type"], r.get("patternType", "literal"), r.get("name"))
            assert clave in permitidos, f"{usuario['metadata']['name']}: {clave}"


@pytest.mark.parametrize("overlay", list(RENDERS))
def test_cada_componente_entra_con_su_usuario(overlay: str):
    """Each workload (its init containers too) takes FICHAS_KAFKA_USUARIO and its mounted files
    from its component's Secret, whose user is a KafkaUser of the render; SCRAM users with the
    ConfigMap's mechanism, certificate users with mutual TLS."""
    objetos = _render(overlay)
    modo = RENDERS[overlay][2]
    ejemplos = _ejemplo(modo)
    usuarios = {o["metadata"]["name"]: o for o in objetos if o["kind"] == "KafkaUser"}
    tipo = {"scram": "scram-sha-512", "tls": "tls"}[modo]
    assert {u["spec"]["authentication"]["type"] for u in usuarios.values()} == {tipo}
    datos = _uno(objetos, "ConfigMap", "fichas-config")["data"]
    assert (datos["FICHAS_KAFKA_SEGURIDAD"], datos["FICHAS_KAFKA_SASL_MECANISMO"]) == {
        "scram": ("SASL_SSL", "SCRAM-SHA-512"),
        "tls": ("SSL", ""),
    }[modo]
    for (kind, nombre), secreto in COMPONENTES.items():
        objeto = _uno(objetos, kind, nombre)
        pod = objeto["spec"] if kind == "Pod" else objeto["spec"]["template"]["spec"]
        volumenes = {v["name"]: v for v in pod["volumes"]}
        assert volumenes["kafka-usuario"]["secret"]["secretName"] == secreto
        assert volumenes["kafka-ca"]["secret"]["secretName"] == "fichas-kafka-ca"
        for c in [*pod.get("initContainers", []), *pod["containers"]]:
            montados = {m["name"] for m in c["volumeMounts"]}
            assert {"kafka-usuario", "kafka-ca"} <= montados, f"{nombre} {c['name']}"
            if (nombre, c["name"]) in SIN_VARIABLES:
                continue
            (ref,) = [
                e["valueFrom"]["secretKeyRef"]
                for e in c["env"]
                if e["name"] == "FICHAS_KAFKA_USUARIO"
            ]
            assert (ref["name"], ref["key"]) == (secreto, "username"), f"{nombre} {c['name']}"
        if modo == "scram":
            assert ejemplos[secreto]["username"] in usuarios
        else:  # the user is the certificate's subject: no username, or SSL would refuse it
            assert "username" not in ejemplos[secreto]
            assert {"user.crt", "user.key"} <= set(ejemplos[secreto])


@pytest.mark.parametrize("overlay", list(RENDERS))
def test_keda_se_autentica_como_dice_la_configuracion(overlay: str):
    """The scaler's trigger names the TriggerAuthentication; its mechanism and TLS are the
    ConfigMap's; its credentials are fichas-keda's (a KafkaUser with Describe only)."""
    objetos = _render(overlay)
    modo = RENDERS[overlay][2]
    datos = _uno(objetos, "ConfigMap", "fichas-config")["data"]
    (disparador,) = _uno(objetos, "ScaledObject", "fichas")["spec"]["triggers"]
    auth = _uno(objetos, "TriggerAuthentication", disparador["authenticationRef"]["name"])
    metadatos = disparador["metadata"]
    tls = datos["FICHAS_KAFKA_SEGURIDAD"] in ("SSL", "SASL_SSL")
    assert metadatos["tls"] == ("enable" if tls else "disable")
    mecanismo = datos["FICHAS_KAFKA_SASL_MECANISMO"]
    assert metadatos.get("sasl", "none") == (KEDA_SASL[mecanismo] if mecanismo else "none")
    refs = {r["parameter"]: (r["name"], r["key"]) for r in auth["spec"]["secretTargetRef"]}
    esperado = {"ca": ("fichas-kafka-ca", "ca.crt")}
    if modo == "scram":
        esperado |= {p: ("fichas-kafka-keda", p) for p in ("username", "password")}
    else:
        esperado |= {
            "cert": ("fichas-kafka-keda", "user.crt"),
            "key": ("fichas-kafka-keda", "user.key"),
        }
    assert refs == esperado
    ejemplos = _ejemplo(modo)
    assert all(clave in ejemplos[secreto] for secreto, clave in refs.values())
    keda = _uno(objetos, "KafkaUser", "fichas-keda")
    operaciones = {o for a in keda["spec"]["authorization"]["acls"] for o in a["operations"]}
    assert operaciones == {"Describe"}
    if modo == "scram":
        assert ejemplos["fichas-kafka-keda"]["username"] == "fichas-keda"
