"""Fixtures of the reviewer app's tests: the app as a real process, a real headless Chromium.

Chromium and its driver are Debian's (``apt-get install chromium chromium-driver``; see
scripts/test.sh); Selenium is pointed at ``/usr/bin/chromedriver`` and ``/usr/bin/chromium`` so
it never downloads a browser.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.revisor import RevisorProcess, revisor_env
from harness.topicos import Topics, produce, read_all
from harness.worker import WorkerInProcess, worker_env
from infra.network import free_port

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
USUARIO = "ana"
CLAVE = "clave-de-prueba-1"
OTRO_USUARIO = "luis"


def topics_env(topics: Topics) -> dict[str, str]:
    return {**topics.env(), "FICHAS_TOPIC_DECISIONES": f"{topics.prefix}.fichas.decisiones"}


def decisiones_topic(topics: Topics) -> str:
    return f"{topics.prefix}.fichas.decisiones"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def dsn(request: pytest.FixtureRequest) -> str | None:
    """Each store test once per dialect: embedded SQLite (None), then a real PostgreSQL."""
    return request.getfixturevalue("postgres_dsn") if request.param == "postgres" else None


@pytest.fixture(scope="module")
def revisor_topics() -> Topics:
    return Topics()


@pytest.fixture(scope="module")
def revisor(
    kafka: KafkaBroker, revisor_topics: Topics, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RevisorProcess]:
    """One app per test module (start-up is seconds), with two reviewers."""
    data_dir = tmp_path_factory.mktemp("revisor")
    env = revisor_env(kafka.bootstrap, topics_env(revisor_topics), data_dir)
    app = RevisorProcess(env, free_port(), data_dir / "revisor.log")
    app.add_user(USUARIO, CLAVE)
    app.add_user(OTRO_USUARIO, CLAVE)
    app.start()
    app.wait_ready()
    yield app
    app.stop()


@pytest.fixture
def worker_del_revisor(
    kafka: KafkaBroker,
    revisor: RevisorProcess,
    revisor_topics: Topics,
    fake_llm: FakeLLM,
    tmp_path: Path,
) -> Iterator[WorkerInProcess]:
    """A worker on the module app's topics (with its partition count, so the app's decisions
    and the worker's input are co-partitioned): what publishes a person's ficha."""
    env = worker_env(
        kafka,
        fake_llm,
        revisor_topics,
        tmp_path / "worker",
        FICHAS_PARTICIONES=revisor.env["FICHAS_PARTICIONES"],
    )
    worker = WorkerInProcess(env, tmp_path / "worker.log")
    worker.start()
    try:
        worker.wait_ready()
        yield worker
    finally:
        assert worker.terminate() == 0, worker.log_tail()


def nuevo_navegador() -> Any:
    """A headless Chromium driven by Selenium, Debian's binaries only."""
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.fail(
            "chromium/chromium-driver not installed (apt-get install chromium "
            "chromium-driver; scripts/test.sh installs them)"
        )
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager never downloads anything
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opciones = webdriver.ChromeOptions()
    opciones.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1400,1100",
        "--no-proxy-server",
        "--disable-gpu",
        "--lang=es",
    ):
        opciones.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opciones)
    driver.implicitly_wait(0)
    return driver


@pytest.fixture(scope="session")
def _chromium() -> Iterator[Any]:
    """One Chromium per pytest process: each start costs a few seconds of CPU, and a dozen
    modules use one."""
    driver = nuevo_navegador()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def navegador(_chromium: Any) -> Iterator[Any]:
    """The process's Chromium, as a fresh one for this module: no cookies (every app of the
    suite is on 127.0.0.1, and a cookie is per host, not per port), on a blank page."""
    _limpiar(_chromium)
    yield _chromium
    _limpiar(_chromium)


def _limpiar(driver: Any) -> None:
    """Forget every cookie and leave the page."""
    driver.get("about:blank")
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})


def entrar(driver: Any, app: RevisorProcess, usuario: str = USUARIO, clave: str = CLAVE) -> None:
    """Log in through the form, as a person does."""
    from selenium.webdriver.common.by import By

    driver.get(app.url + "/login")
    driver.find_element(By.ID, "usuario").send_keys(usuario)
    driver.find_element(By.ID, "clave").send_keys(clave)
    driver.find_element(By.ID, "entrar").click()
    esperar(
        lambda: "/login" not in driver.current_url,
        "login",
        explica=lambda: driver.find_element(By.TAG_NAME, "body").text,
    )


def esperar(
    condicion: Callable[[], Any],
    que: str,
    timeout: float = 30,
    explica: Callable[[], str] = lambda: "",
) -> Any:
    """Poll ``condicion`` until it is truthy. A browser page replaced while the condition read
    it (an element gone stale, or not there yet, mid-navigation after a click) is "not yet"."""
    import time

    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    deadline = time.monotonic() + timeout
    while True:
        try:
            valor = condicion()
        except (StaleElementReferenceException, NoSuchElementException):
            valor = None
        if valor:
            return valor
        assert time.monotonic() < deadline, f"timed out waiting for {que}\n{explica()}"
        time.sleep(0.2)


def en_juego(app: RevisorProcess, kind: str) -> float:
    """``fichas_revision_puertas_en_juego{kind}`` on the app's /metrics (0 when absent): with
    ``kind="cobertura"`` above 0, the app's certifier has seen an open pooled gate."""
    for linea in app.metrics().splitlines():
        if linea.startswith(f'fichas_revision_puertas_en_juego{{kind="{kind}"}} '):
            return float(linea.rpartition(" ")[2])
    return 0.0


def producir(kafka: KafkaBroker, topic: str, registros: list[dict[str, Any]]) -> None:
    asyncio.run(
        produce(
            kafka.bootstrap,
            topic,
            [(r["sku"].encode(), json.dumps(r).encode()) for r in registros],
        )
    )


def leer(kafka: KafkaBroker, topic: str) -> list[dict[str, Any]]:
    return [r["value"] for r in asyncio.run(read_all(kafka.bootstrap, topic))]


def abrir_item(driver: Any, app: RevisorProcess, event_id: str) -> None:
    """Open an item's page, waiting until the consumer has stored it."""
    url = app.url + "/item?" + urllib.parse.urlencode({"id": event_id})

    def cargado() -> bool:
        driver.get(url)
        return "No existe" not in driver.page_source

    esperar(cargado, f"item {event_id}")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def pedir(
    url: str, data: dict[str, str] | None = None, cookies: dict[str, str] | None = None
) -> tuple[int, dict[str, str], str]:
    """One HTTP request without following redirects: (status, headers, body)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)
    cuerpo = urllib.parse.urlencode(data).encode() if data is not None else None
    peticion = urllib.request.Request(url, data=cuerpo)
    if cookies:
        peticion.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in cookies.items()))
    try:
        with opener.open(peticion, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode()


def confirmado(driver: Any, texto: str) -> None:
    """Wait for the confirmation banner the app shows after a decision (next item or queue)."""
    from selenium.webdriver.common.by import By

    esperar(
        lambda: any(texto in a.text for a in driver.find_elements(By.CSS_SELECTOR, ".aviso")),
        f"the confirmation {texto!r}",
        explica=lambda: driver.find_element(By.TAG_NAME, "body").text[:500],
    )
