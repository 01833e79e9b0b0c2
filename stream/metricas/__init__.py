"""What the worker reports while it runs.

``sensor`` (the interface the flow and the commit path call), ``series`` (every Prometheus
series declared once: names, labels, help, buckets), ``prometheus`` (the implementation that
updates them). docs/metricas.md lists the series.
"""
