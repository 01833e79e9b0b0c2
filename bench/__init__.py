"""Benchmark of the ficha processor: the worker as shipped against the naive design.

``python -m bench.run`` is the one command; see docs/rendimiento.md for the method.
"""
