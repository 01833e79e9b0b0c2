"""``fichas calibrar``: certify the publication gate's threshold against people's labels.

``principal`` (the parser, ``main``, the certification, the gate file and topic), ``entradas``
(the labels' sources read and counted, the gate key), ``resumen`` (what the command prints),
``recalificar`` (a new evaluator on people's old labels: the sources, what is left out),
``historias`` (each labelled history replayed under the running judge). docs/puerta.md.
"""
