"""The Kafka worker (``fichas worker``): supplier events in, one outcome per event out.

Imports ``esquemas`` (models, contract constants, the wire format), ``criterios``, ``grafo``
(its public API, never its prompts), ``puerta`` (the gate's resolution, audit and topic),
``versiones`` (the claim rule and its store) and ``infra`` (settings, logs, Kafka clients,
topics, fault points); only ``herramientas`` and ``harness`` import it. The modules:

* the flow: ``worker`` (the group member: fetch, pace, rebalance), ``lanes`` (one lane per
  SKU), ``handler`` (one event to one outcome), ``decisiones`` (people's publications),
  ``rechazo`` (the DLQ record), ``fallos`` (transient or not);
* committing: ``emitter`` (every write and offset, in which transaction), ``producers`` (the
  fence per input partition), ``inflight``, ``offsets`` and ``offset_metadata`` (the ledger);
* the gate: ``puerta`` and ``puerta_topico``; serving: ``runtime`` (the loop from settings),
  ``serving``, ``http``, ``sensor``, ``metricas``, ``series``, ``retraso``.

docs/stream.md holds the why (delivery, order, offsets, fencing, outages), and
tests/infra/test_fronteras.py the imports the README's table allows.
"""
