"""The Kubernetes manifests run the code that exists: no drift between k8s/ and the code.

For every overlay, rendered by kustomize (harness.kustomize), every container of every
workload (Deployments, the Job, their init containers):

- every ``FICHAS_*`` variable it gets (ConfigMap, ``env``, ``$FICHAS_*`` in a shell script) is
  a field of the settings class (``Settings``: pydantic ignores unknown variables, so a
  misspelt one would be dropped without a word);
- its command line (the image's entrypoint is ``fichas``; a ``/bin/sh -c`` script is split at
  ``&&`` and ``;``) parses with the real argparse parser of the command it runs, values
  included (``--proxies`` with the app's own network parser);
- every ``FICHAS_*_ARCHIVO`` it gets names a file inside a volume it mounts (a Secret's file:
  one of the keys the Secret's example and the volume's ``items`` give);
- the configuration it gets, Secret values taken from the examples (k8s/base/worker/
  secret.example.yaml, k8s/base/kafka-usuarios/secretos.example.yaml) and each mounted file
  replaced by a local one of its kind (a CA, a password, the example's DSN...), is accepted by
  ``load_settings``, the validation ``fichas worker`` and ``fichas revisor`` run.

The last tests break a copy of the rendered output (an unknown variable, an unknown or removed
flag, a value the settings refuse) and check that each is reported.
"""

from __future__ import annotations

import argparse
import copy
import functools
import importlib
import io
import os
import re
import shlex
import tempfile
from contextlib import redirect_stderr
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml

from harness.entorno import entorno as entorno_de_prueba
from harness.kustomize import renderizar, sin_hash
from harness.pki import CertificateAuthority
from infra.config import ConfigError, Settings, load_settings

RAIZ = Path(__file__).resolve().parents[2]
K8S = RAIZ / "k8s"
# Each overlay, with the overlay whose ConfigMap its workloads read (the calibrar Job renders no
# ConfigMap of its own: it reads the one the deployment applied).
OVERLAYS = {
    "base": ("base", "base"),
    "produccion": ("overlays/produccion", "overlays/produccion"),
    "base/calibrar": ("base/calibrar", "base"),
    "produccion/calibrar": ("overlays/produccion/calibrar", "overlays/produccion"),
    "tls-mutuo": ("overlays/produccion-tls-mutuo", "overlays/produccion-tls-mutuo"),
    "tls-mutuo/calibrar": (
        "overlays/produccion-tls-mutuo/calibrar",
        "overlays/produccion-tls-mutuo",
    ),
    "calibrar-publicar": ("overlays/calibrar-publicar", "overlays/produccion"),
}
# The Secrets the manifests expect, from their examples; with mutual TLS the users' Secrets are
# the component's (a certificate and a key instead of a user and a password).
SECRETOS = (
    K8S / "base" / "worker" / "secret.example.yaml",
    K8S / "base" / "kafka-usuarios" / "secretos.example.yaml",
)
SECRETOS_TLS_MUTUO = (*SECRETOS, K8S / "componentes" / "kafka-tls-mutuo" / "secretos.example.yaml")
VARIABLE = re.compile(r"\$\{?(FICHAS_[A-Z0-9_]+)\}?")


def analizar(argv: list[str]) -> str | None:
    """Parse ``fichas ARGS`` as ``fichas`` would (``herramientas.cli``'s table, then the
    subcommand's own parser): None when it parses, argparse's error if not."""
    from herramientas import cli

    assert argv[0] == "fichas", argv
    subcomando = cli.subcomando_de(argv[1:])
    if subcomando is None:
        parser, args = cli._parser(), argv[1:]
    else:
        modulo = importlib.import_module(subcomando.modulo)
        parser, args = modulo._parser(), argv[1 + len(subcomando.palabras) :]
    salida = io.StringIO()
    try:
        with redirect_stderr(salida):
            parser.parse_args(args)
    except SystemExit:
        lineas = salida.getvalue().strip().splitlines()
        return lineas[-1] if lineas else "argparse exited"
    return None


