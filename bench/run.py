"""``python -m bench.run``: throughput, latency and cost per ficha, worker against naive design.

One command starts everything it needs: a local Kafka broker (``harness.kafka_broker``) on free
ports, the fake LLM server (``harness.fake_llm``) with ``--latency-ms`` per call and at most
``--cap`` calls in parallel, and a feed of N events whose approval attempt is scripted per SKU
(``bench.feed``). Each scenario gets its own topics, consumer group and data directory; its
process(es) start, and once every input partition is owned its events are produced in one
burst; it ends when every outcome is in the output topics. See docs/rendimiento.md for the
method and the formulas. The table is followed by the throughput and cost targets, each met
or missed.

Scenarios: ``worker_1`` (one ``fichas worker``, FICHAS_CONCURRENCIA = cap), ``worker_2`` (two
workers in one consumer group, 8 input partitions), ``ingenuo`` (``bench.naive``: the source
article's design, one event at a time, through the same Kafka), and the concurrency sweep
``worker_1_c<K>`` for the chart; with ``--candidata P``, ``worker_1_candidata``: ``worker_1``
with a candidate loop in shadow on a share P of the SKUs (issue 41: the live loop's throughput
beside it, against ``worker_1``). ``--quick`` is the CI variant: few events, no sweep;
``--prueba`` is ``--quick`` smaller still, for the test of the tool (``tests/bench``), not a
measurement (only the CPU guard's scenario keeps its size); ``--solo`` runs only the named
scenarios.
The exit code is non-zero when the harness breaks, and 3 when the CPU guard fails
(``bench.guardia``: the 3-attempt ficha's CPU over the fake LLM's CPU in the same scenario,
so it holds on a busy machine and fails on a doubling); never because a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from bench.feed import (
    DEFAULT_SHARE,
    Evento,
    fake_llm_config,
    llm_bound,
    llm_calls,
    make_feed,
    mean_calls,
    parse_share,
)
from bench.guardia import calibrar, veredicto_guardia
from bench.medir import (
    Filas,
    Proceso,
    checkpoint_rows,
    count_inserts,
    cpu_ms,
    machine_cpu_ms,
    naive_command,
    worker_command,
)
from bench.naive import READY_FILE
from bench.ocupacion import linea, ocupacion, techo_pct
from estadistica import percentile
from harness.entorno import entorno as entorno_proceso
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics
from infra.network import free_port

BENCH_DIR = Path(__file__).resolve().parent
# The row the CPU guard reads (bench.guardia), and the exit status when it fails.
ESCENARIO_GUARDIA = "worker_1_3int"
EXIT_GUARDIA = 3
DEFAULT_OUT = BENCH_DIR / "resultados.json"
INPUT_PARTITIONS = 8
OUTPUT_PARTITIONS = 4
# Events per worker scenario of --quick: the CPU guard's scenario has this many in --prueba too
# (with fewer its CPU per ficha was at the mercy of the idle polling; docs/rendimiento.md).
N_QUICK = 60

COLUMNS = (
    "escenario",
    "procesos",
    "concurrencia",
    "n",
    "fichas_s",
    "limite_llm_s",
    "pct_limite",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "cpu_ms_ficha",
    "filas_ficha",
    "filas_ficha_3",
    "checkpoints_ficha_3",
    "bytes_ficha",
    "rss_pico_mib",
    "llamadas_ficha",
    "cpu_llm_ms_ficha",
    "cpus_maquina",
    "duracion_s",
)


@dataclass(frozen=True)
class Escenario:
    """One measured run: which process, how many, at which concurrency, on how many events."""

    nombre: str
    tipo: str  # "worker" | "ingenuo"
    procesos: int
    concurrencia: int
    n: int
    share: dict[str, float] | None = None  # None: the run's --share
    candidata: float = 0.0  # FICHAS_CANDIDATA_PROPORCION of the scenario's worker


@dataclass
class Fila:
    """One row of the table; see COLUMNS and docs/rendimiento.md for each formula."""

    escenario: str
    procesos: int
    concurrencia: int
    n: int
    fichas_s: float
    limite_llm_s: float
    pct_limite: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    cpu_ms_ficha: float
    filas_ficha: float
    filas_ficha_3: float
    checkpoints_ficha_3: float
    bytes_ficha: float
    rss_pico_mib: float
    llamadas_ficha: float
    cpu_llm_ms_ficha: float
    cpus_maquina: float
    duracion_s: float


@dataclass(frozen=True)
class Opciones:
    """Command-line options, resolved (quick mode fills its smaller defaults)."""

    n: int
    n_ingenuo: int
    latency_ms: float
    cap: int
    share: dict[str, float]
    sweep: tuple[int, ...]
    quick: bool
    profile: bool
    out: Path
    grafico: Path | None
    keep: bool
    candidata: float = 0.0
    solo: tuple[str, ...] = ()
    prueba: bool = False


# --------------------------------------------------------------------------- Kafka helpers


async def produce_feed(bootstrap: str, topic: str, feed: list[Evento]) -> dict[str, int]:
    """Write the feed keyed by SKU; return each event_id's record timestamp (ms)."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20)
    await producer.start()
    try:
        futures = [await producer.send(topic, e.valor, key=e.sku.encode()) for e in feed]
        metas = await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return {f"{e.sku}-v1": meta.timestamp for e, meta in zip(feed, metas, strict=True)}


