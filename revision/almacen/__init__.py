"""The review store and the queue's way in and out.

``database`` (where it is and how it opens, on the one store layer), ``migrations`` (its
tables as numbered migrations), ``cola`` (items, decisions as an outbox, versions seen, the
gates' evidence), ``cuentas`` (reviewers, sessions, secrets), ``item`` (one thing to review),
``decisiones`` (the ``DecisionRevision`` a decision produces), ``flujo`` (the consumer that
fills the queue and the outbox that sends), ``obsoletas`` (the gates' countable items closed
obsolete before a decision). docs/revision.md, "La base de datos".
"""
