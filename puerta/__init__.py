"""The publication gate: certify a score threshold against people, resolve and share its state.

A ficha is published without a person only where the precision of automatic approvals against
people is certified (docs/puerta.md). The modules, each with one reason to change:

- ``certificacion``: Learn-then-Test fixed-sequence testing of the thresholds (pure);
- ``cota``: an anytime-valid confidence bound on precision from sample verdicts (pure);
- ``secuencial``: opening from shadow-mode decisions with a betting e-process per threshold,
  valid however often one looks (pure);
- ``resolucion``: which gate state applies to a family under the running key (pure);
- ``topico``: the compacted topic ``fichas.puerta`` every worker reads (Kafka);
- ``auditoria``: the JSON audit file of what was certified, on which data.

Depends on ``esquemas`` only, and ``topico`` on ``infra`` too (the settings, and the Kafka
clients every part of the product builds in one place), so the worker, the reviewer app and
the command line tools can all use it.
"""
