"""The product's local harness: what runs it without its production neighbours.

Imported by the tests and the benchmarks (never the other way, and never by the `fichas` command
line: tests/infra/test_fronteras.py):

* ``harness.fake_llm`` (a package: prompt contract, script, answers, server) and
  ``harness.fake_llm_client``: a scriptable OpenAI-compatible server, run
  as a real process, to try the whole pipeline without a GPU or a model;
* ``harness.kafka_broker``: a real single-node Kafka (``scripts/kafka.sh``) on ports of its own;
* ``harness.topicos``: creating, writing and reading topics by hand (group-less readers);
* ports and readiness polling, and the group-less topic readers, are in ``infra`` (shared with
  the command line, which never imports this package);
* ``harness.eventos``: ready-made valid ``EventoCambio`` values;
* ``harness.worker``: ``fichas worker`` as a real process, with its metrics and logs;
* ``harness.puerta``: the gate key of a fake-LLM worker, and open or closed gates on a topic;
* ``harness.kustomize``: the Kubernetes overlays rendered by the pinned kustomize
  (``scripts/kustomize.sh``), for the manifest tests;
* ``harness.contrato``: every outcome checked against the committed JSON Schemas, the models
  and the headers (needs the ``dev`` extra: ``jsonschema``).

May import the product packages (``esquemas``, ``infra``, ``stream``, ...); nothing here
imports the tests or the tools.
"""
