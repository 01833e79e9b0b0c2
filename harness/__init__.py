"""The product's local harness: what runs it without its production neighbours.

* the LLM: ``fake_llm`` (a package: a scriptable OpenAI-compatible server) and
  ``fake_llm_client`` (it as a real process); ``agente_grafo`` (the agents as a
  ``create_agent`` graph, the "before" of issue 33); ``procesador`` (the real loop on a URL);
* Kafka and stores: ``kafka_broker`` (a real single-node broker, ``scripts/kafka.sh``),
  ``kafka_dump`` (a broker's folder read with Kafka's DumpLogSegments, for failure messages),
  ``topicos`` (topics by hand), ``basedatos`` (a fresh PostgreSQL database);
* the product as it runs: ``worker`` and ``nucleo`` (the worker as a process or in-process),
  ``procesos`` (a ``fichas`` subcommand as a process; ``forkserver`` forks those from one that
  imported the libraries once), ``revisor`` and ``revisor_http`` (the review app and a
  scripted reviewer), ``puerta`` (gate keys and states on a topic);
* checks and data: ``contrato`` (outcomes against the committed schemas, with ``jsonschema``),
  ``eventos`` (valid events), ``kustomize`` (manifests), ``duraciones`` (time per test file).

Imports ``esquemas``, ``criterios``, ``grafo``, ``infra``, ``puerta``, ``revision``,
``stream`` and ``versiones``; it runs ``herramientas`` only as a process. The tests and the
benchmarks import it, the product never (the ``fichas`` command line included: ports,
readiness and group-less readers live in ``infra``), as tests/infra/test_fronteras.py checks.
"""
