"""The commit point of a partition: its contiguous watermark, and in the commit's metadata the
offsets above it that are already finished (``v1:<base64>`` bitset, least significant bit
first: bit ``i`` is offset ``watermark + 1 + i``; empty when none).

The next owner skips those offsets, so an outcome already committed is not written twice. The
bitset's size is bounded (``max_length(WINDOW + MAX_FETCH)``, 1,711 bytes, under the broker's
4,096). Why a bitset and why that bound: docs/stream.md, "Offsets inside the output
transaction".
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable

log = logging.getLogger(__name__)

PREFIX = "v1:"
# A partition is paused while (highest fetched offset - watermark) >= WINDOW.
WINDOW = 8192
# At most this many records of one partition arrive in one fetch after the pause is decided:
# the worker's buffer cap, max(2 x FICHAS_CONCURRENCIA, 8), with FICHAS_CONCURRENCIA <= 1024.
MAX_FETCH = 2 * 1024
# The broker's default offset.metadata.max.bytes.
BROKER_METADATA_MAX = 4096


def encode(watermark: int, finished: Iterable[int]) -> str:
    """The metadata of a commit at ``watermark``: the finished offsets above it."""
    bits = sorted({offset - watermark - 1 for offset in finished if offset > watermark})
    if not bits:
        return ""
    buf = bytearray((bits[-1] + 8) // 8)
    for bit in bits:
        buf[bit >> 3] |= 1 << (bit & 7)
    return PREFIX + base64.b64encode(bytes(buf)).decode("ascii")


def decode(watermark: int, metadata: str | None) -> set[int]:
    """The finished offsets above ``watermark`` that ``metadata`` lists.

    Metadata this worker did not write (empty, another tool's, corrupt) lists nothing: every
    offset from the watermark on is then handled again, the at-least-once of a plain commit.
    """
    if not metadata:
        return set()
    if not metadata.startswith(PREFIX):
        log.warning("commit metadata %r is not this worker's; nothing skipped", metadata[:40])
        return set()
    try:
        raw = base64.b64decode(metadata[len(PREFIX) :], validate=True)
    except ValueError:
        log.warning("commit metadata %r is corrupt; nothing skipped", metadata[:40])
        return set()
    return {
        watermark + 1 + (index << 3) + bit
        for index, byte in enumerate(raw)
        for bit in range(8)
        if byte >> bit & 1
    }


def max_length(span: int) -> int:
    """The longest metadata of a bitset of ``span`` bits (the window's arithmetic)."""
    if span <= 0:
        return 0
    data = (span + 7) // 8
    return len(PREFIX) + 4 * ((data + 2) // 3)
