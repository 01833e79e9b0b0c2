"""``fichas calibrar``: certify the publication gate's threshold against people's labels.

``principal`` (the parser, the labels' sources, the certification, the gate file and topic),
``recalificar`` (a new evaluator scored on people's old labels). docs/puerta.md.
"""
