"""A stopped test broker's folder read with Kafka's own DumpLogSegments, for failure messages.

A test about transactions that fails needs what the broker holds at that moment (its folder is
deleted at teardown): the batches of a partition around some offsets (producer, epoch, data or
COMMIT/ABORT marker), a transactional id's entries in ``__transaction_state``, a group's
committed offsets in ``__consumer_offsets``, and the broker log's lines about them. Each dump
is a JVM start (a few seconds), so only failure paths call these (tests/stream/test_kill.py).
Lines are short and few: CI shows a long message's head and tail only.
"""

from __future__ import annotations

import json
import re
import time

from harness.kafka_broker import KafkaBroker

# Broker log lines about a restart that decide what happens to open transactions.
BROKER_MARKS = ("Fencing broker", "likely deleted", "rollback", "Kafka Server started")


def hms(ms: int) -> str:
    """A record's millisecond timestamp as HH:MM:SS.mmm (UTC), as the broker log writes it."""
    return time.strftime("%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}"


def cut(lines: list[str], most: int) -> list[str]:
    """At most ``most`` lines: the first and the last ones."""
    if len(lines) <= most:
        return lines
    half = most // 2
    return [*lines[:half], f"  ... {len(lines) - 2 * half} lines ...", *lines[-half:]]


def broker_lines(kafka: KafkaBroker, wanted: tuple[str, ...]) -> list[str]:
    """The broker log's lines naming ``wanted`` or a BROKER_MARKS: the last few before its
    kill, every one since its restart (the first ones and the last ones if too many)."""
    lines: list[str] = []
    for name, last in (("kafka.out.prev", 3), ("kafka.out", 0)):
        path = kafka.data_dir / name
        found = [
            line
            for line in (path.read_text(errors="replace").splitlines() if path.exists() else [])
            if any(w in line for w in (*wanted, *BROKER_MARKS))
            and not any(n in line for n in ("Replayed", "marker queue", "Loading trans"))
        ]
        for line in found[-last:]:
            text = re.sub(r" [(][a-z.]+[A-Za-z]+[)]$", "", line[26:])
            if len(text) > 150:  # the head and the end, where a marker's fate is told
                text = f"{text[:95]} ... {text[-50:]}"
            lines.append(f"  {line[12:24]} {text}")
    if len(lines) <= 16:
        return lines
    # The first and last lines, and every one saying markers were dropped or the broker fenced.
    keep = [i for i, line in enumerate(lines) if "likely deleted" in line or "Fencing" in line]
    keep = sorted({*range(5), *keep, *range(len(lines) - 8, len(lines))})
    return [lines[i] if i - 1 in keep or i == keep[0] else "  ...\n" + lines[i] for i in keep]


def partition_of(key: bytes, partitions: int) -> int:
    """The partition the test's producer wrote ``key`` to (the Java client's murmur2)."""
    from aiokafka.partitioner import murmur2

    return (murmur2(key) & 0x7FFFFFFF) % partitions


def java_partition(name: str, partitions: int) -> int:
    """``Utils.abs(name.hashCode()) % partitions``: a coordinator's partition of ``name``."""
    h = 0
    for c in name:
        h = (31 * h + ord(c)) & 0xFFFFFFFF
    h = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if h == -(1 << 31) else abs(h)) % partitions


def dump_segments(kafka: KafkaBroker, partition: str, *options: str) -> list[str]:
    """Kafka's DumpLogSegments over every segment of one partition in the broker's folder
    (``KafkaBroker.dump_log``), one line per batch or record."""
    folder = kafka.data_dir / "kraft" / partition
    segments = sorted(folder.glob("*.log"))
    if not segments:
        return [f"  (no segment in {folder})"]
    files = ",".join(map(str, segments))
    proc = kafka.dump_log("--deep-iteration", *options, "--files", files)
    if proc.returncode != 0:
        return [f"  (DumpLogSegments failed, {proc.returncode}: {proc.stderr[-300:]})"]
    return proc.stdout.splitlines()


def fields(line: str) -> dict[str, str]:
    """The ``name: value`` pairs of a DumpLogSegments line (values without spaces)."""
    return dict(re.findall(r"(\w+): (\S+)", line))


