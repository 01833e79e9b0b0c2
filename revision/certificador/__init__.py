"""The certifier: how far the evaluator is trusted, and the gates that follows from it.

``confianza`` (the evaluator against people), ``retenidas`` (the gate's recall),
``secuencias`` (each gate sequence's stored state), ``apertura`` (gates opened and families
covered), ``vigilancia`` (gates closed by the sample's verdicts), ``gobierno`` (which gate
governs a family, in words), ``comparacion`` (live and candidate keys side by side),
``escritura`` (each gate record once), ``lease`` (one certifier among replicas), ``rondas``
(the background rounds). docs/puerta.md and docs/revision.md.
"""
