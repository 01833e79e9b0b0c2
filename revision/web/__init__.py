"""The reviewer web app: pages, forms, who gets in, and what machines read.

``app`` (the routes; ``fichas revisor``), ``base`` (what every page shares), ``acceso`` and
``seguridad`` (login, sessions, CSRF, password hashes), ``paginas`` (queue and item),
``acciones`` (what a click does), ``diferencias`` (the word diff), ``pagina_puertas`` (the
Puertas page), ``operacion`` (``/metrics``, ``/health``), ``metricas`` (the app's series, read
from the store), ``metricas_puertas`` (each gate's series); templates in ``plantillas/``,
static files in ``estatico/``. docs/revision.md.
"""