@dataclass
class Contenedor:
    """One container as the cluster runs it: its command lines and its environment."""

    donde: str
    ordenes: list[list[str]] = field(default_factory=list)
    entorno: dict[str, str] = field(default_factory=dict)
    variables: set[str] = field(default_factory=set)
    montajes: dict[str, dict[str, Any]] = field(default_factory=dict)  # path -> its volume


def secretos_de(rutas: tuple[Path, ...] = SECRETOS) -> dict[tuple[str, str], str]:
    """(Secret, key) -> the example's value, of every Secret the manifests expect to exist; a
    later example replaces a Secret of an earlier one whole."""
    por_nombre: dict[str, dict[str, str]] = {}
    for ruta in rutas:
        for secreto in yaml.safe_load_all(ruta.read_text(encoding="utf-8")):
            por_nombre[secreto["metadata"]["name"]] = secreto["stringData"]
    return {(n, k): v for n, datos in por_nombre.items() for k, v in datos.items()}


def _ordenes(c: dict[str, Any], entorno: dict[str, str], variables: set[str]) -> list[list[str]]:
    """The ``fichas`` command lines a container runs (the image's entrypoint is ``fichas``)."""
    orden = list(c.get("command", []))
    args = list(c.get("args", []))
    if not orden:
        return [["fichas", *args]]
    if orden[:2] == ["/bin/sh", "-c"]:
        lexer = shlex.shlex(" ".join(orden[2:] + args), posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        trozos: list[list[str]] = [[]]
        for token in lexer:
            if token in {"&&", "||", ";", "|"}:
                trozos.append([])
            else:
                variables.update(VARIABLE.findall(token))
                trozos[-1].append(VARIABLE.sub(lambda m: entorno.get(m.group(1), ""), token))
        return [t for t in trozos if t[:1] == ["fichas"]]
    return [orden + args]


def contenedores(
    objetos: list[dict[str, Any]],
    configmaps: list[dict[str, Any]],
    secretos: dict[tuple[str, str], str] | None = None,
) -> list[Contenedor]:
    """Every container of every workload in ``objetos``, with what it runs and sees."""
    datos = {
        o["metadata"]["name"]: o.get("data", {}) for o in configmaps if o["kind"] == "ConfigMap"
    }
    secretos = secretos_de() if secretos is None else secretos
    res = []
    for o in objetos:
        if o["kind"] not in {"Deployment", "Job", "StatefulSet", "CronJob"}:
            continue
        pod = o["spec"]["template"]["spec"]
        for c in [*pod.get("initContainers", []), *pod["containers"]]:
            donde = f"{o['kind']}/{o['metadata']['name']} container {c['name']}"
            entorno: dict[str, str] = {}
            for fuente in c.get("envFrom", []):
                nombre = fuente["configMapRef"]["name"]
                assert nombre in datos, f"{donde}: no ConfigMap {nombre} in the render"
                entorno.update(datos[nombre])
            for e in c.get("env", []):
                if "value" in e:
                    entorno[e["name"]] = e["value"]
                elif "secretKeyRef" in e.get("valueFrom", {}):
                    ref = e["valueFrom"]["secretKeyRef"]
                    if (ref["name"], ref["key"]) in secretos:
                        entorno[e["name"]] = secretos[(ref["name"], ref["key"])]
                    else:  # a key the Secret may lack (optional), or drift
                        assert ref.get("optional"), f"{donde}: no {ref} in the Secret examples"
                elif "configMapKeyRef" in e.get("valueFrom", {}):
                    ref = e["valueFrom"]["configMapKeyRef"]
                    entorno[e["name"]] = datos[ref["name"]][ref["key"]]
            variables = {k for k in entorno if k.startswith("FICHAS_")}
            ordenes = _ordenes(c, entorno, variables)
            volumenes = {v["name"]: v for v in pod.get("volumes", [])}
            montajes = {m["mountPath"]: volumenes[m["name"]] for m in c.get("volumeMounts", [])}
            res.append(Contenedor(donde, ordenes, entorno, variables, montajes))
    return res


def clave_montada(
    c: Contenedor, ruta: str, secretos: dict[tuple[str, str], str]
) -> tuple[str, str] | None:
    """(Secret, key) whose file the container sees at ``ruta`` (None: not a Secret's file)."""
    for punto, volumen in c.montajes.items():
        if not ruta.startswith(punto.rstrip("/") + "/") or "secret" not in volumen:
            continue
        nombre = ruta[len(punto.rstrip("/")) + 1 :]
        items = volumen["secret"].get("items")
        claves = {i["path"]: i["key"] for i in items} if items else {k: k for _, k in secretos}
        return (volumen["secret"]["secretName"], claves[nombre]) if nombre in claves else None
    return None


def montado(
    c: Contenedor, variable: str, ruta: str, secretos: dict[tuple[str, str], str]
) -> str | None:
    """Why the file ``ruta`` of ``variable`` is not one the container mounts (None if it is)."""
    for punto, volumen in c.montajes.items():
        if not ruta.startswith(punto.rstrip("/") + "/"):
            continue
        if "secret" not in volumen:
            return None
        if clave_montada(c, ruta, secretos) not in secretos:
            nombre = ruta[len(punto.rstrip("/")) + 1 :]
            secreto = volumen["secret"]["secretName"]
            return f"{variable}={ruta}: the Secret {secreto} mounted at {punto} has no {nombre}"
        return None
    return f"{variable}={ruta} is in no volume the container mounts"


@functools.cache
def _carpeta() -> Path:
    """The folder of this process's stand-ins for mounted files."""
    return Path(tempfile.mkdtemp(prefix="deriva-"))


@functools.cache
def _locales() -> dict[str, str]:
    """A local file of each kind a mounted ``FICHAS_KAFKA_*_ARCHIVO`` names, for
    ``load_settings`` (which reads them): a CA, a client certificate, its key, a password."""
    carpeta = _carpeta()
    ca = CertificateAuthority(carpeta)
    par = ca.issue("fichas-worker")
    clave = carpeta / "password"
    clave.write_text("CAMBIAR")
    return {
        "FICHAS_KAFKA_CA_ARCHIVO": str(ca.cert),
        "FICHAS_KAFKA_CERTIFICADO_ARCHIVO": str(par.cert),
        "FICHAS_KAFKA_CLAVE_PRIVADA_ARCHIVO": str(par.key),
        "FICHAS_KAFKA_CONTRASENA_ARCHIVO": str(clave),
    }


def _local(c: Contenedor, variable: str, ruta: str, secretos: dict[tuple[str, str], str]) -> str:
    """A local stand-in for the mounted file ``ruta``: one of its kind for Kafka's files, else
    (the DSN, the LLM key) the example's value of the Secret key it is, as ``kubectl create
    secret --from-file`` of an ``echo``'d file holds it."""
    if variable in _locales():
        return _locales()[variable]
    clave = clave_montada(c, ruta, secretos)
    if clave is None or clave not in secretos:
        return ruta  # its own line says so
    archivo = _carpeta() / f"{clave[0]}.{clave[1]}"
    archivo.write_text(secretos[clave] + "\n", encoding="utf-8")
    return str(archivo)


def problemas(
    objetos: list[dict[str, Any]],
    configmaps: list[dict[str, Any]],
    secretos: dict[tuple[str, str], str] | None = None,
) -> list[str]:
    """Every drift between these manifests and the code, one line each; empty when none."""
    campos = {f"FICHAS_{nombre.upper()}" for nombre in Settings.model_fields}
    secretos = secretos_de() if secretos is None else secretos
    lineas = []
    for c in contenedores(objetos, configmaps, secretos):
        for variable in sorted(c.variables - campos):
            lineas.append(f"{c.donde}: {variable} is not a setting of the code (Settings)")
        if not c.ordenes:
            lineas.append(f"{c.donde}: runs no fichas command")
        for orden in c.ordenes:
            error = analizar(orden)
            if error is not None:
                lineas.append(f"{c.donde}: {shlex.join(orden)!r}: {error}")
        entorno = dict(c.entorno)
        for variable, ruta in c.entorno.items():
            if variable.endswith("_ARCHIVO") and ruta:
                falta = montado(c, variable, ruta, secretos)
                if falta is not None:
                    lineas.append(f"{c.donde}: {falta}")
                entorno[variable] = _local(c, variable, ruta, secretos)
        propio = entorno_de_prueba()
        with mock.patch.dict(os.environ, {**propio, **entorno}, clear=True):
            try:
                load_settings()
            except ConfigError as exc:
                lineas += [f"{c.donde}: {linea}" for linea in exc.lines]
    return lineas


def _render(nombre: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    propio, de_config = OVERLAYS[nombre]
    return renderizar(K8S / propio), renderizar(K8S / de_config)


def _secretos_de_overlay(nombre: str) -> dict[tuple[str, str], str]:
    return secretos_de(SECRETOS_TLS_MUTUO if nombre.startswith("tls-mutuo") else SECRETOS)


@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_lo_renderizado_corresponde_al_codigo(overlay: str):
    objetos, configmaps = _render(overlay)
    lineas = problemas(objetos, configmaps, _secretos_de_overlay(overlay))
    assert not lineas, "\n".join(lineas)


@pytest.mark.parametrize("overlay", list(OVERLAYS))
def test_cada_contenedor_corre_un_comando_de_fichas(overlay: str):
    """The check above sees every workload: worker, migrar, revisor, calibrar."""
    objetos, configmaps = _render(overlay)
    vistos = contenedores(objetos, configmaps, _secretos_de_overlay(overlay))
    comandos = {orden[1] for c in vistos for orden in c.ordenes}
    esperados = {"calibrar"} if "calibrar" in overlay else {"worker", "migrar", "revisor"}
    assert comandos == esperados


def test_las_variables_de_la_lista_son_las_de_settings():
    """deploy/variables.txt (what compose and the Dockerfile are checked against) is the code's."""
    lista = (RAIZ / "deploy" / "variables.txt").read_text(encoding="utf-8").split()
    assert set(lista) == {f"FICHAS_{n.upper()}" for n in Settings.model_fields}


def _copia_produccion() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    objetos, configmaps = _render("produccion")
    assert not problemas(objetos, configmaps)
    return copy.deepcopy(objetos), copy.deepcopy(configmaps)


def _contenedor(objetos: list[dict[str, Any]], deployment: str) -> dict[str, Any]:
    (dep,) = [
        o for o in objetos if o["kind"] == "Deployment" and o["metadata"]["name"] == deployment
    ]
    return dep["spec"]["template"]["spec"]["containers"][0]


def test_una_variable_desconocida_se_detecta():
    objetos, configmaps = _copia_produccion()
    (cm,) = [o for o in configmaps if sin_hash(o["metadata"]["name"]) == "fichas-config"]
    cm["data"]["FICHAS_CONCURRENCIA_MAX"] = "64"
    lineas = problemas(objetos, configmaps)
    assert any("FICHAS_CONCURRENCIA_MAX is not a setting" in linea for linea in lineas), lineas
    # every container that reads the ConfigMap says it: worker, revisor, and both migrar
    assert len([linea for linea in lineas if "FICHAS_CONCURRENCIA_MAX" in linea]) == 4


def test_un_flag_que_el_codigo_no_tiene_se_detecta():
    """A flag the parser does not know: misspelt in the manifest, or removed from the code."""
    objetos, configmaps = _copia_produccion()
    args = _contenedor(objetos, "fichas-revisor")["args"]
    args[args.index("--proxies")] = "--proxy-de-confianza"
    lineas = problemas(objetos, configmaps)
    assert len(lineas) == 1 and "unrecognized arguments: --proxy-de-confianza" in lineas[0], lineas


def test_un_flag_quitado_del_parser_se_detecta(monkeypatch: pytest.MonkeyPatch):
    """The same manifests against a ``fichas revisor`` whose parser lost ``--proxies``."""
    from revision.web import app

    original = app._parser

    def sin_proxies() -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="fichas revisor")
        for accion in original()._actions:
            if accion.option_strings and "--proxies" not in accion.option_strings:
                if accion.option_strings != ["-h", "--help"]:
                    parser._add_action(accion)
        return parser

    monkeypatch.setattr(app, "_parser", sin_proxies)
    objetos, configmaps = _render("produccion")
    lineas = problemas(objetos, configmaps)
    assert any("unrecognized arguments: --proxies 10.0.0.0/8" in linea for linea in lineas), lineas


def test_un_valor_que_el_codigo_rechaza_se_detecta():
    objetos, configmaps = _copia_produccion()
    args = _contenedor(objetos, "fichas-revisor")["args"]
    args[args.index("--proxies") + 1] = "el-ingress"
    (cm,) = [o for o in configmaps if sin_hash(o["metadata"]["name"]) == "fichas-config"]
    cm["data"]["FICHAS_CONCURRENCIA"] = "treinta y dos"
    lineas = problemas(objetos, configmaps)
    assert any("argument --proxies" in linea for linea in lineas), lineas
    assert any("FICHAS_CONCURRENCIA='treinta y dos' is not valid" in linea for linea in lineas)


def test_un_comando_de_shell_se_lee_como_lo_ejecuta_sh():
    """The publishing calibrar Job's script: the fichas command before ``&&``, its $FICHAS_*
    expanded; the default Job's is an audit that publishes nothing (issue 38)."""
    objetos, configmaps = _render("calibrar-publicar")
    ((job,),) = [[c for c in contenedores(objetos, configmaps) if "Job/" in c.donde]]
    ((orden,),) = [job.ordenes]
    brokers = job.entorno["FICHAS_KAFKA_BROKERS"]
    assert orden[:2] == ["fichas", "calibrar"] and orden[orden.index("--publicar") + 1] == brokers
    assert "--dry-run" not in orden
    assert "FICHAS_KAFKA_BROKERS" in job.variables
    objetos, configmaps = _render("produccion/calibrar")
    ((job,),) = [[c for c in contenedores(objetos, configmaps) if "Job/" in c.donde]]
    ((orden,),) = [job.ordenes]
    assert orden[:2] == ["fichas", "calibrar"] and "--dry-run" in orden
    assert "--publicar" not in orden


def test_un_fichero_que_ningun_volumen_monta_se_detecta():
    """The worker's container without its mount of the Kafka user's Secret: its password file
    would not exist in the pod."""
    objetos, configmaps = _copia_produccion()
    c = _contenedor(objetos, "fichas")
    c["volumeMounts"] = [m for m in c["volumeMounts"] if m["name"] != "kafka-usuario"]
    assert problemas(objetos, configmaps) == [
        "Deployment/fichas container worker: FICHAS_KAFKA_CONTRASENA_ARCHIVO="
        "/etc/fichas/kafka/usuario/password is in no volume the container mounts"
    ]


def test_un_fichero_que_el_secret_no_tiene_se_detecta():
    """A path inside the mount that names no key of the Secret (ca.pem for ca.crt)."""
    objetos, configmaps = _copia_produccion()
    (cm,) = [o for o in configmaps if sin_hash(o["metadata"]["name"]) == "fichas-config"]
    cm["data"]["FICHAS_KAFKA_CA_ARCHIVO"] = "/etc/fichas/kafka/ca/ca.pem"
    lineas = problemas(objetos, configmaps)
    assert len(lineas) == 4, lineas  # worker, revisor and both migrar read the ConfigMap
    assert all(
        linea.endswith(
            "FICHAS_KAFKA_CA_ARCHIVO=/etc/fichas/kafka/ca/ca.pem: the Secret fichas-kafka-ca "
            "mounted at /etc/fichas/kafka/ca has no ca.pem"
        )
        for linea in lineas
    ), lineas
