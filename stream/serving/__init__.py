"""``fichas worker`` served: every part started in order, run until a signal, stopped in order.

``main`` (``serve``: settings to a running worker and back), ``http`` (``/metrics``,
``/health/live``, ``/health/ready``). docs/operacion.md, "The worker".
"""
