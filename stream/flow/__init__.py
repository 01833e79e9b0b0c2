"""The flow: supplier events through the consumer group, one SKU lane each, to one outcome.

``worker`` (the group member: fetch, pace, rebalance, stop), ``lanes`` (one lane per SKU),
``handler`` (one valid event to one ``Desenlace``), ``muestreo`` (which published fichas go to
the sample, and why), ``decisiones`` (people's approvals published by the SKU's one writer),
``rechazo`` (the DLQ record), ``fallos`` (transient or not), ``retraso`` (lag and the oldest
waiting event). docs/stream.md holds the why.
"""
