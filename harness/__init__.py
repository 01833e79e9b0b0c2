"""The product's local harness: what runs it without its production neighbours.

* the LLM: ``fake_llm`` (a package: a scriptable OpenAI-compatible server and its ``client``);
  ``agente_grafo`` (the agents as a ``create_agent`` graph, the "before" of issue 33);
  ``procesador`` (the real loop on a URL);
* Kafka and stores: ``kafka_broker`` (a real broker), ``kafka_dump`` (its folder read with
  DumpLogSegments), ``topicos``, ``basedatos`` (a fresh PostgreSQL), ``pki``, ``acls``;
* the product as it runs: ``worker`` and ``nucleo`` (the worker as a process or in-process),
  ``procesos`` (a ``fichas`` subcommand as a process; ``forkserver`` forks those), ``revisor``
  and ``revisor_http`` (the review app and a scripted reviewer), ``estados_puerta`` (gate keys
  and states on a topic), ``secuencia`` (a gate's sequence recomputed from every stored row),
  ``contenedor`` (the production image as containers, run as the manifests run it);
* checks and data: ``contrato`` (outcomes against the schemas), ``eventos`` (valid events),
  ``version_siguiente`` (records of the next contract version), ``kustomize`` (manifests),
  ``duraciones`` (time per test file), ``entorno`` (the one environment of a test's process).

Imports ``esquemas``, ``criterios``, ``grafo``, ``infra``, ``puerta``, ``revision``,
``stream`` and ``versiones``; ``herramientas`` only as a process. Imported by tests and
benchmarks, never the product (tests/infra/test_fronteras.py).
"""
