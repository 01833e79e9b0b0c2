# syntax=docker/dockerfile:1
#
# Imagen del procesador de fichas.
#   docker build -t fichas:0.1.0 .                                  # worker (por defecto)
#   docker build -t fichas:local --build-arg FICHAS_EXTRAS="[local]" .  # + LLM local en CPU
#
# Etapa 1 (builder): crea un venv en /opt/venv e instala el proyecto con `pip install .`
# (igual que CI, sin modo editable). Etapa 2: python:3.11-slim con solo ese venv.

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
# El contexto lo recorta .dockerignore (sin .venv, .git, tests, docs, k8s...).
COPY . .
# "" para el worker; "[local]" añade el LLM local en CPU (fichas llm-local).
ARG FICHAS_EXTRAS=""
# DL3013 (fijar versiones) no aplica: es el propio proyecto; sus rangos están en pyproject.toml.
# hadolint ignore=DL3013
RUN pip install ".${FICHAS_EXTRAS}" \
 && test -x /opt/venv/bin/fichas
# Lo que los comandos leen fuera de los paquetes: `fichas evaluar` busca el conjunto
# etiquetado en ejemplos/evaluacion/ junto a los paquetes instalados (herramientas/evaluar.py,
# CASOS_POR_DEFECTO), y el runbook (docs/operacion.md) lo ejecuta en un pod.
RUN sitio="$(python -c 'import herramientas, pathlib; print(pathlib.Path(herramientas.__file__).resolve().parents[1])')" \
 && cp -r ejemplos "${sitio}/ejemplos" \
 && test -f "${sitio}/ejemplos/evaluacion/casos.jsonl"

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="fichas" \
      org.opencontainers.image.description="Procesador Kafka de fichas de producto (LangGraph + vLLM)"
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    FICHAS_DATA_DIR=/var/lib/fichas \
    FICHAS_METRICAS_PUERTO=9100
RUN groupadd --system --gid 10001 fichas \
 && useradd --system --uid 10001 --gid fichas --home-dir /var/lib/fichas --no-create-home \
      --shell /usr/sbin/nologin fichas \
 && mkdir -p /var/lib/fichas \
 && chown fichas:fichas /var/lib/fichas
COPY --from=builder /opt/venv /opt/venv
WORKDIR /var/lib/fichas
USER 10001:10001
VOLUME ["/var/lib/fichas"]
EXPOSE 9100
# slim no trae curl: la comprobación usa urllib de Python.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health/live' % os.environ.get('FICHAS_METRICAS_PUERTO', '9100'), timeout=4)"]
# El worker sale con 0 tras SIGTERM cuando termina las fichas en curso (FICHAS_GRACIA_S,
# 90 s por defecto): dé al contenedor más tiempo que eso al pararlo
# (docker stop -t 120, stop_grace_period en compose, terminationGracePeriodSeconds en k8s).
STOPSIGNAL SIGTERM
ENTRYPOINT ["fichas"]
CMD ["worker"]