def batches(kafka: KafkaBroker, partition: str, low: int, high: int) -> list[str]:
    """One line per batch meeting offsets [low, high]: producer, epoch, data or marker."""
    lines: list[str] = []
    keep = False
    for line in dump_segments(kafka, partition):
        if line.startswith("baseOffset:"):
            f = fields(line)
            keep = int(f["lastOffset"]) >= low and int(f["baseOffset"]) <= high
            if keep:
                kind = "marker" if f["isControl"] == "true" else "data"
                txn = "txn" if f["isTransactional"] == "true" else "non-txn"
                lines.append(
                    f"  {f['baseOffset']}-{f['lastOffset']} pid={f['producerId']} "
                    f"epoch={f['producerEpoch']} {txn} {kind} {hms(int(f['CreateTime']))}"
                )
        elif keep and "endTxnMarker" in line:
            f = fields(line)
            lines[-1] += f" {f['endTxnMarker']} coordinatorEpoch={f.get('coordinatorEpoch')}"
        elif line.startswith("  ("):
            lines.append(line)
    return lines or [f"  (no batch in [{low}, {high}])"]


def near(at: int, times: list[int], before: int = 3000, after: int = 3000) -> bool:
    """``at`` (ms) is within a few seconds of one of ``times``."""
    return any(t - before <= at <= t + after for t in times)


def transactions(
    kafka: KafkaBroker, partition: str, txn_id: str, times: list[int], prefix: str
) -> list[str]:
    """The transaction log's entries for ``txn_id`` (runs of Ongoing entries shown by their
    last one): the last ones written by the first doubled record's time, the ones that follow
    (how that transaction ended, the next epochs), and later aborts and fences."""
    entries: list[tuple[int, bool, str]] = []  # (time, plain commit cycle, line)
    for line in dump_segments(kafka, partition, "--transaction-log-decoder"):
        if line.startswith("  ("):
            return [line]
        if not line.startswith("| offset:") or txn_id not in line:
            continue
        at = int(fields(line).get("CreateTime", "0"))
        data = json.loads(line.split("payload:", 1)[1])["data"]
        status = data["transactionStatus"]
        parts = ",".join(
            f"{p['topic'].removeprefix(prefix + '.')}-{'/'.join(map(str, p['partitionIds']))}"
            for p in data.get("transactionPartitions") or []
        )
        entry = (
            f"  @{fields(line)['offset']} {hms(at)} pid={data['producerId']} "
            f"epoch={data['producerEpoch']} {status} [{parts}]"
        )
        plain = status in ("Ongoing", "PrepareCommit", "CompleteCommit")
        if status == "Ongoing" and entries and " Ongoing " in entries[-1][2]:
            entries[-1] = (at, plain, entry)
        else:
            entries.append((at, plain, entry))
    upto = [n for n, (at, _, _) in enumerate(entries) if at <= min(times) + 2000]
    k = upto[-1] + 1 if upto else 0
    lines = [line for _, _, line in entries[max(0, k - 6) : k + 7]]
    later = [line for at, plain, line in entries[k + 7 :] if not plain and at <= max(times) + 60000]
    return [*lines, *later[:4]] or ["  (no entry)"]


def offset_commits(kafka: KafkaBroker, partition: str, wanted: str, times: list[int]) -> list[str]:
    """The committed offsets of one input partition near the doubled records' times, with
    their batch's producer and epoch, and the markers those producers wrote there."""
    entries: list[tuple[str, str, str]] = []  # (producer id, marker or "", line)
    batch: dict[str, str] = {}
    for line in dump_segments(kafka, partition, "--offsets-decoder"):
        if line.startswith("baseOffset:"):
            batch = fields(line)
        elif line.startswith("  ("):
            entries.append(("", "", line))
        elif line.startswith("| offset:"):
            f = fields(line)
            at = int(f.get("CreateTime", "0"))
            if not near(at, times):
                continue
            pid = batch.get("producerId", "?")
            head = f"  @{f['offset']} {hms(at)} pid={pid} epoch={batch.get('producerEpoch')}"
            if "endTxnMarker" in f:
                entries.append((pid, f["endTxnMarker"], f"{head} {f['endTxnMarker']}"))
            elif wanted in line:
                try:
                    data = json.loads(line.split("payload:", 1)[1])["data"]
                    value = f"offset={data['offset']} metadata={data['metadata']}"
                except (IndexError, ValueError, KeyError):
                    value = line[-120:]
                entries.append((pid, "", f"{head} {value}"))
    pids = {pid for pid, marker, _ in entries if not marker}
    lines = [line for pid, marker, line in entries if not marker or pid in pids]
    return cut(lines, 10) or ["  (nothing near those times)"]
