"""The publication gate: certify a score threshold against people, resolve and share its state.

A ficha is published without a person only where the precision of automatic approvals against
people is certified (docs/puerta.md, which holds the proofs and the measurements). The modules:

- ``certificacion``: Learn-then-Test on a batch, and the batch's coverage of families (pure);
- ``secuencial``, ``apuestas``: opening from shadow-mode decisions, valid however often one
  looks: the walk over the grid and its stored state, the betting e-process per threshold;
- ``exclusion``, ``cobertura``: a family's own evidence below the objective, and when the open
  pooled gate covers a family (pure);
- ``cota``, ``deteccion``, ``cierre``: the anytime-valid bound on precision, the change
  detector on the sampled verdicts, and the two together deciding a closure (pure);
- ``alcance``, ``retencion``, ``resolucion``: what the app may open by itself, a person's hold,
  which gate governs a family under the running key, and why (pure);
- ``lectura``: a gate record as this version reads it, fail closed (pure); ``topico``: the
  compacted topic ``fichas.puerta`` (Kafka); ``auditoria``: the audit file.

Imports ``esquemas`` and, in ``topico`` only, ``infra`` (settings, the Kafka clients built in
one place); the worker, the reviewer app and the command line tools all use it.
"""
