"""``fichas demo`` ends on the review app: URL, user and password file printed, the queue filled
by the run."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from tests.revision.conftest import esperar, pedir

pytestmark = pytest.mark.kafka


class Salida:
    """The demo's stdout, read line by line in a thread (select on a buffered pipe loses lines)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lineas: list[str] = []
        assert proc.stdout is not None
        self._hilo = threading.Thread(target=self._leer, args=(proc.stdout,), daemon=True)
        self._hilo.start()

    def _leer(self, stdout: Any) -> None:
        for linea in stdout:
            self.lineas.append(linea)

    def esperar(self, patron: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for linea in list(self.lineas):
                m = re.search(patron, linea)
                if m:
                    return m
            time.sleep(0.5)
        raise AssertionError(f"no line matched {patron!r}:\n" + "".join(self.lineas[-30:]))

    def texto(self) -> str:
        self._hilo.join(timeout=30)
        return "".join(self.lineas)


def test_la_demo_termina_en_la_app_de_revision(kafka, fake_llm, tmp_path):
    fake_llm.configure({"rules": [{"sku": "ZAP-000456", "evaluador": ["rechazar:C05"]}]})
    env = {**os.environ, "FICHAS_KAFKA_BROKERS": kafka.bootstrap, "FICHAS_LLM_URL": fake_llm.url}
    env.pop("FICHAS_POSTGRES_DSN", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "herramientas.demo",
            "--run-id",
            f"t{os.getpid()}",
            "--salida",
            str(tmp_path / "salida"),
            "--timeout",
            "180",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    salida = Salida(proc)
    try:
        m = salida.esperar(
            r"Revisión: (http://127\.0\.0\.1:\d+)/\s+usuario (\S+)\s+contraseña en (\S+)", 240
        )
        url, usuario, archivo = m.groups()
        # The password is in a file only its owner can read, never on the terminal.
        assert stat.S_IMODE(os.stat(archivo).st_mode) == 0o600
        clave = Path(archivo).read_text(encoding="utf-8").strip()
        assert len(clave) >= 8
        _, headers, cuerpo = pedir(url + "/login")
        cookie = headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
        token = re.search(r'name="csrf" value="([^"]+)"', cuerpo).group(1)
        status, headers, _ = pedir(
            url + "/login",
            cookies={"fichas_csrf_login": cookie},
            data={"csrf": token, "usuario": usuario, "clave": clave},
        )
        assert status == 303
        sesion = {"fichas_sesion": headers["Set-Cookie"].split(";")[0].split("=", 1)[1]}
        # No gate file: every gate is closed (shadow mode), so every ficha of the run whose
        # code checks pass reaches the queue as sin_garantia, the judge's no included.
        cola = esperar(
            lambda: (
                (
                    r := pedir(
                        url + "/?" + urllib.parse.urlencode({"motivo": "sin_garantia"}),
                        cookies=sesion,
                    )[2]
                ).count('class="fila"')
                >= 5
                and r
            ),
            "the run's held-back items in the queue",
        )
        assert "ZAP-000123" in cola and "ZAP-000456" in cola
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # what Ctrl-C / a terminal closing does
        proc.wait(timeout=120)
    texto = salida.texto()
    assert proc.returncode == 0, texto
    assert clave not in texto
    assert "stopping revisor" in texto and "stopping worker" in texto
