"""Plumbing below the worker and the review app, shared with the command line and the harness.

Imports ``esquemas`` only (the contract's constants); ``stream``, ``revision``, ``puerta``,
``herramientas`` and ``harness`` stand on it, so the worker and the app share their plumbing
without importing each other:

* ``infra.config``: the ``FICHAS_*`` settings, validated at start-up;
* ``infra.prompt_archivo``: the prompt files that replace the package's templates, read once;
* ``infra.logs``: JSON or human log lines, secrets masked;
* ``infra.eventloop``: uvloop for the long-running commands;
* ``infra.kafka``: every Kafka client of the product, built from one options function (how to
  reach the cluster and authenticate to it), the start-up wait for the broker and the login check;
* ``infra.kafka_security``: the security protocols and the credential files' checks;
* ``infra.kafka_access``: why Kafka refused a client (login, certificate, ACL), in one line;
* ``infra.topics``: the contract's topics (settings, creation, partitions);
* ``infra.kafka_read``: group-less reads of topics to their current end (``fichas informe
  --kafka``, ``fichas calibrar``, the harness's topic helpers);
* ``infra.network``: free ports and readiness polling (the demo, ``fichas llm-local``, the harness);
* ``infra.fault_points``: the named fault-injection points, inert unless a test arms them.
"""
