"""The Kafka worker (``fichas worker``): supplier events in, one outcome per event out.

Imports ``esquemas`` (models, contract constants, the wire format), ``criterios``, ``grafo``
(its public API, never its prompts), ``puerta`` (the gate's resolution, audit and topic),
``versiones`` (the claim rule and its store), ``migraciones`` (which database errors are
an outage) and ``infra`` (settings, logs, Kafka clients, topics, fault points); only
``herramientas`` and ``harness`` import it. Its subsystems, each a
package, from the bottom up:

* ``metricas``: what the worker reports (the sensor interface, the series, Prometheus);
* ``commit``: every write and offset, in which transaction (producers, emitter, ledger);
* ``gobierno``: which loop runs and which gates govern it (the key, the served model, the
  loop assembled for a key, the gate reader of ``fichas.puerta``);
* ``candidata``: a second key run in shadow beside the live one;
* ``flow``: the group member, the SKU lanes, one event to one outcome, people's approvals;
* ``serving``: ``fichas worker`` started, run and stopped in order; its HTTP endpoints.

docs/stream.md holds the why; tests/infra/test_fronteras.py keeps the imports and the order.
"""
