"""The version store: the newest version handled per SKU and one outcome per ``event_id``.

What fences every emission of the worker, and what the reviewer app asks before publishing a
person's decision (a newer version handled by the worker wins). Three modules, each with one
reason to change:

- ``regla``: the claim rule, pure (``dictaminar``, ``obsoleta``, ``huella``, ``Dictamen``);
- ``migrations``: the store's numbered migrations;
- ``almacen``: the SQL store on the one ``migraciones.Database`` (``open_version_store``, the
  ``VersionStore`` and ``ClaimStore`` protocols).

Imports ``esquemas`` (the event it fingerprints) and ``migraciones`` only; ``stream`` (the
worker), ``revision`` (the reviewer app) and ``herramientas`` (``fichas migrar``) share it.
"""
