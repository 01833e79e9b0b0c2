"""``fichas evaluar``: the fichas measured against the labelled set, on any OpenAI-compatible
server.

``principal`` (the parser and ``main``), ``casos`` (the labelled set and the origin the
agents see), ``ejecucion`` (the runs: the evaluator alone, or the whole loop), ``medidas``
(the numbers, pure), ``resumen`` (what it prints and draws). docs/calidad.md.
"""
