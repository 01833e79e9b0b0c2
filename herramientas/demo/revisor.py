"""The end of ``fichas demo``: the reviewer app on the run's topics, until Ctrl-C.

A newcomer lands on the queue the demo just filled: the demo adds a reviewer with a fresh
random password, starts ``fichas revisor`` on 127.0.0.1 with the run's topics and data
directory (so it also reads the worker's version record), prints the URL, the user name and the
path of a file holding the password, and waits. The password itself is never printed: a
terminal's output ends up in captured logs and CI artefacts, so it goes to a file only its
owner can read (mode 0600, in the run's data folder). Ctrl-C stops the app together with
everything else the demo started.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from infra.network import free_port, port_open, wait_http

if TYPE_CHECKING:
    from herramientas.demo.servicios import Services

USUARIO = "revisor"
ARCHIVO_CLAVE = "revisor.clave"  # in the run's data folder, mode 0600
PUERTO = 8080
# Every published ficha of the demo also goes to the sample topic: with ten events the
# contract's 2 % would leave the sample queue empty, and the demo is where people try it.
WORKER_ENV = {"FICHAS_MUESTRA_PROPORCION": "1"}


def servir(services: Services, env: Mapping[str, str], codigo: int) -> int:
    """Start the app with the worker's environment ``env``; return ``codigo`` after Ctrl-C."""
    clave = secrets.token_urlsafe(9)
    subprocess.run(
        [sys.executable, "-m", "herramientas.cli", "revisor", "usuarios", USUARIO],
        input=(clave + "\n").encode(),
        env=dict(env),
        check=True,
        capture_output=True,
        timeout=120,
    )
    puerto = PUERTO if not port_open("127.0.0.1", PUERTO) else free_port()
    proc = services.spawn(
        "revisor",
        [sys.executable, "-m", "herramientas.cli", "revisor", "--port", str(puerto)],
        env,
    )
    url = f"http://127.0.0.1:{puerto}/"
    archivo = guardar_clave(services.log_dir / ARCHIVO_CLAVE, clave)
    wait_http(url + "health/ready", 120, "fichas revisor", lambda: proc.poll() is None)
    print(
        f"\nRevisión: {url}  usuario {USUARIO}  contraseña en {archivo}\n"
        f"(cola de revision_manual y de la muestra de esta ejecución; log en "
        f"{services.log_dir / 'revisor.log'}; Ctrl-C para terminar)",
        flush=True,
    )
    try:
        while True:
            services.check()
            time.sleep(1)
    except KeyboardInterrupt:
        print("\ndemo: stopping the review app", flush=True)
    return codigo


def guardar_clave(ruta: Path, clave: str) -> Path:
    """Write the password to ``ruta``, readable and writable by the owner only (created 0600,
    never a moment wider; a file left by an earlier run is narrowed first, then rewritten)."""
    ruta.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(ruta, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as archivo:
        os.fchmod(archivo.fileno(), 0o600)
        archivo.write(clave + "\n")
    return ruta.resolve()
