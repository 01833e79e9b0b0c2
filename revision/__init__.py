"""The reviewer web app (``fichas revisor``): people close the loop the graph cannot.

It reads ``fichas.revision_manual`` and ``fichas.muestra_revision`` into a queue, lets
reviewers approve, edit, reject or grade, writes every decision on ``fichas.decisiones`` (an
approval carries the publication the worker writes), measures the evaluator against people,
and opens and closes the publication gates from their decisions. Its subsystems, each a
package, from the bottom up:

* ``almacen``: the review store (queue, outbox, evidence, accounts) and the queue's way in
  and out of Kafka;
* ``certificador``: trust in the evaluator, and the gates opened, covered and closed from it;
* ``web``: the pages, forms, sessions and machine endpoints; ``fichas revisor`` itself.

Imports ``esquemas``, ``criterios``, ``estadistica``, ``migraciones``, ``versiones``,
``puerta`` and ``infra``; never ``stream`` or ``grafo``. ``herramientas`` and ``harness``
import it. docs/revision.md (Spanish) holds the why.
"""
