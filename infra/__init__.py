"""Plumbing the shipped product and the local harness share; imports nothing of the project.

It exists so the ``fichas`` command line never imports ``harness/`` (test support) and the
harness never keeps a second copy of what the product needs:

* ``infra.network``: free ports and readiness polling (the demo, ``fichas llm-local``, the harness);
* ``infra.kafka_read``: group-less readers that read topics to their current end (``fichas informe
  --kafka``, the demo's live table, the harness's topic helpers);
* ``infra.fault_points``: the named fault-injection points, inert unless a test arms them.

``tests/infra/test_fronteras.py`` keeps every product package free of ``harness`` imports.
"""
