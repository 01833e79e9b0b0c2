"""The commit path: every write of the worker and every offset, in which transaction, when.

``producers`` (one transactional producer per input partition: the fence), ``emitter`` (each
outcome and its offset in one transaction), ``inflight`` (what was fetched and not finished),
``ledger`` (the finished offsets of each partition and its commit point), ``metadata`` (that
point's encoding in the commit's metadata). docs/stream.md, "Delivery" and "Offsets".
"""
