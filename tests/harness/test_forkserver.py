"""harness.forkserver: a forked command behaves as the same command started fresh.

Each case runs one small program both ways (``subprocess`` and the server) and compares what a
test can see of a process: exit status, output, the environment, the working directory and
``sys.argv``, signals, a session of its own, the end of the interpreter.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import forkserver

pytestmark = pytest.mark.skipif(not forkserver.enabled(), reason="FICHAS_TEST_FORK=0")

PROGRAMA = """
import atexit, os, sys, threading, time
atexit.register(lambda: print("atexit", flush=True))
threading.Thread(target=lambda: (time.sleep(0.3), print("thread", flush=True))).start()
print(os.getcwd(), sys.argv[1:], os.environ.get("FICHAS_X"), sys.path[0] == "", flush=True)
sys.stdout.write(sys.stdin.read().upper())
sys.exit(int(sys.argv[1]))
"""


def _ambos(args: list[str], **kwargs: object) -> tuple[object, object]:
    """The same command as a real process and as a fork: their CompletedProcess."""
    real = subprocess.run([sys.executable, *args], **kwargs)  # type: ignore[call-overload]
    forked = forkserver.run([sys.executable, *args], **kwargs)
    return real, forked


def test_salida_entrada_entorno_directorio_y_argv_como_un_proceso_nuevo(tmp_path: Path) -> None:
    env = dict(os.environ, FICHAS_X="y")
    real, forked = _ambos(
        ["-c", PROGRAMA, "3", "b"],
        env=env, cwd=tmp_path, input="hola\n", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert isinstance(real, subprocess.CompletedProcess)
    assert isinstance(forked, subprocess.CompletedProcess)
    assert real.returncode == forked.returncode == 3
    assert real.stdout == forked.stdout
    primera = f"{tmp_path} ['3', 'b'] y True"
    assert forked.stdout.splitlines() == [primera, "HOLA", "thread", "atexit"]


def test_una_excepcion_sale_con_1_y_su_traza_empieza_en_el_programa(tmp_path: Path) -> None:
    real, forked = _ambos(
        ["-c", "raise ValueError('mal')"], cwd=tmp_path, capture_output=True, text=True
    )
    assert isinstance(real, subprocess.CompletedProcess)
    assert isinstance(forked, subprocess.CompletedProcess)
    assert real.returncode == forked.returncode == 1
    assert forked.stderr == real.stderr
    assert "forkserver" not in forked.stderr


def test_el_comando_real_ayuda_y_uso_incorrecto(tmp_path: Path) -> None:
    for args, codigo in ((["--help"], 0), (["no-existe"], 2)):
        real, forked = _ambos(
            ["-m", "herramientas.cli", *args], cwd=forkserver.REPO, capture_output=True, text=True
        )
        assert isinstance(real, subprocess.CompletedProcess)
        assert isinstance(forked, subprocess.CompletedProcess)
        assert (real.returncode, real.stdout, real.stderr) == (
            forked.returncode,
            forked.stdout,
            forked.stderr,
        )
        assert forked.returncode == codigo


def test_senales_al_pid_y_estado_como_popen(tmp_path: Path) -> None:
    proc = forkserver.popen(
        [sys.executable, "-c", "import time; print('listo', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert isinstance(proc, forkserver.ForkedProcess)
    assert proc.stdout is not None and proc.stdout.readline() == "listo\n"
    assert os.getpgid(proc.pid) == proc.pid  # a session (and group) of its own
    assert proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=0.2)
    os.kill(proc.pid, signal.SIGSTOP)  # stopped is not ended
    time.sleep(0.2)
    assert proc.poll() is None
    os.kill(proc.pid, signal.SIGCONT)
    proc.terminate()
    assert proc.wait(timeout=10) == -signal.SIGTERM
    proc.stdout.close()


def test_un_shim_en_pythonpath_no_se_bifurca(tmp_path: Path) -> None:
    """A package on PYTHONPATH standing in for an installed one must shadow it: that needs an
    interpreter started with it, so the command runs as a real process."""
    shim = tmp_path / "shim" / "yaml"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("NOMBRE = 'shim'\n")
    env = dict(os.environ, PYTHONPATH=str(shim.parent))
    args = [sys.executable, "-c", "import yaml; print(getattr(yaml, 'NOMBRE', 'real'))"]
    assert not forkserver.forkable(args, env, str(tmp_path))
    proc = forkserver.popen(args, env=env, cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    assert isinstance(proc, subprocess.Popen)
    assert proc.communicate(timeout=60)[0] == "shim\n"
    # the checkout itself on PYTHONPATH (it holds only the project's packages) still forks
    repo = dict(os.environ, PYTHONPATH=str(forkserver.REPO))
    assert forkserver.forkable(args, repo, str(tmp_path))
