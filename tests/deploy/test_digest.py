"""Every image a production render runs is named by digest and pulled ``IfNotPresent``.

A tag can be pushed again with other content; a digest cannot: what runs is what was reviewed
(docs/despliegue.md, step 5). The production renders are every folder under k8s/overlays that
``kubectl apply -k`` is given (the deployment, its calibrar Job and toolbox Pod, the Job that
publishes, and the examples that add each Component of k8s/componentes the way the guide adds
it: produccion-completa, produccion-tls-mutuo/*). Wherever a rendered object names an image (a
container's ``image``, a CloudNativePG Cluster's ``imageName``) the reference ends in
``@sha256:`` and 64 hex digits, and ``imagePullPolicy: IfNotPresent`` stands next to it.
k8s/base (tags, never applied alone) and docker-compose.yml (the demo) keep their tags; the tag
written next to each third-party digest is the one they name. A copy of the manifests with one
image back to a tag, or one policy changed, shows the check naming what broke.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.kustomize import renderizar

RAIZ = Path(__file__).resolve().parents[2]
K8S = RAIZ / "k8s"
OVERLAYS = K8S / "overlays"
COMPONENTES = K8S / "componentes"
# Every production folder someone may apply: each kustomization.yaml under k8s/overlays that is
# not a Component (entorno/ and configuracion/ are rendered inside the others).
PRODUCCION = sorted(
    k.parent.relative_to(K8S).as_posix()
    for k in OVERLAYS.rglob("kustomization.yaml")
    if yaml.safe_load(k.read_text(encoding="utf-8")).get("kind") != "Component"
)
DIGEST = re.compile(r"[^@\s]+@sha256:[0-9a-f]{64}")
POLITICA = "IfNotPresent"
CEROS = "sha256:" + "0" * 64

Objetos = list[dict[str, Any]]


def referencias(nodo: Any, ruta: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, the mapping) for every mapping of an object that names an image, at any depth:
    containers, init containers, and CRDs' own fields (the Cluster's ``imageName``)."""
    if isinstance(nodo, dict):
        if isinstance(nodo.get("image"), str) or isinstance(nodo.get("imageName"), str):
            yield ruta, nodo
        for clave, valor in nodo.items():
            yield from referencias(valor, f"{ruta}.{clave}")
    elif isinstance(nodo, list):
        for i, valor in enumerate(nodo):
            yield from referencias(valor, f"{ruta}[{i}]")


def imagenes(objetos: Objetos) -> list[tuple[str, str, str | None]]:
    """(where, image reference, pull policy) of every image the objects name."""
    res = []
    for o in objetos:
        donde = f"{o['kind']}/{o['metadata']['name']}"
        for ruta, nodo in referencias(o.get("spec", {}), "spec"):
            imagen = nodo.get("image") or nodo.get("imageName")
            res.append((f"{donde} {ruta}", imagen, nodo.get("imagePullPolicy")))
    return res


def nombre(imagen: str) -> str:
    """The repository of a reference, without tag or digest (a registry's port stays)."""
    sin_digest = imagen.split("@")[0]
    repositorio, _, etiqueta = sin_digest.rpartition(":")
    return repositorio if repositorio and "/" not in etiqueta else sin_digest


def sin_fijar(objetos: Objetos) -> list[str]:
    """One line per image named by tag (or by nothing) and per pull policy that is not the one."""
    problemas = []
    for donde, imagen, politica in imagenes(objetos):
        if not DIGEST.fullmatch(imagen):
            problemas.append(f"{donde}: {imagen} is not pinned by digest")
        if politica != POLITICA:
            problemas.append(f"{donde}: imagePullPolicy {politica}, not {POLITICA}")
    return problemas


@pytest.mark.parametrize("carpeta", PRODUCCION)
def test_cada_imagen_de_produccion_por_digest_y_ifnotpresent(carpeta: str) -> None:
    assert sin_fijar(renderizar(K8S / carpeta)) == []


def test_las_renderizaciones_nombran_cada_imagen_que_se_fija() -> None:
    """The walk finds every image production runs, the project's and the third parties'; the
    renders checked are the guide's (each Component of k8s/componentes added to at least one)."""
    nombres = {
        nombre(imagen)
        for carpeta in PRODUCCION
        for _, imagen, _ in imagenes(renderizar(K8S / carpeta))
    }
    assert nombres == {
        "registro.interno/fichas/fichas",
        "apache/kafka",
        "vllm/vllm-openai",
        "ghcr.io/cloudnative-pg/postgresql",
    }
    usados = set()
    for k in OVERLAYS.rglob("kustomization.yaml"):
        for c in yaml.safe_load(k.read_text(encoding="utf-8")).get("components", []):
            usados.add((k.parent / c).resolve())
    for componente in sorted(p for p in COMPONENTES.iterdir() if p.is_dir()):
        assert componente.resolve() in usados, f"no production render adds {componente.name}"


