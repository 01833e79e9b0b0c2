"""Who may review: password hashes, sessions, CSRF tokens, redirects and the login rate limit.

Passwords are argon2id; a session is a random token in an HttpOnly, SameSite=Strict cookie of
which the store keeps only the SHA-256 (``hash_token``); every session has its CSRF token and
the login form a signed double-submit one (``csrf_login``); ``siguiente_local`` lets only a
path of this site through; login attempts (``Intentos``) are counted before the password is
checked, per (user, address), address and user, with the client address from
``X-Forwarded-For`` only behind a configured proxy (``cliente``), in this process's memory.
Each rule, its numbers and the threat it answers: docs/revision.md, "Quién puede hacerlo" and
"Frente a un atacante".
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import time
from collections import defaultdict, deque
from collections.abc import Iterable
from urllib.parse import urlsplit

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

COOKIE_SESION = "fichas_sesion"
COOKIE_CSRF_LOGIN = "fichas_csrf_login"
DURACION_SESION_S = 12 * 3600
INACTIVIDAD_S = 30 * 60  # default idle timeout; ``fichas revisor --inactividad-min`` changes it
MAX_INTENTOS = 5  # failures per (user, address) in the window
MAX_INTENTOS_IP = 20  # failures per client address in the window
MAX_INTENTOS_USUARIO = 20  # failures per user from all addresses; known addresses pass
VENTANA_INTENTOS_S = 300.0

_hasher = PasswordHasher()

Red = ipaddress.IPv4Network | ipaddress.IPv6Network


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


def hash_token(valor: str) -> str:
    """What the store keeps of a session token: its SHA-256 in hex. The token has 256 random
    bits, so a fast hash is enough (nothing to brute-force), and the lookup stays an index."""
    return hashlib.sha256(valor.encode()).hexdigest()


def mismo_token(esperado: str | None, recibido: str | None) -> bool:
    """Constant-time comparison; an absent or empty token never matches."""
    if not esperado or not recibido:
        return False
    return hmac.compare_digest(esperado.encode(), recibido.encode())


# ----------------------------------------------------------------------------- login CSRF


def csrf_login(secreto: bytes) -> str:
    """A login CSRF token: a random nonce and its HMAC-SHA256 under the server's secret."""
    nonce = secrets.token_urlsafe(16)
    return f"{nonce}.{_firma(secreto, nonce)}"


def csrf_login_valido(secreto: bytes, cookie: str | None, campo: str | None) -> bool:
    """The cookie and the form field carry the same token, and the server signed it: a pair an
    attacker made up (or planted in a victim's browser) has no valid signature."""
    if not mismo_token(cookie, campo):
        return False
    assert cookie is not None
    nonce, _, firma = cookie.partition(".")
    return bool(nonce) and mismo_token(_firma(secreto, nonce), firma)


def _firma(secreto: bytes, nonce: str) -> str:
    return hmac.new(secreto, nonce.encode(), hashlib.sha256).hexdigest()


# ----------------------------------------------------------------------------- redirects


def siguiente_local(valor: str | None) -> str:
    """``valor`` if it is a path of this site, else ``/``: never an open redirect.

    Any control character or whitespace is refused outright (browsers and yarl drop a tab or
    a newline, which can turn ``/\\t/evil.example`` into ``//evil.example``); then the value,
    parsed, must have no scheme and no host and start with a single ``/``.
    """
    if not valor or any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in valor):
        return "/"
    if "\\" in valor or not valor.startswith("/") or valor.startswith("//"):
        return "/"
    partes = urlsplit(valor)
    if partes.scheme or partes.netloc or not partes.path.startswith("/"):
        return "/"
    return valor


# ----------------------------------------------------------------------------- client address


def redes(texto: str | None) -> tuple[Red, ...]:
    """Trusted proxies from a comma-separated list of addresses or networks (``10.0.0.0/8``);
    raises ``ValueError`` on a malformed entry, so a typo fails at start-up."""
    if not texto:
        return ()
    return tuple(
        ipaddress.ip_network(p.strip(), strict=False) for p in texto.split(",") if p.strip()
    )


