"""The review store and the queue's way in and out.

``database`` (where it is and how it opens, on the one store layer), ``migrations`` (its
tables as numbered migrations), ``cola`` (items, decisions as an outbox, versions seen, what
the figures read), ``evidencia`` (the gates' evidence each item leaves, the base of the
queue's store), ``filas`` (the rows by name: columns read, what the store takes and returns),
``cuentas`` (reviewers, sessions, secrets), ``item`` (one thing to review), ``decisiones``
(the ``DecisionRevision`` a decision produces), ``flujo`` (the consumer that fills the queue
and the outbox that sends), ``recalificaciones`` (every ``fichas calibrar --recalificar`` run:
the evaluator variants tried on the same labels), ``obsoletas`` (the gates' countable items
closed obsolete before a decision). docs/revision.md, "La base de datos".
"""
