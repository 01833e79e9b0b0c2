"""The reviewers' accounts: who may log in, their open sessions, and the server's secrets.

Apart from the review queue (``revision.almacen.cola``): it changes with who may review, not
with what is reviewed; same database and SQL strategy (``revision.almacen.database``). A
reviewer is a name and an argon2id hash, disabled (never deleted) by ``--baja``, so past
decisions still name someone; a session is found by its token's SHA-256, never the token; a
secret is a random key made on first use and shared by every process on the database (it
signs the login form's CSRF token). docs/revision.md, "Quién puede hacerlo".
"""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path

from migraciones import Database
from revision.almacen.database import open_database

USO_S = 30.0  # a session's last use is written at most this often (idle timeout's resolution)

SQL_GUARDAR_USUARIO = (
    "insert into revision_usuarios (nombre, hash, activo) values ($1, $2, 1) "
    "on conflict (nombre) do update set hash = excluded.hash, activo = 1"
)
SQL_DAR_DE_BAJA = "update revision_usuarios set activo = 0 where nombre = $1"
SQL_HASH = "select hash from revision_usuarios where nombre = $1 and activo = 1"
SQL_BORRAR_SESIONES_DE = "delete from revision_sesiones where usuario = $1"
SQL_BORRAR_CADUCADAS = "delete from revision_sesiones where expira < $1"
SQL_ABRIR_SESION = (
    "insert into revision_sesiones (token_sha256, usuario, csrf, creada, usada, expira) "
    "values ($1, $2, $3, $4, $4, $5)"
)
# A live session: not expired, used within the idle timeout, of an enabled reviewer.
SQL_SESION = (
    "select s.usuario, s.csrf, s.token_sha256 from revision_sesiones s "
    "join revision_usuarios u on u.nombre = s.usuario "
    "where s.token_sha256 = $1 and s.expira >= $2 and s.usada >= $3 and u.activo = 1"
)
SQL_USAR_SESION = "update revision_sesiones set usada = $1 where token_sha256 = $2 and usada < $3"
SQL_CERRAR_SESION = "delete from revision_sesiones where token_sha256 = $1"
SQL_CREAR_SECRETO = (
    "insert into revision_secretos (nombre, valor) values ($1, $2) on conflict (nombre) do nothing"
)
SQL_SECRETO = "select valor from revision_secretos where nombre = $1"


class Cuentas:
    """Reviewers, sessions and secrets; SQLite or PostgreSQL behind the same coroutines."""

    def __init__(self, database: Database) -> None:
        self._database = database

    @classmethod
    async def abrir(cls, postgres_dsn: str | None, data_dir: Path) -> Cuentas:
        """Open the database the configuration names (migrated) for this store alone, as
        ``fichas revisor usuarios`` needs; the app shares one with the queue instead."""
        return cls(await open_database(postgres_dsn, data_dir))

    async def cerrar(self) -> None:
        """Close the database (the connection or the pool)."""
        await self._database.close()

    async def guardar_usuario(self, nombre: str, hash_: str) -> None:
        """Add a reviewer or replace their password hash (enabling them again); every session
        of theirs ends, so a password changed after a leak shuts out whoever had it."""
        async with self._database.transaction() as run:
            await run(SQL_GUARDAR_USUARIO, (nombre, hash_))
            await run(SQL_BORRAR_SESIONES_DE, (nombre,))

    async def dar_de_baja(self, nombre: str) -> bool:
        """Disable a reviewer and end their sessions; False when there is no such reviewer.
        The row stays, so their past decisions still name someone the store knows."""
        async with self._database.transaction() as run:
            cambiado = await run(SQL_DAR_DE_BAJA, (nombre,))
            await run(SQL_BORRAR_SESIONES_DE, (nombre,))
            return bool(cambiado.count)

    async def hash_de(self, nombre: str) -> str | None:
        """The stored password hash of an enabled reviewer."""
        filas = (await self._database.run(SQL_HASH, (nombre,))).rows
        return str(filas[0][0]) if filas else None

    async def abrir_sesion(
        self, token_sha256: str, usuario: str, csrf: str, ahora: float, expira: float
    ) -> None:
        """Store a session by its token's hash; it replaces any other session of the reviewer
        (a new login ends the old one), and expired ones are purged on the way."""
        async with self._database.transaction() as run:
            await run(SQL_BORRAR_CADUCADAS, (ahora,))
            await run(SQL_BORRAR_SESIONES_DE, (usuario,))
            await run(SQL_ABRIR_SESION, (token_sha256, usuario, csrf, ahora, expira))

    async def sesion(
        self, token_sha256: str, ahora: float, inactividad_s: float
    ) -> tuple[str, str] | None:
        """(reviewer, CSRF token) of a live session: not expired, used within
        ``inactividad_s``, of a reviewer who still exists and is enabled. Marks it used (at
        most once every ``USO_S``, or a quarter of the idle timeout if shorter, so reading a
        page is not a write each time)."""
        async with self._database.transaction() as run:
            fila = (await run(SQL_SESION, (token_sha256, ahora, ahora - inactividad_s))).first()
            if fila is None or not hmac.compare_digest(str(fila[2]), token_sha256):
                return None
            await run(SQL_USAR_SESION, (ahora, token_sha256, ahora - min(USO_S, inactividad_s / 4)))
            return str(fila[0]), str(fila[1])

    async def cerrar_sesion(self, token_sha256: str) -> None:
        """Forget a session (logout)."""
        async with self._database.transaction() as run:
            await run(SQL_CERRAR_SESION, (token_sha256,))

    async def secreto(self, nombre: str) -> bytes:
        """A server-side secret by name, made at random on first use and shared by every
        process on this database (the key of the login form's CSRF token)."""
        async with self._database.transaction() as run:
            await run(SQL_CREAR_SECRETO, (nombre, secrets.token_hex(32)))
            fila = (await run(SQL_SECRETO, (nombre,))).first()
            return bytes.fromhex(str(fila[0]))