def test_una_sola_imagen_de_fichas_en_produccion() -> None:
    """The deployment, the Jobs and the toolbox run the same fichas image (change them together:
    docs/despliegue.md, step 5)."""
    fichas = {
        imagen
        for carpeta in PRODUCCION
        for _, imagen, _ in imagenes(renderizar(K8S / carpeta))
        if "/fichas/" in imagen
    }
    assert len(fichas) == 1, fichas


def _etiquetas_de_desarrollo() -> set[str]:
    """``name:tag`` of each third-party image the unpinned renders name: docker-compose.yml's
    defaults (``${VAR:-image}``) and k8s/base's toolbox."""
    compose = yaml.safe_load((RAIZ / "docker-compose.yml").read_text(encoding="utf-8"))
    res = set()
    for servicio in compose["services"].values():
        defecto = re.fullmatch(r"\$\{\w+:-([^}]+)\}", str(servicio.get("image", "")))
        if defecto:
            res.add(defecto.group(1))
    res |= {imagen for _, imagen, _ in imagenes(renderizar(K8S / "base" / "operador"))}
    return {r for r in res if "fichas" not in r}


def test_junto_a_cada_digest_la_etiqueta_de_desarrollo() -> None:
    """Production runs the version the demo and the base name: the tag written next to each
    third-party digest (a comment, or the Cluster's tag) is theirs, so bumping one without the
    other fails here."""
    textos = "\n".join(
        p.read_text(encoding="utf-8")
        for p in (*OVERLAYS.rglob("*.yaml"), *COMPONENTES.rglob("*.yaml"))
    )
    produccion = {
        nombre(imagen)
        for carpeta in PRODUCCION
        for _, imagen, _ in imagenes(renderizar(K8S / carpeta))
    }
    desarrollo = _etiquetas_de_desarrollo()
    assert {"apache/kafka:4.1.1", "vllm/vllm-openai:v0.33.0"} <= desarrollo
    for etiqueta in sorted(desarrollo):
        if (
            nombre(etiqueta) in produccion
        ):  # the demo's own images (postgres, prometheus) are not deployed
            assert etiqueta in textos, f"no production digest says it is {etiqueta}"


def _cambiar(ruta: Path, antes: str, despues: str) -> None:
    texto = ruta.read_text(encoding="utf-8")
    assert texto.count(antes) == 1, (ruta, antes)
    ruta.write_text(texto.replace(antes, despues), encoding="utf-8")


ROTURAS = {
    "vllm-por-etiqueta": (
        "componentes/vllm/kustomization.yaml",
        f"digest: {CEROS}",
        "newTag: v0.33.0",
        "overlays/produccion-completa",
        "Deployment/vllm spec.template.spec.containers[0]: vllm/vllm-openai:v0.33.0 is not pinned",
    ),
    "kafka-sin-digest": (
        "overlays/produccion/operador/kustomization.yaml",
        "  - name: apache/kafka\n",
        "  - name: apache/kafka-sin-uso\n",
        "overlays/produccion-tls-mutuo/operador",
        "Pod/fichas-operador spec.containers[1]: apache/kafka:4.1.1 is not pinned",
    ),
    "cluster-por-etiqueta": (
        "componentes/postgres-cnpg/cluster.yaml",
        f"postgresql:16.4@{CEROS}",
        "postgresql:16.4",
        "overlays/produccion-completa",
        "Cluster/fichas-pg spec: ghcr.io/cloudnative-pg/postgresql:16.4 is not pinned",
    ),
    "fichas-por-etiqueta": (
        "overlays/produccion/calibrar/kustomization.yaml",
        f"digest: {CEROS}",
        'newTag: "0.1.0"',
        "overlays/calibrar-publicar",
        "Job/fichas-calibrar-publicar spec.template.spec.containers[0]: "
        "registro.interno/fichas/fichas:0.1.0 is not pinned",
    ),
    "vllm-always": (
        "componentes/vllm/deployment.yaml",
        "imagePullPolicy: IfNotPresent",
        "imagePullPolicy: Always",
        "overlays/produccion-completa",
        "Deployment/vllm spec.template.spec.containers[0]: imagePullPolicy Always, not "
        "IfNotPresent",
    ),
    "cluster-sin-politica": (
        "componentes/postgres-cnpg/cluster.yaml",
        "  imagePullPolicy: IfNotPresent\n",
        "",
        "overlays/produccion-completa",
        "Cluster/fichas-pg spec: imagePullPolicy None, not IfNotPresent",
    ),
}


@pytest.mark.parametrize("rotura", sorted(ROTURAS))
def test_una_imagen_vuelta_a_etiqueta_no_pasa(rotura: str, tmp_path: Path) -> None:
    """A copy of k8s/ with one thing undone renders with exactly that one line from the check."""
    fichero, antes, despues, carpeta, linea = ROTURAS[rotura]
    copia = tmp_path / "k8s"
    shutil.copytree(K8S, copia)
    shutil.copytree(RAIZ / "deploy" / "grafana", tmp_path / "deploy" / "grafana")
    _cambiar(copia / fichero, antes, despues)
    problemas = sin_fijar(renderizar(copia / carpeta))
    assert len(problemas) == 1 and problemas[0].startswith(linea), problemas
