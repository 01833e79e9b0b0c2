"""Screenshots of the reviewer app for the README (docs/img/), with Debian's headless Chromium.

    .venv/bin/python scripts/capturas_revision.py URL USUARIO CLAVE [--decidir-muestra]

Logs in, saves the queue and the first review item (``revision-cola.png``,
``revision-item.png``). With ``--decidir-muestra`` it then grades every open sample item as a
person would in the demo (correct, except every third one: wrong with C06), so ``fichas informe
--revision`` has figures to show.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

SALIDA = Path(__file__).resolve().parents[1] / "docs" / "img"


def navegador(ancho: int, alto: int) -> webdriver.Chrome:
    opciones = webdriver.ChromeOptions()
    opciones.binary_location = "/usr/bin/chromium"
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        f"--window-size={ancho},{alto}",
        "--no-proxy-server",
        "--hide-scrollbars",
    ):
        opciones.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opciones)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("usuario")
    parser.add_argument("clave")
    parser.add_argument("--decidir-muestra", action="store_true")
    args = parser.parse_args()
    url = args.url.rstrip("/")
    driver = navegador(1400, 760)
    try:
        driver.get(url + "/login")
        driver.find_element(By.ID, "usuario").send_keys(args.usuario)
        driver.find_element(By.ID, "clave").send_keys(args.clave)
        driver.find_element(By.ID, "entrar").click()
        time.sleep(1)
        driver.get(url + "/")
        time.sleep(0.5)
        driver.save_screenshot(str(SALIDA / "revision-cola.png"))
        enlaces = [
            f.find_element(By.CSS_SELECTOR, "a.abrir").get_attribute("href")
            for f in driver.find_elements(By.CSS_SELECTOR, "tr.fila")
            if "rechazada" in f.text
        ]
        driver.get(enlaces[0])
        alto = driver.execute_script("return document.body.scrollHeight")
        driver.set_window_size(1400, min(int(alto) + 40, 2400))
        time.sleep(0.5)
        driver.save_screenshot(str(SALIDA / "revision-item.png"))
        if args.decidir_muestra:
            driver.get(url + "/?motivo=muestra")
            muestra = [
                a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "a.abrir")
            ]
            for i, enlace in enumerate(muestra, start=1):
                driver.get(enlace)
                if i % 3 == 0:
                    driver.find_element(By.CSS_SELECTOR, 'input[value="C06"]').click()
                    driver.find_element(By.ID, "incorrecta").click()
                else:
                    driver.find_element(By.ID, "correcta").click()
                time.sleep(0.3)
            print(f"{len(muestra)} decisiones de la muestra")
    finally:
        driver.quit()
    print(f"capturas en {SALIDA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
