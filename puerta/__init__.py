"""The publication gate: certify a score threshold against people, resolve and share its state.

A ficha is published without a person only where the precision of automatic approvals against
people is certified (docs/puerta.md). The modules, each with one reason to change:

- ``certificacion``: Learn-then-Test fixed-sequence testing of the thresholds on a batch, and the
  batch's coverage of families by the pooled certification (pure);
- ``secuencial``: opening from shadow-mode decisions with a betting e-process per threshold,
  valid however often one looks, and the sequence's stored state advanced by new decisions only;
- ``exclusion``: a family's own evidence that its precision is below the objective (pure);
- ``cobertura``: when the open pooled gate covers a family, and the records that say so (pure);
- ``alcance``: which families (and whether the pooled gate) the app may open by itself (pure);
- ``retencion``: a person's hold and release of a gate, at its own key (pure);
- ``resolucion``: which gate governs a family under the running key, and why (pure);
- ``cota``: an anytime-valid confidence bound on precision from sample verdicts (pure);
- ``topico``: the compacted topic ``fichas.puerta`` every worker reads (Kafka);
- ``auditoria``: the JSON audit file of what was certified, on which data.

Depends on ``esquemas`` only, and ``topico`` on ``infra`` too (the settings, and the Kafka
clients every part of the product builds in one place), so the worker, the reviewer app and
the command line tools can all use it.
"""