async def collect_outcomes(
    bootstrap: str, topics: list[str], expected: int, timeout_s: float
) -> tuple[list[tuple[str, int, str]], int]:
    """Read the output topics from the start until ``expected`` outcomes: (event_id, ts, topic),
    and how many candidate items were seen meanwhile (``candidata``: shadow evidence, not an
    outcome; it carries the live event's ``event_id``).

    DLQ records count too (an invalid event is an outcome), though the feed has none.
    """
    candidatas: set[str] = set()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, isolation_level="read_committed"
    )
    await consumer.start()
    found: dict[str, tuple[str, int, str]] = {}
    try:
        tps = [TopicPartition(t, p) for t in topics for p in range(OUTPUT_PARTITIONS)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        deadline = time.monotonic() + timeout_s
        while len(found) < expected:
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {len(found)}/{expected} outcomes after {timeout_s:.0f}s")
            batch = await consumer.getmany(timeout_ms=500)
            for tp, records in batch.items():
                for record in records:
                    value = json.loads(record.value)
                    event_id = value.get("event_id") or str(uuid.uuid4())
                    if value.get("candidata"):
                        candidatas.add(event_id)
                        continue
                    # at-least-once: a duplicate keeps the first timestamp
                    found.setdefault(event_id, (event_id, record.timestamp, tp.topic))
    finally:
        await consumer.stop()
    return list(found.values()), len(candidatas)


# --------------------------------------------------------------------------- one scenario


@dataclass
class Entorno:
    """What every scenario shares: broker, fake LLM, scratch dir, options."""

    kafka: KafkaBroker
    llm: FakeLLM
    tmp: Path
    opciones: Opciones


MODELO_CANDIDATA = "fake-candidata"  # the candidate's model name: its calls are told apart


def _env(
    entorno: Entorno, topics: Topics, data_dir: Path, concurrencia: int, candidata: float = 0.0
) -> dict[str, str]:
    """Environment of one measured process: the shipped defaults except where noted."""
    env = entorno_proceso(
        kafka=entorno.kafka,
        llm=entorno.llm,
        topics=topics,
        data_dir=data_dir,
        FICHAS_METRICAS_PUERTO=str(free_port()),
        FICHAS_CONCURRENCIA=str(concurrencia),
        FICHAS_PARTICIONES=str(OUTPUT_PARTITIONS),
        FICHAS_GRACIA_S="10",
        # Throughput of the loop as measured before the gate: a closed gate (no record on
        # this run's topic) would end every ficha after one attempt and change the load.
        FICHAS_PUERTA="veredicto",
    )
    if candidata > 0:  # the candidate's budget is the default, a tenth of the concurrency
        env.update(
            FICHAS_CANDIDATA_PROPORCION=str(candidata),
            FICHAS_CANDIDATA_LLM_MODELO=MODELO_CANDIDATA,
        )
    return env


async def run_scenario(
    entorno: Entorno, esc: Escenario, profile_to: Path | None = None
) -> tuple[Fila, dict[str, Any]]:
    """Produce the feed, start the process(es), wait for every outcome, measure, stop."""
    op = entorno.opciones
    kafka, llm = entorno.kafka, entorno.llm
    topics = Topics()
    outputs = [topics.publicadas, topics.revision, topics.dlq]
    await kafka.create_topic_async(topics.entrada, INPUT_PARTITIONS)
    for name in [*outputs, topics.muestra]:
        await kafka.create_topic_async(name, OUTPUT_PARTITIONS)
    feed = make_feed(esc.n, esc.share or op.share, f"{esc.nombre}-{uuid.uuid4().hex[:6]}")
    await llm.areset()

    procesos: list[Proceso] = []
    for i in range(esc.procesos):
        data_dir = entorno.tmp / f"{esc.nombre}-{i}"
        data_dir.mkdir(parents=True)
        env = _env(entorno, topics, data_dir, esc.concurrencia, esc.candidata)
        log_path = entorno.tmp / f"{esc.nombre}-{i}.log"
        if esc.tipo == "ingenuo":
            procesos.append(
                Proceso(
                    esc.nombre, naive_command(), env, log_path, ready_file=data_dir / READY_FILE
                )
            )
        else:
            url = f"http://127.0.0.1:{env['FICHAS_METRICAS_PUERTO']}/health/ready"
            procesos.append(Proceso(esc.nombre, worker_command(), env, log_path, ready_url=url))

    chain_s = mean_calls(esc.share or op.share) * op.latency_ms / 1000
    # 300 s before any work: on a 2-core machine at load average 20 the broker took 10-15 s
    # per transactional-id lookup, and a scenario of the quick run saw no outcome in 124 s
    timeout = 300 + 4 * esc.n * chain_s / min(esc.concurrencia * esc.procesos, op.cap)
    llm_pid = entorno.llm.pid
    assert llm_pid is not None
    spy: subprocess.Popen[bytes] | None = None
    try:
        for p in procesos:
            p.start()
        for p in procesos:
            await asyncio.to_thread(p.wait_ready)
        await _wait_assigned(procesos)
        for i, p in enumerate(procesos):
            p.mark_cpu()
            count_inserts(entorno.tmp / f"{esc.nombre}-{i}")
        llm_cpu_start = cpu_ms(llm_pid)
        machine_start = machine_cpu_ms()
        started = time.monotonic()
        if profile_to is not None:
            spy = _start_py_spy(procesos[0].pid, profile_to)
        produced = await produce_feed(kafka.bootstrap, topics.entrada, feed)
        outcomes, candidatas = await collect_outcomes(kafka.bootstrap, outputs, esc.n, timeout)
        duracion = time.monotonic() - started
        for p in procesos:
            p.sample_end()
        llm_cpu = cpu_ms(llm_pid) - llm_cpu_start
        machine_end = machine_cpu_ms()
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
    except BaseException:
        for p in procesos:
            print(f"--- {p.nombre} log tail ---\n{p.log_tail()}", file=sys.stderr)
        raise
    finally:
        for p in procesos:
            await asyncio.to_thread(p.stop)
        if spy is not None and spy.poll() is None:
            spy.kill()
    stats = await llm.astats()
    registros = await llm.arequests(bodies=esc.candidata > 0)

    filas = [checkpoint_rows(entorno.tmp / f"{esc.nombre}-{i}") for i in range(esc.procesos)]
    fila = _fila(entorno, esc, feed, produced, outcomes, procesos, filas, stats, llm_cpu)
    fila.duracion_s = round(duracion, 2)
    busy, total = (end - start for end, start in zip(machine_end, machine_start, strict=True))
    fila.cpus_maquina = round((os.cpu_count() or 1) * busy / total, 2) if total else 0.0
    detalle = {
        "destinos": _count(o[2].rsplit(".", 1)[-1] for o in outcomes),
        "llm": {k: stats.get(k) for k in ("total", "by_agent", "peak_in_flight")},
        "cpu_arranque_ms": [round(p.cpu_ready_ms) for p in procesos],
        "filas_por_clase": _por_clase(filas, feed),
        "ocupacion": _ocupacion(registros, feed, op),
    }
    if esc.candidata > 0:
        detalle["candidata"] = {
            "proporcion": esc.candidata,
            "items_al_terminar": candidatas,
            "llamadas_llm": sum(
                1 for r in registros if (r.get("body") or {}).get("model") == MODELO_CANDIDATA
            ),
        }
    return fila, detalle


def _ocupacion(
    registros: list[dict[str, Any]], feed: list[Evento], op: Opciones
) -> dict[str, float]:
    """Where the scenario's % of the limit went (``bench.ocupacion``): the LLM's busy slots,
    the gaps between a ficha's calls, and the best % this feed allows."""
    datos = ocupacion(registros, op.cap)
    llamadas = [llm_calls(e.clase) for e in feed]
    datos["techo_pct"] = round(techo_pct(llamadas, op.cap, op.latency_ms / 1000), 1)
    return datos


async def _wait_assigned(procesos: list[Proceso], timeout_s: float = 90) -> None:
    """Wait until the group is stable: every process has partitions, all of them owned.

    Producing the feed only then keeps start-up and rebalances out of every number: with a
    backlog already there, the first member fetches it all before the second one joins.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        counts = [p.assigned_partitions() for p in procesos]
        if all(counts) and sum(c or 0 for c in counts) == INPUT_PARTITIONS:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"consumer group never stable: partitions {counts}")
        await asyncio.sleep(0.2)


def _count(items: Any) -> dict[str, int]:
    """A small Counter that stays JSON-friendly."""
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def _por_clase(filas: list[Filas], feed: list[Evento]) -> dict[str, dict[str, float]]:
    """Checkpoint and write rows per ficha, for each approval class of the feed."""
    fichas = _count(e.sku[:2] for e in feed)
    out: dict[str, dict[str, float]] = {}
    for prefix, count in fichas.items():
        cps = sum(f.por_clase.get(prefix, (0, 0))[0] for f in filas)
        wrs = sum(f.por_clase.get(prefix, (0, 0))[1] for f in filas)
        out[prefix] = {"checkpoints": round(cps / count, 2), "writes": round(wrs / count, 2)}
    return out


def _fila(
    entorno: Entorno,
    esc: Escenario,
    feed: list[Evento],
    produced: dict[str, int],
    outcomes: list[tuple[str, int, str]],
    procesos: list[Proceso],
    filas: list[Filas],
    stats: dict[str, Any],
    llm_cpu_ms: float,
) -> Fila:
    """Compute one row from what was measured; formulas in docs/rendimiento.md."""
    op = entorno.opciones
    n = len(outcomes)
    last = max(ts for _, ts, _ in outcomes)
    window_s = max((last - min(produced.values())) / 1000, 1e-3)
    fichas_s = n / window_s
    latencias = [float(ts - produced[eid]) for eid, ts, _ in outcomes if eid in produced]
    limite = llm_bound(esc.share or op.share, op.latency_ms, op.cap)
    cpu = sum(p.cpu_end_ms - p.cpu_ready_ms for p in procesos)
    rows = sum(f.checkpoints + f.writes for f in filas)
    n3 = sum(1 for e in feed if e.clase == "3")
    cps3 = sum(f.por_clase.get("A3", (0, 0))[0] for f in filas)
    wrs3 = sum(f.por_clase.get("A3", (0, 0))[1] for f in filas)
    return Fila(
        escenario=esc.nombre,
        procesos=esc.procesos,
        concurrencia=esc.concurrencia,
        n=n,
        fichas_s=round(fichas_s, 2),
        limite_llm_s=round(limite, 2),
        pct_limite=round(100 * fichas_s / limite, 1),
        p50_ms=round(percentile(latencias, 0.50) or 0),
        p95_ms=round(percentile(latencias, 0.95) or 0),
        p99_ms=round(percentile(latencias, 0.99) or 0),
        cpu_ms_ficha=round(cpu / n, 2),
        filas_ficha=round(rows / n, 2),
        filas_ficha_3=round((cps3 + wrs3) / n3, 2) if n3 else 0.0,
        checkpoints_ficha_3=round(cps3 / n3, 2) if n3 else 0.0,
        bytes_ficha=round(sum(f.bytes for f in filas) / n),
        rss_pico_mib=round(max(p.rss_mib for p in procesos), 1),
        llamadas_ficha=round(int(stats.get("total", 0)) / n, 2),
        cpu_llm_ms_ficha=round(llm_cpu_ms / n, 2),
        cpus_maquina=0.0,
        duracion_s=0.0,
    )


def _start_py_spy(pid: int, out: Path) -> subprocess.Popen[bytes] | None:
    """Sample the worker with py-spy (if installed) until SIGINT; collapsed stacks to ``out``."""
    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(exe).exists():
        print("py-spy not installed; no profile", file=sys.stderr)
        return None
    return subprocess.Popen(
        [
            exe,
            "record",
            "--pid",
            str(pid),
            "--rate",
            "250",
            "--format",
            "raw",
            "--output",
            str(out),
            "--nonblocking",
            "--threads",
            "--full-filenames",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


# --------------------------------------------------------------------------- the whole run


def escenarios(op: Opciones) -> list[Escenario]:
    """The scenarios of one run, headline first."""
    out = [Escenario("worker_1", "worker", 1, op.cap, op.n)]
    if op.candidata > 0:
        nombre = "worker_1_candidata"
        out.append(Escenario(nombre, "worker", 1, op.cap, op.n, candidata=op.candidata))
    out += [
        Escenario("worker_2", "worker", 2, op.cap, op.n),
        Escenario("ingenuo", "ingenuo", 1, 1, op.n_ingenuo),
        # every ficha approved at attempt 3: its CPU per ficha is the 3-attempt cost, and the
        # CPU guard's figure (bench.guardia), so the quick run gives it all its events
        Escenario(ESCENARIO_GUARDIA, "worker", 1, op.cap, _n_3int(op), {"3": 1.0}),
    ]
    for conc in op.sweep:
        if conc != op.cap:
            # fewer events at low concurrency keep the run short; >= 12 rounds of the lanes
            n = min(op.n, max(12 * conc, 48))
            out.append(Escenario(f"worker_1_c{conc}", "worker", 1, conc, n))
    return [e for e in out if not op.solo or e.nombre in op.solo]


def _n_3int(op: Opciones) -> int:
    """Events of the 3-attempt scenario: a third of ``--n``, or all of them in quick mode,
    where a third (20) left the guard's CPU per ficha at the mercy of the idle polling; the
    quick run's size under ``--prueba``, whose other scenarios are smaller."""
    if op.prueba:
        return N_QUICK
    return op.n if op.quick else max(op.n // 3, 30)


async def run_all(op: Opciones) -> dict[str, Any]:
    """Start broker and fake LLM, run every scenario, return the results document."""
    tmp = Path(tempfile.mkdtemp(prefix="fichas-bench-"))
    kafka = KafkaBroker(free_port(), tmp / "kafka")
    await asyncio.to_thread(kafka.start)
    filas: list[Fila] = []
    detalles: dict[str, Any] = {}
    calibraciones: list[float] = []
    guardia: dict[str, Any] | None = None
    try:
        with FakeLLM(fake_llm_config(op.latency_ms, op.cap)) as llm:
            entorno = Entorno(kafka, llm, tmp, op)
            for esc in escenarios(op):
                perfil = (
                    BENCH_DIR / "perfil_worker.txt"
                    if op.profile and esc.nombre == "worker_1"
                    else None
                )
                print(
                    f"[bench] {esc.nombre}: n={esc.n} procesos={esc.procesos} "
                    f"concurrencia={esc.concurrencia}",
                    file=sys.stderr,
                    flush=True,
                )
                if esc.nombre == ESCENARIO_GUARDIA:
                    calibraciones.append(calibrar())
                fila, detalle = await run_scenario(entorno, esc, perfil)
                if esc.nombre == ESCENARIO_GUARDIA:
                    calibraciones.append(calibrar())
                    guardia = veredicto_guardia(
                        fila.cpu_ms_ficha, fila.cpu_llm_ms_ficha, calibraciones
                    )
                filas.append(fila)
                detalles[esc.nombre] = detalle
    finally:
        await asyncio.to_thread(kafka.stop)
        if not op.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return {
        "parametros": {
            "n": op.n,
            "n_ingenuo": op.n_ingenuo,
            "latency_ms": op.latency_ms,
            "cap": op.cap,
            "share": op.share,
            "llamadas_media": round(mean_calls(op.share), 3),
            "limite_llm_s": round(llm_bound(op.share, op.latency_ms, op.cap), 2),
            "quick": op.quick,
            "prueba": op.prueba,
            "cpus": os.cpu_count(),
        },
        "columnas": list(COLUMNS),
        "filas": [asdict(f) for f in filas],
        "detalle": detalles,
        "guardia": guardia,
    }


def format_table(doc: dict[str, Any]) -> str:
    """Plain-text table of every row, columns in COLUMNS order."""
    rows = [[str(f[c]) for c in COLUMNS] for f in doc["filas"]]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(COLUMNS)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(COLUMNS, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    p = doc["parametros"]
    lines.append(
        f"latency {p['latency_ms']} ms, cap {p['cap']}, mix {p['share']}: "
        f"{p['llamadas_media']} LLM calls/ficha, LLM-bound limit {p['limite_llm_s']} fichas/s"
    )
    if p.get("prueba"):
        lines.append("--prueba: the test of the tool, not a measurement")
    return "\n".join(lines)


# Issue 7's targets: (name, scenario row or ratio, column, bound, "max" or "min").
OBJETIVOS: tuple[tuple[str, str, str, float, str], ...] = (
    ("worker CPU ms per 3-attempt ficha", "worker_1_3int", "cpu_ms_ficha", 10.0, "max"),
    ("% of the LLM-bound limit, one worker", "worker_1", "pct_limite", 80.0, "min"),
    ("two workers / one worker throughput", "worker_2/worker_1", "fichas_s", 1.7, "min"),
    ("checkpoints per 3-attempt ficha", "worker_1_3int", "checkpoints_ficha_3", 12.0, "max"),
)


def objetivos(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target with the measured value and whether it is met (None if not measured)."""
    filas = {f["escenario"]: f for f in doc["filas"]}
    informe = []
    for nombre, fuente, columna, limite, sentido in OBJETIVOS:
        arriba, _, abajo = fuente.partition("/")
        valor: float | None = None
        if arriba in filas and (not abajo or abajo in filas):
            valor = float(filas[arriba][columna])
            if abajo:
                divisor = float(filas[abajo][columna])
                valor = round(valor / divisor, 2) if divisor else None
        cumple = (
            None if valor is None else (valor <= limite if sentido == "max" else valor >= limite)
        )
        informe.append(
            {
                "objetivo": nombre,
                "medido": valor,
                "limite": limite,
                "sentido": sentido,
                "cumple": cumple,
            }
        )
    return informe


def format_objetivos(informe: list[dict[str, Any]]) -> str:
    """One line per target: measured value, bound, met or missed."""
    lineas = ["targets:"]
    for o in informe:
        signo = "<=" if o["sentido"] == "max" else ">="
        estado = {True: "met", False: "MISSED", None: "not measured"}[o["cumple"]]
        lineas.append(f"  {o['objetivo']}: {o['medido']} (target {signo} {o['limite']}) {estado}")
    return "\n".join(lineas)


def draw_chart(doc: dict[str, Any], path: Path) -> None:
    """Throughput against FICHAS_CONCURRENCIA for one worker, with the LLM-bound limit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = doc["parametros"]
    puntos = sorted(
        (f["concurrencia"], f["fichas_s"])
        for f in doc["filas"]
        if f["escenario"] == "worker_1" or f["escenario"].startswith("worker_1_c")
    )
    chain_s = p["llamadas_media"] * p["latency_ms"] / 1000
    xs = [c for c, _ in puntos]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.plot(xs, [y for _, y in puntos], "o-", label="fichas worker (1 process)")
    ax.plot(xs, [min(c, p["cap"]) / chain_s for c in xs], "--", label="LLM-bound limit")
    ingenuo = next((f for f in doc["filas"] if f["escenario"] == "ingenuo"), None)
    if ingenuo:
        ax.axhline(ingenuo["fichas_s"], color="grey", linestyle=":", label="naive design")
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs, [str(x) for x in xs])
    ax.set_xlabel("FICHAS_CONCURRENCIA")
    ax.set_ylabel("fichas/s")
    ax.set_title(f"{p['latency_ms']:.0f} ms per LLM call, cap {p['cap']}, {p['cpus']} CPUs")
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parse_args(argv: list[str] | None) -> Opciones:
    """Read the options; ``--quick`` changes only the defaults the user did not set."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.run", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument(
        "--n", type=int, help="events per worker scenario (600; quick 60; prueba 20)"
    )
    parser.add_argument(
        "--n-ingenuo",
        type=int,
        help="events for the naive design, a prefix of the feed (60; quick 8; prueba 4)",
    )
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--cap", type=int, default=64, help="parallel calls the LLM serves")
    parser.add_argument("--share", default=DEFAULT_SHARE, help="approved at 1,2,3 or never")
    parser.add_argument(
        "--sweep", default="4,16,64", help="FICHAS_CONCURRENCIA values for the chart"
    )
    parser.add_argument("--quick", action="store_true", help="CI: few events, no sweep")
    parser.add_argument(
        "--prueba",
        action="store_true",
        help="the test of the tool (tests/bench), not a measurement: --quick with 20 events "
        "per worker scenario and 4 for the naive design; the CPU guard's scenario keeps 60",
    )
    parser.add_argument("--profile", action="store_true", help="py-spy on worker_1")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--grafico", type=Path, help="write the concurrency chart (PNG) here")
    parser.add_argument("--keep", action="store_true", help="keep the scratch dir and logs")
    parser.add_argument(
        "--candidata",
        type=float,
        default=0.0,
        help="also run worker_1_candidata: a candidate loop on this share of SKUs (e.g. 0.1)",
    )
    parser.add_argument(
        "--solo", default="", help="only these scenarios, comma-separated (e.g. worker_1)"
    )
    args = parser.parse_args(argv)
    if not 0 <= args.candidata <= 1:
        parser.error("--candidata: a share between 0 and 1")
    quick = args.quick or args.prueba
    n = args.n or (20 if args.prueba else N_QUICK if quick else 600)
    return Opciones(
        n=n,
        n_ingenuo=args.n_ingenuo or min(n, 4 if args.prueba else 8 if quick else 60),
        latency_ms=args.latency_ms,
        cap=args.cap,
        share=parse_share(args.share),
        sweep=() if quick else tuple(int(x) for x in args.sweep.split(",") if x),
        quick=quick,
        profile=args.profile,
        out=args.out,
        grafico=args.grafico,
        keep=args.keep,
        candidata=args.candidata,
        solo=tuple(x for x in args.solo.split(",") if x),
        prueba=args.prueba,
    )


def main(argv: list[str] | None = None) -> int:
    """Run, print the table, write the JSON (and the chart when asked)."""
    op = parse_args(argv)
    started = time.monotonic()
    doc = asyncio.run(run_all(op))
    doc["parametros"]["duracion_total_s"] = round(time.monotonic() - started, 1)
    doc["objetivos"] = objetivos(doc)
    op.out.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(format_table(doc))
    print(format_objetivos(doc["objetivos"]))
    print(format_guardia(doc["guardia"]))
    for linea_ocupacion in format_ocupacion(doc):
        print(linea_ocupacion)
    if (candidata := format_candidata(doc)) is not None:
        print(candidata)
    print(f"written {op.out} in {doc['parametros']['duracion_total_s']} s")
    if op.grafico is not None:
        draw_chart(doc, op.grafico)
        print(f"chart {op.grafico}")
    return 0 if doc["guardia"] is None or doc["guardia"]["cumple"] else EXIT_GUARDIA


def format_ocupacion(doc: dict[str, Any]) -> list[str]:
    """The LLM slots' occupancy of the one-worker scenarios (``bench.ocupacion``)."""
    return [
        linea(nombre, detalle["ocupacion"])
        for nombre, detalle in doc["detalle"].items()
        if nombre.startswith("worker_1") and detalle.get("ocupacion")
    ]


def format_candidata(doc: dict[str, Any]) -> str | None:
    """One line: the live loop's % of the LLM-bound limit with the candidate and without."""
    filas = {f["escenario"]: f for f in doc["filas"]}
    con = filas.get("worker_1_candidata")
    if con is None:
        return None
    sin = filas.get("worker_1")
    detalle = doc["detalle"]["worker_1_candidata"].get("candidata", {})
    contra = f" against {sin['pct_limite']} % without" if sin is not None else ""
    return (
        f"candidate at {100 * detalle.get('proporcion', 0):.0f} % of SKUs: the live loop at "
        f"{con['pct_limite']} % of the LLM-bound limit{contra}; the candidate made "
        f"{detalle.get('llamadas_llm')} LLM calls and wrote {detalle.get('items_al_terminar')} "
        "items by the last live outcome"
    )


def format_guardia(guardia: dict[str, Any] | None) -> str:
    """One line: the guard's ratio, its limit, and whether it holds (bench.guardia)."""
    if guardia is None:
        return "cpu guard: not measured"
    estado = "ok" if guardia["cumple"] else "FAILED: the worker's CPU per ficha grew"
    return (
        f"cpu guard: {ESCENARIO_GUARDIA} {guardia['cpu_ms_ficha_3']} ms per ficha = "
        f"{guardia['razon']} x the fake LLM's {guardia['cpu_llm_ms_ficha_3']} ms "
        f"(limit {guardia['limite']}; {guardia['razon_calibracion']} x the calibration) {estado}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
