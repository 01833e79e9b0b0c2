"""The reviewer web app (``fichas revisor``): people close the loop the graph cannot.

It reads ``fichas.revision_manual`` and ``fichas.muestra_revision`` into a queue, lets
reviewers approve, edit, reject or grade, writes every decision on ``fichas.decisiones`` (an
approval carries the publication the worker writes), measures the evaluator against people,
and opens and closes the publication gates from their decisions. The modules, by concern:

* the web: ``app`` (routes, ``fichas revisor``), ``web``, ``acceso`` and ``seguridad`` (who
  gets in), ``paginas``, ``acciones``, ``diferencias``, ``puertas``, ``operacion``, ``metricas``;
* the store: ``almacen`` (queue, outbox, evidence), ``cuentas``, ``item``, on the one database
  of ``database`` and ``esquema``; the stream: ``flujo`` (consumer and outbox), ``decisiones``;
* the gates: ``confianza``, ``retenidas`` (recall), ``apertura``, ``vigilancia``, ``rondas``.

Imports ``esquemas``, ``criterios``, ``estadistica``, ``migraciones``, ``versiones``,
``puerta`` and ``infra`` (settings, logs, the event loop, Kafka clients, topics); never
``stream`` or ``grafo``. ``herramientas`` (the command, the report, ``migrar``) and ``harness``
import it. docs/revision.md (Spanish) holds the why; tests/infra/test_fronteras.py keeps the
imports to the README's table.
"""
