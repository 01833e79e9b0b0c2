"""Which loop runs, and which gates govern its publishing.

``clave`` (the running key from the settings), ``identidad`` (the key follows the model the
server serves), ``runtime`` (the loop assembled for a key: chat model, agents, checkpointer,
graph, runner), ``fuente`` (the graph's ``FuentePuerta`` over gate states), ``seguimiento``
(``fichas.puerta`` read to its end before consuming, then kept current). docs/puerta.md.
"""
