"""The ``fichas`` command line: what people run by hand.

``cli`` is one table of subcommands (name, module, help) that ``fichas --help`` and the
dispatch both read; each module parses its own arguments and is imported only when it runs:
``worker`` (``stream.serving``) and ``revisor`` (``revision.web.app``) serve what those
packages build; ``procesar``, ``producir``, ``informe``, ``migrar``, ``llm_local``,
``retencion`` and ``promocion`` (``fichas puerta``) are one module each; ``calibrar``,
``evaluar`` and ``demo`` are packages; ``arranque`` is the start the commands share (exit
codes, settings, logs); ``informe_grafico`` draws the report's chart; ``definiciones`` and
``graficos`` are shared by the reports.

Stands on top of the product. Imports ``esquemas``, ``criterios``, ``migraciones``,
``versiones``, ``infra``, ``estadistica``, ``grafo``, ``stream``, ``puerta`` and ``revision``;
never ``harness`` (test support), and no product package imports it
(tests/infra/test_fronteras.py checks both). What each command prints and how it fails:
docs/operacion.md.
"""
