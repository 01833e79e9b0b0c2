"""``fichas demo`` (what ``make demo`` runs): the whole job on one machine.

It starts what is missing (the local Kafka of ``scripts/kafka.sh``, the small CPU model of
``fichas llm-local``, one ``fichas worker``), writes the sample supplier feed into the input
topic, shows every line's fate while the outcomes arrive, and ends with a summary. Everything it
started is stopped on the way out, whether the run completed, timed out or was interrupted.

Why a run never sees another run's messages: each run gets a run id, and the worker's topics,
consumer group and data directory carry it (``proveedor.cambios.demo-<id>``, ...,
``.fichas/demo-<id>``). A second run therefore works on the same broker, reprocesses the feed
from scratch (the version store is per run) and reads only its own outcomes.

How it knows the run is complete, with the contract's guarantees as the only knowledge: every
valid event has an outcome (published or manual review), or a newer version of its SKU has one
(then it was obsolete and never gets one: guarantee 1, and outcomes of a SKU come in version
order, guarantee 3); every invalid line has a DLQ record, found by the partition and offset it
was written to (``origen`` of ``EventoRechazado``). Outcomes are deduplicated on ``event_id``
because delivery is at least once.

Environment: ``FICHAS_KAFKA_BROKERS`` pointing elsewhere than the local script's port
(``127.0.0.1:${FICHAS_KAFKA_PORT:-9092}``) uses that broker and starts none; ``FICHAS_LLM_URL``
set uses that OpenAI-compatible server (e.g. a vLLM, with its ``FICHAS_LLM_MODELO``) and starts
no local model. Outcomes are also written to ``salida/demo-<id>.jsonl`` in the format of
``fichas procesar``, so ``fichas informe salida/demo-<id>.jsonl`` reads them.

Modules: ``avance`` (the feed and each line's fate), ``kafka`` (writing the feed, reading
outcomes), ``vista`` (the live table), ``resumen`` (the summary), ``servicios`` (starting and
stopping Kafka, the model and the worker), ``principal`` (the command line).
"""
