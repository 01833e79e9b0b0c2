"""Plumbing below the worker and the review app, shared with the command line and the harness.

Imports ``esquemas`` only (the contract's constants); ``stream``, ``revision``, ``puerta``,
``herramientas`` and ``harness`` stand on it, so the worker and the app share their plumbing
without importing each other. The modules:

* ``config`` (the ``FICHAS_*`` settings, validated at start-up; a prompt file's text is
  ``grafo``'s check, given to ``load_settings``), ``logs`` (JSON or human lines, secrets
  masked), ``eventloop`` (uvloop for the long-running commands);
* ``credentials`` (how a client proves who it is to Kafka: protocols, SASL mechanisms, the
  credential files); ``kafka`` (a package: every Kafka client built from one options function,
  why Kafka refused a client, the contract's topics, group-less reads);
* ``network`` (free ports, readiness polling), ``fault_points`` (named fault-injection points,
  inert unless a test arms them), ``tasks`` (where an asyncio task waits, for the log line of a
  task cut short).
"""
