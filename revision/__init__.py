"""The reviewer web app (``fichas revisor``): people close the loop the graph cannot.

It reads ``fichas.revision_manual`` and ``fichas.muestra_revision`` into a queue, lets
reviewers approve, edit, reject or grade, publishes approvals on ``fichas.publicadas`` and every
decision on ``fichas.decisiones``, and measures the evaluator against people
(``revision.confianza``). Depends on ``esquemas``, ``criterios``, ``puerta``, ``estadistica``,
``migraciones``, ``infra`` (settings, logs, the event loop, Kafka clients) and
``versiones``; nothing depends on it except ``herramientas`` (the CLI and the report).
"""
