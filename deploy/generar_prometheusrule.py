"""Regenera k8s/base/worker/prometheusrule.yaml a partir de deploy/prometheus/alertas.yml.

    python deploy/generar_prometheusrule.py          # escribe el fichero
    python deploy/generar_prometheusrule.py --check  # sale con 1 si está desactualizado

Las reglas son las mismas en docker-compose (Prometheus lee alertas.yml) y en Kubernetes
(prometheus-operator lee el PrometheusRule); tests/deploy/test_manifiestos.py comprueba que
coinciden.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

RAIZ = Path(__file__).resolve().parent.parent
ALERTAS = RAIZ / "deploy" / "prometheus" / "alertas.yml"
DESTINO = RAIZ / "k8s" / "base" / "worker" / "prometheusrule.yaml"

CABECERA = (
    "# GENERADO por deploy/generar_prometheusrule.py a partir de deploy/prometheus/alertas.yml.\n"
    "# No lo edite a mano: cambie alertas.yml y vuelva a generarlo.\n"
)


def renderizar() -> str:
    reglas = yaml.safe_load(ALERTAS.read_text(encoding="utf-8"))
    recurso = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "fichas",
            "labels": {"app.kubernetes.io/name": "fichas", "release": "prometheus"},
        },
        "spec": {"groups": reglas["groups"]},
    }
    cuerpo = yaml.safe_dump(recurso, sort_keys=False, allow_unicode=True, width=100)
    return CABECERA + cuerpo


def main(argv: list[str]) -> int:
    texto = renderizar()
    if "--check" in argv:
        actual = DESTINO.read_text(encoding="utf-8") if DESTINO.exists() else ""
        if actual != texto:
            print(f"{DESTINO} está desactualizado: ejecute {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    DESTINO.write_text(texto, encoding="utf-8")
    print(f"escrito {DESTINO}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
