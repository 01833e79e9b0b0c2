"""Ports and readiness: the two things every local service start needs."""

from __future__ import annotations

import random
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    """A TCP port, free now on every address, whose +1000 is free too, below the ephemeral range.

    A local KRaft broker puts its controller on port + 1000; asking for the pair everywhere
    costs nothing and lets any caller hand the port to a broker. The port is drawn at random
    below the kernel's ephemeral range (``ip_local_port_range``), not asked of the kernel: a
    port the kernel hands out is also one it hands to outgoing connections as their source
    port, and under a busy test suite one such connection took a metrics port between this
    check and the worker's bind ("address already in use"). Checked on 0.0.0.0, where the
    health servers listen.
    """
    low, high = _draw_range()
    for _ in range(200):
        port = _RNG.randrange(low, high)
        if _bindable(port) and _bindable(port + 1000):
            return port
    raise RuntimeError("no free port pair found")


def _draw_range() -> tuple[int, int]:
    """Where ``free_port`` draws: the 10,000 ports below the ephemeral range and its +1000."""
    try:
        ephemeral_low = int(Path(EPHEMERAL_RANGE).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32768  # Linux's default
    high = max(ephemeral_low - 1000, 2024)
    return max(high - 10_000, 1024), high


EPHEMERAL_RANGE = "/proc/sys/net/ipv4/ip_local_port_range"
# The OS's randomness, never a seeded generator: processes that seed ``random`` alike (a test
# plugin, a fixed seed) must not draw the same ports.
_RNG = random.SystemRandom()


def _bindable(port: int) -> bool:
    """True when a listening socket could bind ``port`` on every address right now."""
    with socket.socket() as s:
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def port_open(host: str, port: int) -> bool:
    """True when something accepts TCP connections on ``host:port``."""
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, port)) == 0


def wait_http(
    url: str,
    timeout: float,
    what: str = "service",
    alive: Callable[[], bool] | None = None,
    headers: Mapping[str, str] | None = None,
) -> None:
    """Poll ``url`` until it answers 200; fail early if the process behind it died.

    Raises ``TimeoutError`` naming ``what``, the URL and the last answer seen, and
    ``RuntimeError`` when ``alive`` says the process exited.
    """
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while True:
        if alive is not None and not alive():
            raise RuntimeError(f"{what} exited during start-up")
        try:
            request = urllib.request.Request(url, headers=dict(headers or {}))
            with _OPENER.open(request, timeout=5) as response:
                if response.status == 200:
                    return
                last = f"HTTP {response.status}"
        except urllib.error.HTTPError as exc:  # e.g. 503 while a model is loading
            last = f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            last = str(exc)
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} not ready after {timeout:.0f} s ({url}: {last})")
        time.sleep(0.2)
