"""The production image as real containers, run the way the Kubernetes manifests run it.

``imagen()`` builds the image once per process (``scripts/imagen.sh build``, which skips a
build whose context has not changed) and gives its reference. ``opciones`` turns a rendered
pod and container of ``k8s/base`` into ``podman run`` options: its user and group, the
read-only root, the capabilities dropped, no privilege escalation, each emptyDir as a tmpfs at
its mount path; the network is the host's, so a container reaches the tests' broker,
PostgreSQL and fake LLM on 127.0.0.1. ``entorno`` is the container's ConfigMap with what the
test changes (its services instead of the cluster's); the Secrets' files are the cluster's
and are left out. ``Contenedor`` is one ``scripts/imagen.sh run`` process: its output in a
log file, ``/health/ready`` awaited, SIGTERM as the kubelet sends it (podman passes it on),
the exit code. docs/despliegue.md, "The image".
"""

from __future__ import annotations

import functools
import re
import subprocess
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.kustomize import renderizar
from harness.procesos import CommandProcess

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "imagen.sh"


@functools.cache
def imagen() -> str:
    """The image's reference, built (or found up to date) once per process."""
    salida = subprocess.run(
        ["bash", str(SCRIPT), "build"], capture_output=True, text=True, timeout=1800
    )
    if salida.returncode != 0:
        raise RuntimeError(f"scripts/imagen.sh build failed:\n{salida.stderr[-6000:]}")
    return salida.stdout.strip().splitlines()[-1]


def instrucciones_dockerfile(dockerfile: Path = REPO / "Dockerfile") -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (INSTRUCTION, rest), continuation lines joined and
    comments dropped: what tests/deploy reads of it."""
    lineas: list[str] = []
    actual = ""
    for ln in dockerfile.read_text(encoding="utf-8").splitlines():
        if not actual and (not ln.strip() or ln.lstrip().startswith("#")):
            continue
        if ln.rstrip().endswith("\\"):
            actual += ln.rstrip()[:-1] + " "
            continue
        lineas.append(actual + ln)
        actual = ""
    res = []
    for ln in lineas:
        instr, _, resto = ln.strip().partition(" ")
        res.append((instr.upper(), resto.strip()))
    return res


@functools.cache
def motor() -> str:
    """The engine ``scripts/imagen.sh`` uses here: podman, or docker where only it answers."""
    salida = subprocess.run(
        ["bash", str(SCRIPT), "motor"], capture_output=True, text=True, timeout=60, check=True
    )
    return salida.stdout.strip()


def marca_ca() -> str:
    """The line ``scripts/imagen.sh`` puts on top of the CA bundle it passes as a secret."""
    texto = SCRIPT.read_text(encoding="utf-8")
    encontrada = re.search(r'^MARCA="([^"]+)"$', texto, re.MULTILINE)
    assert encontrada, "scripts/imagen.sh defines no MARCA"
    return encontrada.group(1)


def podman(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``podman ARGS`` on the checkout's image store and settings (``imagen.sh podman``)."""
    return subprocess.run(
        ["bash", str(SCRIPT), "podman", *args], capture_output=True, text=True, timeout=timeout
    )


