"""Ports and readiness: the two things every local service start needs."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now, whose +1000 is free too.

    A local KRaft broker puts its controller on port + 1000; asking for the pair everywhere
    costs nothing and lets any caller hand the port to a broker.
    """
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port + 1000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair found")


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
