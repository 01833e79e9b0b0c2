"""The one store layer's conformance (``migraciones.database``): the same cases on SQLite
inline on the loop, SQLite on a thread, and a real PostgreSQL (a brand-new database per test):
rows and row counts, ``$n`` placeholders, transactions that commit and roll back, concurrent
transactions, a database opened again, and on PostgreSQL a pool that loses its connections.
The model is LangGraph's checkpoint conformance suite: a store that passes here may be used by
every store of the project (the version store, the review store)."""

from __future__ import annotations

import asyncio
import functools
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from harness.basedatos import base_nueva
from migraciones import Database, Esquema, Migracion, StoreOptions, open_database, sqlite_sql

_TABLAS = (
    "create table prueba_filas (k text primary key, v bigint, nota text)",
    "create table prueba_contador (id integer primary key, n bigint not null)",
    "insert into prueba_contador (id, n) values (1, 0)",
)
ESQUEMA = Esquema(
    "prueba", "prueba_migraciones", (Migracion("the conformance tables", _TABLAS, _TABLAS),)
)
MODOS = ["sqlite-inline", "sqlite-thread", pytest.param("postgres", marks=pytest.mark.postgres)]
INSERTAR = "insert into prueba_filas (k, v, nota) values ($1, $2, $3)"
CONTAR = "select count(*) from prueba_filas"


def _opciones(modo: str, **pool: object) -> StoreOptions:
    """A store of the conformance tables in the mode under test."""
    return StoreOptions(
        esquema=ESQUEMA,
        sqlite_file="prueba.sqlite",
        synchronous="full" if modo == "sqlite-thread" else "normal",
        on_thread=modo == "sqlite-thread",
        pool_max=4,
        **pool,  # type: ignore[arg-type]
    )