def ejecutar(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``podman run --rm ARGS`` to its end, as containers run here (``imagen.sh run``); a
    container still running at ``timeout`` is removed, not left behind."""
    nombre = f"fichas-prueba-{uuid.uuid4().hex[:10]}"
    argv = ["bash", str(SCRIPT), "run", "--rm", f"--name={nombre}", *args]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        podman("rm", "--force", "--ignore", nombre, timeout=60)
        raise


def manifiestos() -> list[dict[str, Any]]:
    """``k8s/base`` and the calibrar Job beside it (``k8s/base/calibrar``, created by hand and
    not part of the base) as ``kubectl apply -k`` would send them."""
    return [*renderizar(REPO / "k8s" / "base"), *renderizar(REPO / "k8s" / "base" / "calibrar")]


def pod(objetos: list[dict[str, Any]], kind: str, nombre: str) -> dict[str, Any]:
    """The pod spec of the Deployment or Job ``nombre``."""
    (objeto,) = [o for o in objetos if o["kind"] == kind and o["metadata"]["name"] == nombre]
    spec: dict[str, Any] = objeto["spec"]["template"]["spec"]
    return spec


def contenedor(spec: dict[str, Any], nombre: str) -> dict[str, Any]:
    """A container (or init container) of a pod spec, by name."""
    todos = [*spec.get("initContainers", []), *spec["containers"]]
    (uno,) = [c for c in todos if c["name"] == nombre]
    return uno


def _tamano(limite: str) -> str:
    """A Kubernetes quantity (``256Mi``, ``1Gi``) as tmpfs's ``size=`` (``256m``, ``1g``)."""
    numero, unidad = re.fullmatch(r"(\d+)([KMG]i)?", limite).groups()  # type: ignore[union-attr]
    return numero + {"Ki": "k", "Mi": "m", "Gi": "g", None: ""}[unidad]


def opciones(spec: dict[str, Any], c: dict[str, Any]) -> list[str]:
    """``podman run`` options for container ``c`` of pod ``spec``, as the kubelet runs it.

    Fails on a setting it does not know how to reproduce, so a manifest that starts asking
    for one is noticed rather than silently run another way.
    """
    seguridad = {**spec.get("securityContext", {}), **c.get("securityContext", {})}
    uid, gid = seguridad["runAsUser"], seguridad.get("runAsGroup", seguridad["runAsUser"])
    assert seguridad.get("runAsNonRoot") and uid != 0, "the manifests run as non-root"
    # The kubelet runs the pod's probes, never the image's HEALTHCHECK.
    res = ["--network=host", "--pull=never", "--no-healthcheck", f"--user={uid}:{gid}"]
    if seguridad.get("readOnlyRootFilesystem"):
        # podman would add tmpfs of its own on /tmp, /var/tmp and /run; the kubelet does not.
        res += ["--read-only", *(["--read-only-tmpfs=false"] if motor() == "podman" else [])]
    capacidades = seguridad.get("capabilities", {})
    res += [f"--cap-drop={x.lower()}" for x in capacidades.get("drop", [])]
    res += [f"--cap-add={x.lower()}" for x in capacidades.get("add", [])]
    if seguridad.get("allowPrivilegeEscalation") is False:
        res.append("--security-opt=no-new-privileges")
    perfil = seguridad.get("seccompProfile", {}).get("type", "RuntimeDefault")
    assert perfil == "RuntimeDefault", f"seccomp {perfil}: podman runs its default profile"
    volumenes = {v["name"]: v for v in spec.get("volumes", [])}
    for montaje in c.get("volumeMounts", []):
        volumen = volumenes[montaje["name"]]
        if "emptyDir" in volumen:
            limite = volumen["emptyDir"].get("sizeLimit")
            tamano = f",size={_tamano(limite)}" if limite else ""
            res.append(f"--tmpfs={montaje['mountPath']}:rw,nosuid,nodev,mode=0777{tamano}")
        else:
            # A Secret's files (Kafka's password and CA, the DSN, the LLM key): the tests'
            # broker needs neither, and the DSN and key come in ``cambios`` as variables.
            assert "secret" in volumen, f"volume {montaje['name']}: only emptyDir and secret"
    if "command" in c:
        res.append(f"--entrypoint={c['command'][0]}")
    return res


def argumentos(c: dict[str, Any]) -> list[str]:
    """What follows the image on the command line: the rest of ``command``, then ``args``."""
    return [*c.get("command", [])[1:], *c.get("args", [])]


def entorno(
    objetos: list[dict[str, Any]], c: dict[str, Any], cambios: Mapping[str, str]
) -> dict[str, str]:
    """The container's environment: its ConfigMaps and plain values, then ``cambios``.

    Values from Secrets are the cluster's: a test that needs one (the DSN) gives it in
    ``cambios``, with its ``_ARCHIVO`` emptied (the Secret's files are not mounted).
    """
    mapas = {o["metadata"]["name"]: o.get("data", {}) for o in objetos if o["kind"] == "ConfigMap"}
    res: dict[str, str] = {}
    for fuente in c.get("envFrom", []):
        nombre = fuente["configMapRef"]["name"]
        # A generated ConfigMap has its content's hash after its name where another render
        # (the Job's, apart from the base) still names it plainly.
        (mapa,) = [m for n, m in mapas.items() if n == nombre or n.startswith(f"{nombre}-")]
        res.update(mapa)
    res.update({e["name"]: e["value"] for e in c.get("env", []) if "value" in e})
    res.update(cambios)
    return res


class Contenedor(CommandProcess):
    """One container of the image, ``scripts/imagen.sh run --rm`` in a process of its own, with
    the handle of a ``fichas`` process (``wait_ready``, ``metrics``, ``terminate``: SIGTERM as
    the kubelet stops a pod, podman passing it on).

    Its standard output goes to ``salida_path`` (``log_path`` with ``.out``), its standard
    error (the logs) to ``log_path``: kept apart, a long line of one is never cut by the other.
    """

    name = "container"

    def __init__(
        self,
        opciones_run: list[str],
        argumentos_run: list[str],
        env: Mapping[str, str],
        log_path: Path,
        puerto: int = 0,
    ) -> None:
        super().__init__(dict(env), puerto, log_path)
        self.nombre = f"fichas-prueba-{uuid.uuid4().hex[:10]}"
        self.opciones = opciones_run
        self.argumentos = argumentos_run
        self.salida_path = log_path.with_suffix(".out")

    def start(self, extra_env: dict[str, str] | None = None, barrera: Path | None = None) -> None:
        """Start the container; its environment goes in a file (mode 0600), not on argv."""
        assert barrera is None, "a container is not started at a barrier"
        env_file = self.log_path.with_suffix(".env")
        env_file.touch(mode=0o600)
        variables = {**self.env, **(extra_env or {})}
        env_file.write_text("".join(f"{k}={v}\n" for k, v in variables.items()), encoding="utf-8")
        argv = ["bash", str(SCRIPT), "run", "--rm", f"--name={self.nombre}"]
        argv += [*self.opciones, f"--env-file={env_file}", imagen(), *self.argumentos]
        with self.log_path.open("ab") as log, self.salida_path.open("ab") as salida:
            self.proc = subprocess.Popen(argv, stdout=salida, stderr=log, stdin=subprocess.DEVNULL)

    def wait(self, timeout: float) -> int:
        """The container's exit code (podman run's own)."""
        assert self.proc is not None
        return int(self.proc.wait(timeout=timeout))

    def kill(self) -> None:
        """SIGKILL to the container (podman's process would leave it running)."""
        podman("kill", self.nombre, timeout=60)
        assert self.proc is not None
        self.proc.wait(timeout=60)

    def close(self) -> None:
        """Kill the container if it still runs (a failed test must not leave it behind)."""
        if self.alive():
            try:
                self.kill()
            except subprocess.TimeoutExpired:
                assert self.proc is not None
                self.proc.kill()
        podman("rm", "--force", "--ignore", self.nombre, timeout=60)

    def salida(self) -> str:
        """Everything the container wrote to its standard output."""
        return self.salida_path.read_text(encoding="utf-8", errors="replace")

    def log_tail(self, lines: int = 80) -> str:
        """The last lines of the container's standard output and of its log."""
        partes = []
        for path in (self.salida_path, self.log_path):
            try:
                texto = path.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            partes.append(f"--- {path.name}\n" + "\n".join(texto))
        return "\n".join(partes)
