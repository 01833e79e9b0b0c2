"""infra.network.free_port: below the ephemeral range, free on every address, with its +1000."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from infra import network


def test_los_puertos_quedan_bajo_el_rango_efimero_y_se_pueden_abrir() -> None:
    bajo, alto = network._draw_range()
    efimero = int(Path(network.EPHEMERAL_RANGE).read_text().split()[0])
    assert alto + 1000 <= efimero
    for _ in range(20):
        puerto = network.free_port()
        assert bajo <= puerto < alto
        for p in (puerto, puerto + 1000):
            with socket.socket() as s:
                s.bind(("0.0.0.0", p))


def test_el_rango_sigue_al_del_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rango = tmp_path / "ip_local_port_range"
    rango.write_text("40000\t60999\n")
    monkeypatch.setattr(network, "EPHEMERAL_RANGE", str(rango))
    assert network._draw_range() == (29_000, 39_000)


def test_un_puerto_ocupado_no_se_elige(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as ocupado:
        ocupado.bind(("127.0.0.1", 0))
        ocupado.listen()
        puerto = ocupado.getsockname()[1]
        monkeypatch.setattr(network, "_draw_range", lambda: (puerto, puerto + 1))
        with pytest.raises(RuntimeError, match="no free port"):
            network.free_port()
