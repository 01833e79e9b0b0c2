"""The candidate loop: a second key run in shadow beside the live one, never publishing.

``ajustes`` (its settings from the live ones, its budget), ``bucle`` (routing, budget, run,
the review record it writes), ``metricas`` (its own sensor and run counters).
docs/operacion.md, "A candidate key".
"""