@pytest.fixture(params=MODOS)
def modo(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def dsn(modo: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None on SQLite; a brand-new PostgreSQL database, dropped afterwards."""
    if modo != "postgres":
        yield None
        return
    with base_nueva(request.getfixturevalue("postgres_dsn")) as nueva:
        yield nueva


@pytest.fixture
async def database(modo: str, dsn: str | None, tmp_path: Path) -> AsyncIterator[Database]:
    db = await open_database(dsn, tmp_path, _opciones(modo))
    try:
        yield db
    finally:
        await db.close()


async def test_rows_and_row_counts(database: Database) -> None:
    assert (await database.run(CONTAR)).first()[0] == 0
    insertada = await database.run(INSERTAR, ("a", 1, None))
    assert insertada.count == 1 and insertada.rows == []
    await database.run(INSERTAR, ("b", 2, "dos"))
    filas = await database.run("select k, v, nota from prueba_filas order by k")
    assert [tuple(f) for f in filas.rows] == [("a", 1, None), ("b", 2, "dos")]
    assert (await database.run("select k from prueba_filas where v > $1", (5,))).first() is None
    cambiadas = await database.run("update prueba_filas set v = v + 10 where v >= $1", (1,))
    assert cambiadas.count == 2
    assert (await database.run("delete from prueba_filas where k = $1", ("zzz",))).count == 0
    grande = 2**53 - 1  # the largest version the contract accepts fits a bigint column
    await database.run(INSERTAR, ("grande", grande, None))
    assert (await database.run("select v from prueba_filas where k = $1", ("grande",))).first()[
        0
    ] == grande


async def test_placeholders_by_number_reused_and_out_of_order(database: Database) -> None:
    """``$n`` is the n-th parameter wherever it stands, as often as it stands; ``$10`` is not
    ``$1`` followed by a 0; a ``$`` in a value is a value."""
    await database.run(
        "insert into prueba_filas (k, v, nota) values ($2, $1, $2 || '-' || $3)", (7, "x", "y")
    )
    fila = (await database.run("select k, v, nota from prueba_filas where k = $1", ("x",))).first()
    assert tuple(fila) == ("x", 7, "x-y")
    diez = tuple(range(1, 11))
    suma = "select " + " + ".join(f"${n}" for n in (10, 1, 9, 2, 8, 3, 7, 4, 6, 5, 10))
    assert (await database.run(suma, diez)).first()[0] == sum(diez) + 10
    await database.run(INSERTAR, ("$1", 1, "$argon2id$v=19$m=65536"))
    fila = (await database.run("select nota from prueba_filas where k = $1", ("$1",))).first()
    assert fila[0] == "$argon2id$v=19$m=65536"


async def test_a_transaction_commits_on_exit(database: Database) -> None:
    async with database.transaction() as run:
        await run(INSERTAR, ("a", 1, None))
        await run(INSERTAR, ("b", 2, None))
        assert (await run(CONTAR)).first()[0] == 2  # its own writes, before the commit
    assert (await database.run(CONTAR)).first()[0] == 2


async def test_a_transaction_rolls_back_on_an_error(database: Database) -> None:
    class Fallo(Exception):
        pass

    with pytest.raises(Fallo):
        async with database.transaction() as run:
            await run(INSERTAR, ("a", 1, None))
            raise Fallo
    assert (await database.run(CONTAR)).first()[0] == 0
    # a failing statement undoes the statements before it in the same transaction
    await database.run(INSERTAR, ("b", 2, None))
    with pytest.raises(Exception, match=r"(?i)unique|duplicate"):
        async with database.transaction() as run:
            await run(INSERTAR, ("c", 3, None))
            await run(INSERTAR, ("b", 4, None))
    filas = await database.run("select k, v from prueba_filas order by k")
    assert [tuple(f) for f in filas.rows] == [("b", 2)]
    # and the database serves the next transaction
    async with database.transaction() as run:
        await run(INSERTAR, ("d", 5, None))
    assert (await database.run(CONTAR)).first()[0] == 2


async def test_a_cancelled_transaction_leaves_nothing(database: Database) -> None:
    """A request cancelled halfway (a client gone, a shutdown) rolls back and frees the
    database for the next one."""
    empezada = asyncio.Event()

    async def a_medias() -> None:
        async with database.transaction() as run:
            await run(INSERTAR, ("a", 1, None))
            empezada.set()
            await asyncio.sleep(60)

    tarea = asyncio.create_task(a_medias())
    await asyncio.wait_for(empezada.wait(), 10)
    tarea.cancel()
    with pytest.raises(asyncio.CancelledError):
        await tarea
    assert (await asyncio.wait_for(database.run(CONTAR), 10)).first()[0] == 0


async def test_concurrent_transactions_are_each_whole(database: Database) -> None:
    """Twenty transactions at once, each awaiting between its statements: every increment
    counts once and sees a value of its own, and a reader beside them never sees half of
    one (its two rows, or none)."""

    async def incrementar(i: int) -> int:
        async with database.transaction() as run:
            await run("update prueba_contador set n = n + 1 where id = 1")
            await asyncio.sleep(0.001)
            n = int((await run("select n from prueba_contador where id = 1")).first()[0])
            await run(INSERTAR, (f"t{i}-1", n, None))
            await asyncio.sleep(0.001)
            await run(INSERTAR, (f"t{i}-2", n, None))
            return n

    vistos: list[int] = []

    async def leer() -> None:
        for _ in range(40):
            vistos.append(int((await database.run(CONTAR)).first()[0]))
            await asyncio.sleep(0.0005)

    valores, _ = await asyncio.gather(asyncio.gather(*(incrementar(i) for i in range(20))), leer())
    assert sorted(valores) == list(range(1, 21))
    assert (await database.run("select n from prueba_contador")).first()[0] == 20
    assert all(n % 2 == 0 for n in vistos), vistos


async def test_what_was_committed_is_there_when_opened_again(
    modo: str, dsn: str | None, tmp_path: Path
) -> None:
    primera = await open_database(dsn, tmp_path, _opciones(modo))
    try:
        async with primera.transaction() as run:
            await run(INSERTAR, ("a", 1, "uno"))
    finally:
        await primera.close()
    segunda = await open_database(dsn, tmp_path, _opciones(modo))
    try:
        fila = (await segunda.run("select v, nota from prueba_filas where k = $1", ("a",))).first()
        assert tuple(fila) == (1, "uno")
    finally:
        await segunda.close()


def _anotar_hilo(vistos: set[int]) -> int:
    """An SQL function that notes the thread it runs on."""
    vistos.add(threading.get_ident())
    return 1


async def test_sqlite_runs_where_it_was_told(tmp_path: Path) -> None:
    """Inline: every statement on the loop's thread; on a thread: none of them."""
    hilos: dict[str, set[int]] = {}
    for modo in ("sqlite-inline", "sqlite-thread"):
        db = await open_database(None, tmp_path / modo, _opciones(modo))
        try:
            conn = db._conn  # the test reaches the connection to see which thread runs it
            hilos[modo] = vistos = set()
            conn.create_function("hilo", 0, functools.partial(_anotar_hilo, vistos))
            await db.run("select hilo()")
            async with db.transaction() as run:
                await run("select hilo()")
        finally:
            await db.close()
    loop = threading.get_ident()
    assert hilos["sqlite-inline"] == {loop}
    assert hilos["sqlite-thread"] and loop not in hilos["sqlite-thread"]


async def test_sqlite_durability_is_the_stores_choice(tmp_path: Path) -> None:
    """``synchronous`` as the options say: 1 is NORMAL, 2 is FULL."""
    for synchronous, esperado in (("normal", 1), ("full", 2)):
        opciones = StoreOptions(ESQUEMA, f"{synchronous}.sqlite", synchronous, False, 1)  # type: ignore[arg-type]
        db = await open_database(None, tmp_path, opciones)
        try:
            assert (await db.run("pragma synchronous")).first()[0] == esperado
            assert (await db.run("pragma journal_mode")).first()[0] == "wal"
        finally:
            await db.close()


def test_a_statement_is_converted_once() -> None:
    sql = f"select $1, $2, $10 /* {uuid.uuid4().hex} */"
    antes = sqlite_sql.cache_info()
    assert sqlite_sql(sql).startswith("select ?1, ?2, ?10")
    assert sqlite_sql(sql) is sqlite_sql(sql)
    despues = sqlite_sql.cache_info()
    assert (despues.misses - antes.misses, despues.hits - antes.hits) == (1, 2)


@pytest.mark.postgres
@pytest.mark.parametrize("check", [True, False])
async def test_postgres_comes_back_after_losing_its_connections(
    check: bool, postgres_dsn: str, tmp_path: Path
) -> None:
    """Every server process of the pool terminated (a server restart, a failover): with
    ``check`` the next statement succeeds at once; without it, at most one statement per lost
    connection fails, then the pool has replaced them."""
    import psycopg

    nombre = f"prueba-{uuid.uuid4().hex[:8]}"
    with base_nueva(postgres_dsn) as dsn:
        db = await open_database(
            dsn, tmp_path, _opciones("postgres", check=check, application_name=nombre)
        )
        try:
            await db.run(INSERTAR, ("a", 1, None))
            with psycopg.connect(dsn, autocommit=True) as otra:
                terminados = otra.execute(
                    "select pg_terminate_backend(pid) from pg_stat_activity "
                    "where application_name = %s and pid <> pg_backend_pid()",
                    (nombre,),
                ).fetchall()
            assert terminados and all(t for (t,) in terminados)
            fallos = 0
            for _ in range(len(terminados) + 1):
                try:
                    assert (await db.run(CONTAR)).first()[0] == 1
                    break
                except psycopg.OperationalError:
                    fallos += 1
            else:
                pytest.fail("the pool never reconnected")
            assert fallos == 0 if check else fallos <= len(terminados)
        finally:
            await db.close()
