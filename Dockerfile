# syntax=docker/dockerfile:1
#
# Imagen del procesador de fichas.
#   docker build -t fichas:0.1.0 .                                   # worker (por defecto)
#   docker build -t fichas:local --build-arg FICHAS_EXTRAS=local .   # + LLM local en CPU
#   scripts/imagen.sh build     # con podman, donde el registro de la base no responde
#                               # (docs/despliegue.md, "The image")
#
# Etapa 1 (builder): instala en /opt/venv lo que fija uv.lock (las dependencias base, más el
# extra FICHAS_EXTRAS si se pide), cada fichero comprobado contra su hash, y el proyecto sin
# modo editable, construido con el setuptools de uv.lock (grupo `build`, sin aislamiento): las
# mismas versiones que `make test` (README, "The lock"). Etapa 2: la misma base con solo ese venv.
#
# Detrás de un proxy que re-firma TLS, pip y uv necesitan la CA de la máquina: pásela como
# secreto, nunca como fichero del contexto (no queda en ninguna capa):
#   docker build --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt .

# python:3.11-slim (3.11.16-slim-trixie), fijada por digest del índice multi-arquitectura.
# Actualizarla: `docker buildx imagetools inspect python:3.11-slim` (o `skopeo inspect`) y
# cambiar el digest aquí. scripts/imagen.sh la sustituye por una base hecha con paquetes de
# Debian donde el registro no responde.
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    UV_PYTHON_DOWNLOADS=never \
    UV_NO_CACHE=1
# Sin pip ni setuptools en el venv: todo lo que lleva lo pone uv.lock.
RUN python -m venv --without-pip /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    UV_PROJECT_ENVIRONMENT=/opt/venv
WORKDIR /src
# Primero solo lo que fija las dependencias: su capa (la más cara) se reutiliza mientras
# uv.lock y pyproject.toml no cambien, aunque cambie el código.
COPY pyproject.toml uv.lock ./
COPY scripts/uv_requirement.py scripts/
# uv, a la versión y con los hashes que da uv.lock (scripts/uv_requirement.py), fuera del venv.
# El secreto `ca` (opcional): la CA de la máquina, montada solo durante el RUN que la usa.
RUN --mount=type=secret,id=ca,required=false \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
 && python scripts/uv_requirement.py > /tmp/uv.txt \
 && /usr/local/bin/python -m pip install --no-deps --require-hashes -r /tmp/uv.txt
# "" para el worker; "local" añade el LLM local en CPU (fichas llm-local).
ARG FICHAS_EXTRAS=""
# --locked: falla si uv.lock no corresponde a pyproject.toml (make lock). Las dependencias y el
# backend de construcción de uv.lock (grupo `build` de pyproject.toml), sin el proyecto.
# Bytecode compilado aquí: la raíz del contenedor es de solo lectura.
RUN --mount=type=secret,id=ca,required=false \
    if [ -s /run/secrets/ca ]; then export SSL_CERT_FILE=/run/secrets/ca; fi \
 && /usr/local/bin/uv sync --locked --no-editable --compile-bytecode --python /opt/venv/bin/python \
      ${FICHAS_EXTRAS:+--extra "$FICHAS_EXTRAS"} --group build --no-install-project
# El contexto lo recorta .dockerignore (sin .venv, .git, tests, docs, k8s...).
COPY . .
# El proyecto, construido sin aislamiento con ese backend (no con el setuptools más nuevo de
# PyPI); después el backend sale del venv de la imagen (el último sync no reconstruye: el
# proyecto ya está instalado).
RUN /usr/local/bin/uv sync --locked --no-editable --compile-bytecode --python /opt/venv/bin/python \
      ${FICHAS_EXTRAS:+--extra "$FICHAS_EXTRAS"} --group build --no-build-isolation \
 && /usr/local/bin/uv pip uninstall --python /opt/venv/bin/python setuptools \
 && /usr/local/bin/uv sync --locked --no-editable --compile-bytecode --python /opt/venv/bin/python \
      ${FICHAS_EXTRAS:+--extra "$FICHAS_EXTRAS"} --no-build-isolation \
 && test -x /opt/venv/bin/fichas
# Lo que los comandos leen fuera de los paquetes: `fichas evaluar` busca el conjunto
# etiquetado en ejemplos/evaluacion/ junto a los paquetes instalados (herramientas/evaluar/casos.py,
# CASOS_POR_DEFECTO), y el runbook (docs/operacion.md) lo ejecuta en un pod. Desde `/`: en
# /src, `python -c 'import herramientas'` importaría el árbol de fuentes y no el paquete
# instalado (y `cp` copiaría ejemplos/ dentro de sí mismo); la construcción falla si el paquete
# importado no es el del venv.
WORKDIR /
RUN sitio="$(python -c 'import herramientas, pathlib; print(pathlib.Path(herramientas.__file__).resolve().parents[1])')" \
 && venv="$(python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
 && if [ "${sitio}" != "${venv}" ]; then \
      echo "herramientas se importa de ${sitio}, no del venv (${venv})" >&2; exit 1; \
    fi \
 && cp -r /src/ejemplos "${sitio}/ejemplos" \
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
