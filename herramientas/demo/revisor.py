"""The end of ``fichas demo``: the reviewer app on the run's topics, until Ctrl-C.

A newcomer lands on the queue the demo just filled: the demo adds a reviewer with a fresh
random password (printed once), starts ``fichas revisor`` on 127.0.0.1 with the run's topics
and data directory (so it also reads the worker's version record), prints the URL and the
login, and waits. Ctrl-C stops the app together with everything else the demo started.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from infra.network import free_port, port_open, wait_http

if TYPE_CHECKING:
    from herramientas.demo.servicios import Services

USUARIO = "revisor"
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
    wait_http(url + "health/ready", 120, "fichas revisor", lambda: proc.poll() is None)
    print(
        f"\nRevisión: {url}  usuario {USUARIO}  contraseña {clave}\n"
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
