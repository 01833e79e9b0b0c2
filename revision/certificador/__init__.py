"""The certifier: how far the evaluator is trusted, and the gates that follows from it.

``confianza`` (the evaluator against people), ``retenidas`` (the gate's recall),
``secuencias`` (each gate sequence's stored state), ``coberturas`` (each family's own evidence
at the pooled λ), ``apertura`` (gates opened, relaxed and families covered), ``publicacion``
(the sample's verdicts in publication order), ``vigilancia`` (gates closed by them),
``gobierno`` (which gate governs a family, and the gates in play, in words), ``comparacion``
(live and candidate keys side by side), ``escritura`` (each gate record once), ``lease`` (one
certifier among replicas), ``rondas`` (the background rounds). docs/puerta.md and docs/revision.md.
"""
