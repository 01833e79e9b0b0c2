"""Who may review: password hashes, sessions, CSRF tokens and the login rate limit.

- Passwords: argon2id (``argon2-cffi``), stored in the app's database; ``fichas revisor
  usuarios NOMBRE`` adds one or changes its password.
- Sessions: a random token in an HttpOnly, SameSite=Strict cookie, stored server side with its
  expiry, so logging out or restarting the app behaves predictably and the cookie carries no data.
- CSRF: every session has its own random token, put in every form and checked on every POST;
  the login form, before any session, uses a double-submit cookie.
- Login attempts: at most ``MAX_INTENTOS`` failures per user name and ``MAX_INTENTOS_IP`` per
  client address (several people may share one) in a sliding window; past that the login
  answers 429 without checking the password.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import defaultdict, deque

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

COOKIE_SESION = "fichas_sesion"
COOKIE_CSRF_LOGIN = "fichas_csrf_login"
DURACION_SESION_S = 12 * 3600
MAX_INTENTOS = 5
MAX_INTENTOS_IP = 20
VENTANA_INTENTOS_S = 300.0

_hasher = PasswordHasher()


def hash_clave(clave: str) -> str:
    """The argon2id hash to store."""
    return _hasher.hash(clave)


def clave_correcta(hash_: str | None, clave: str) -> bool:
    """Whether ``clave`` matches; a missing user costs a hash too, so timing tells nothing."""
    if hash_ is None:
        _hasher.hash(clave)
        return False
    try:
        return _hasher.verify(hash_, clave)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def token() -> str:
    """A random URL-safe token (sessions and CSRF)."""
    return secrets.token_urlsafe(32)


def mismo_token(esperado: str | None, recibido: str | None) -> bool:
    """Constant-time comparison; an absent or empty token never matches."""
    if not esperado or not recibido:
        return False
    return hmac.compare_digest(esperado.encode(), recibido.encode())


class LimiteLogin:
    """Failed logins per key (client address, user name) in a sliding window, in memory."""

    def __init__(self, maximo: int = MAX_INTENTOS, ventana_s: float = VENTANA_INTENTOS_S) -> None:
        self.maximo = maximo
        self.ventana_s = ventana_s
        self._fallos: dict[str, deque[float]] = defaultdict(deque)

    def bloqueado(self, *claves: str) -> bool:
        """True when any key has used up its failures in the window."""
        ahora = time.monotonic()
        for clave in claves:
            fallos = self._fallos[clave]
            while fallos and fallos[0] < ahora - self.ventana_s:
                fallos.popleft()
            if len(fallos) >= self.maximo:
                return True
        return False

    def fallo(self, *claves: str) -> None:
        """Count one failure against every key."""
        ahora = time.monotonic()
        for clave in claves:
            self._fallos[clave].append(ahora)

    def exito(self, *claves: str) -> None:
        """A correct login clears the user's failures (not the address's)."""
        for clave in claves:
            self._fallos.pop(clave, None)
