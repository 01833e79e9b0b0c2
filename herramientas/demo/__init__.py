"""``fichas demo`` (what ``make demo`` runs): the whole job on one machine.

It starts what is missing (the local Kafka of ``scripts/kafka.sh``, the small CPU model of
``fichas llm-local``, one ``fichas worker``), writes the sample feed into the input topic,
shows every line's fate while the outcomes arrive, ends with a summary, and stops everything
it started, whether the run completed, timed out or was interrupted. Modules: ``avance`` (the
feed and each line's fate), ``kafka`` (writing the feed, reading outcomes), ``vista`` (the
live table), ``resumen`` (the summary), ``estados_puerta`` (the gate file and lines), ``revisor``
(the review app at the end), ``servicios`` (Kafka, the model, the worker), ``principal`` (the
command line).

Invariants: a run never sees another's messages (its topics, group and data folder carry its
run id); a run is complete, by the contract's guarantees alone, when every valid event has an
outcome or a newer version of its SKU has one, and every invalid line has its DLQ record
(found by ``origen``); outcomes are deduplicated on ``event_id`` (delivery is at least once).
Environment, outputs and the reasons: docs/operacion.md, "`fichas demo`".
"""
