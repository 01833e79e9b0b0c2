"""Every Kafka client of the product, and the contract's topics.

``clients`` (the builders, one options function every builder spreads, the start-up wait),
``access`` (why Kafka refused a client, in one line), ``topics`` (the contract's topics:
settings, creating the missing ones, partitions), ``read`` (group-less readers that stop at
the end seen at the start). ``infra.credentials`` is below it, since the settings check it.
docs/operacion.md, "Kafka security".
"""
