"""``fichas calibrar``: certify the publication gate's threshold against people's labels.

``principal`` (the parser, the labels' sources, the certification, the gate file and topic),
``recalificar`` (a new evaluator on people's old labels: the sources, what is left out),
``historias`` (each labelled history replayed under the running judge). docs/puerta.md.
"""