def cliente(remoto: str | None, reenviado: str | None, proxies: Iterable[Red]) -> str:
    """The client's address: the TCP peer, unless that peer is a trusted proxy; then the
    right-most ``X-Forwarded-For`` entry that is not a trusted proxy (entries to its left were
    written by the client and prove nothing). Without trusted proxies the header is ignored."""
    confiables = tuple(proxies)
    direccion = remoto or ""
    if not confiables or not _dentro(direccion, confiables):
        return direccion
    for salto in reversed([p.strip() for p in (reenviado or "").split(",") if p.strip()]):
        if not _dentro(salto, confiables):
            return salto if _es_ip(salto) else direccion
        direccion = salto
    return direccion


def _es_ip(texto: str) -> bool:
    try:
        ipaddress.ip_address(texto)
    except ValueError:
        return False
    return True


def _dentro(direccion: str, confiables: tuple[Red, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(direccion)
    except ValueError:
        return False
    return any(ip in red for red in confiables)


# ----------------------------------------------------------------------------- attempts


class LimiteLogin:
    """Attempts per key in a sliding window, in memory (one process)."""

    def __init__(self, maximo: int = MAX_INTENTOS, ventana_s: float = VENTANA_INTENTOS_S) -> None:
        self.maximo = maximo
        self.ventana_s = ventana_s
        self._fallos: dict[str, deque[float]] = defaultdict(deque)

    def bloqueado(self, *claves: str) -> bool:
        """True when any key has used up its attempts in the window."""
        ahora = time.monotonic()
        for clave in claves:
            fallos = self._fallos[clave]
            while fallos and fallos[0] < ahora - self.ventana_s:
                fallos.popleft()
            if not fallos:
                del self._fallos[clave]
            elif len(fallos) >= self.maximo:
                return True
        return False

    def fallo(self, *claves: str) -> None:
        """Count one attempt against every key."""
        ahora = time.monotonic()
        for clave in claves:
            self._fallos[clave].append(ahora)

    def exito(self, *claves: str) -> None:
        """Forget the keys' attempts (a correct login)."""
        for clave in claves:
            self._fallos.pop(clave, None)

    def devolver(self, clave: str) -> None:
        """Take back the newest attempt of ``clave`` (one that turned out not to be a failure)."""
        fallos = self._fallos.get(clave)
        if fallos:
            fallos.pop()


class Intentos:
    """The login limits together; ``reservar`` counts an attempt before it is checked.

    Why this shape:
    - (user, address): an attacker guessing ana's password from one address is stopped after
      ``MAX_INTENTOS``, and locks out only that address for ana;
    - address: one address guessing many names is stopped after ``MAX_INTENTOS_IP``;
    - user: ``MAX_INTENTOS_USUARIO`` failures from anywhere stop guessing from many addresses,
      but an address ana has logged in from before (in this process) still gets through, so
      nobody can lock a named reviewer out of her usual place.
    Check and count happen with no ``await`` between them, so concurrent requests see each
    other's attempts; a correct password then gives its attempt back.
    """

    def __init__(
        self,
        por_par: int = MAX_INTENTOS,
        por_ip: int = MAX_INTENTOS_IP,
        por_usuario: int = MAX_INTENTOS_USUARIO,
        ventana_s: float = VENTANA_INTENTOS_S,
    ) -> None:
        self.par = LimiteLogin(por_par, ventana_s)
        self.ip = LimiteLogin(por_ip, ventana_s)
        self.usuario = LimiteLogin(por_usuario, ventana_s)
        self._conocidas: dict[str, set[str]] = defaultdict(set)

    def reservar(self, usuario: str, ip: str) -> bool:
        """Count one attempt of ``usuario`` from ``ip``; False (nothing counted) when a limit
        is reached and the password must not even be checked."""
        par = f"{usuario}\x00{ip}"
        conocida = ip in self._conocidas.get(usuario, ())
        if self.par.bloqueado(par) or self.ip.bloqueado(ip):
            return False
        if not conocida and self.usuario.bloqueado(usuario):
            return False
        self.par.fallo(par)
        self.ip.fallo(ip)
        self.usuario.fallo(usuario)
        return True

    def exito(self, usuario: str, ip: str) -> None:
        """A correct password: the pair's and the user's attempts are forgiven (not the
        address's: a correct login for one name says nothing of the others tried from it),
        and the address becomes one this user is known to log in from."""
        self.par.exito(f"{usuario}\x00{ip}")
        self.usuario.exito(usuario)
        self.ip.devolver(ip)
        self._conocidas[usuario].add(ip)
