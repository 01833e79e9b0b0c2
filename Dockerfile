# syntax=docker/dockerfile:1
#
# Imagen del procesador de fichas.
#   docker build -t fichas:0.1.0 .                                   # worker (por defecto)
#   docker build -t fichas:local --build-arg FICHAS_EXTRAS=local .   # + LLM local en CPU
#
# Etapa 1 (builder): instala en /opt/venv lo que fija uv.lock (las dependencias base, más el
# extra FICHAS_EXTRAS si se pide), cada fichero comprobado contra su hash, y el proyecto sin
# modo editable: las mismas versiones que `make test` (README, "The lock"). Etapa 2:
# python:3.11-slim con solo ese venv.

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    UV_PYTHON_DOWNLOADS=never \
    UV_NO_CACHE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
# El contexto lo recorta .dockerignore (sin .venv, .git, tests, docs, k8s...).
COPY . .
# uv, a la versión y con los hashes que da uv.lock (scripts/uv_requirement.py), fuera del venv.
RUN python scripts/uv_requirement.py > /tmp/uv.txt \
 && /usr/local/bin/python -m pip install --no-deps --require-hashes -r /tmp/uv.txt
# "" para el worker; "local" añade el LLM local en CPU (fichas llm-local).
ARG FICHAS_EXTRAS=""
# --locked: falla si uv.lock no corresponde a pyproject.toml (make lock). Bytecode compilado
# aquí: la raíz del contenedor es de solo lectura.
RUN UV_PROJECT_ENVIRONMENT=/opt/venv /usr/local/bin/uv sync --locked --no-editable \
      --compile-bytecode --python /opt/venv/bin/python ${FICHAS_EXTRAS:+--extra "$FICHAS_EXTRAS"} \
 && test -x /opt/venv/bin/fichas
# Lo que los comandos leen fuera de los paquetes: `fichas evaluar` busca el conjunto
# etiquetado en ejemplos/evaluacion/ junto a los paquetes instalados (herramientas/evaluar/principal.py,
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
