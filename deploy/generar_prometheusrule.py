"""Regenera k8s/base/worker/prometheusrule.yaml a partir de deploy/prometheus/alertas.yml.

    python deploy/generar_prometheusrule.py          # escribe el fichero
    python deploy/generar_prometheusrule.py --check  # sale con 1 si está desactualizado

Las reglas son las mismas en docker-compose (Prometheus lee alertas.yml) y en Kubernetes
(prometheus-operator lee el PrometheusRule); tests/deploy/test_manifiestos.py comprueba que
coinciden. Una diferencia: alertas.yml lleva cada `runbook_url` como ruta del repositorio
(`docs/operacion.md#…`), y el PrometheusRule como URL, `BASE_RUNBOOK` + `/` + la ruta. La base
es un marcador: cada clúster pone la suya, la dirección de estos docs en su forja en la versión
que despliega, en `runbook-base` de k8s/overlays/produccion/entorno/entorno.yaml (kustomize
sustituye lo que va antes de `/docs/`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

RAIZ = Path(__file__).resolve().parent.parent
ALERTAS = RAIZ / "deploy" / "prometheus" / "alertas.yml"
DESTINO = RAIZ / "k8s" / "base" / "worker" / "prometheusrule.yaml"
BASE_RUNBOOK = "https://runbook.fichas.example"  # entorno.yaml (runbook-base) pone la real

CABECERA = (
    "# GENERADO por deploy/generar_prometheusrule.py a partir de deploy/prometheus/alertas.yml.\n"
    "# No lo edite a mano: cambie alertas.yml y vuelva a generarlo.\n"
)


def renderizar() -> str:
    """El PrometheusRule de alertas.yml, con los runbook_url bajo ``BASE_RUNBOOK``."""
    reglas = yaml.safe_load(ALERTAS.read_text(encoding="utf-8"))
    for grupo in reglas["groups"]:
        for regla in grupo["rules"]:
            anotaciones = regla.get("annotations", {})
            if "runbook_url" in anotaciones:
                anotaciones["runbook_url"] = f"{BASE_RUNBOOK}/{anotaciones['runbook_url']}"
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
