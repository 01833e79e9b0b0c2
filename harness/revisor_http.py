"""A scripted reviewer: drives the review app over HTTP as a browser's forms would.

End-to-end tests of the gate need many decisions in an order the test chooses (good fichas
first, say), faster than a browser clicks them, through the same routes, cookies and CSRF
tokens a person's browser uses: log in, open an item's page, submit its form. Approving submits
the form with the values the page shows, so it is an approval "as is", never an edit.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from html.parser import HTMLParser

_COOKIE_SESION = "fichas_sesion"
_COOKIE_LOGIN = "fichas_csrf_login"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Keep 303s as answers: the Set-Cookie of a login lives on the redirect itself."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class _Formulario(HTMLParser):
    """The named fields of one form (by id) of a page, as a browser would submit them."""

    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.campos: dict[str, str] = {}
        self.encontrado = False
        self._dentro = False
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self._dentro = a.get("id") == self.form_id
            self.encontrado = self.encontrado or self._dentro
        elif self._dentro and tag == "input" and a.get("name") and a.get("type") != "checkbox":
            self.campos[str(a["name"])] = a.get("value") or ""
        elif self._dentro and tag == "textarea" and a.get("name"):
            self._textarea = str(a["name"])
            self.campos[self._textarea] = ""

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self.campos[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._textarea = None
        elif tag == "form":
            self._dentro = False


class RevisorHttp:
    """One reviewer's session with the app at ``url``."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.cookies: dict[str, str] = {}

    def pedir(
        self, ruta: str, datos: dict[str, str | list[str]] | None = None
    ) -> tuple[int, dict[str, str], str]:
        """One request without following redirects: (status, headers, body)."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)
        cuerpo = urllib.parse.urlencode(datos, doseq=True).encode() if datos is not None else None
        peticion = urllib.request.Request(self.url + ruta, data=cuerpo)
        if self.cookies:
            peticion.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        try:
            with opener.open(peticion, timeout=15) as resp:
                return resp.status, dict(resp.headers), resp.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read().decode()

    def entrar(self, usuario: str, clave: str) -> None:
        """Log in through the login form; raises if the app refuses."""
        _, cabeceras, cuerpo = self.pedir("/login")
        self.cookies[_COOKIE_LOGIN] = _cookie(cabeceras, _COOKIE_LOGIN)
        token = re.search(r'name="csrf" value="([^"]+)"', cuerpo)
        assert token is not None, "no CSRF token on the login page"
        datos: dict[str, str | list[str]] = {
            "csrf": token.group(1),
            "usuario": usuario,
            "clave": clave,
        }
        estado, cabeceras, _ = self.pedir("/login", datos)
        if estado != 303:
            raise RuntimeError(f"login refused: HTTP {estado}")
        self.cookies[_COOKIE_SESION] = _cookie(cabeceras, _COOKIE_SESION)

    def formulario(self, event_id: str, form_id: str) -> dict[str, str] | None:
        """The fields of the item's form ``form_id``; None while the app has no such open item."""
        query = urllib.parse.urlencode({"id": event_id})  # the item page's parameter
        return self.formulario_en(f"/item?{query}", form_id)

    def formulario_en(self, ruta: str, form_id: str) -> dict[str, str] | None:
        """The fields of the form ``form_id`` on the page at ``ruta``; None if it has none."""
        estado, _, cuerpo = self.pedir(ruta)
        if estado != 200:
            return None
        lector = _Formulario(form_id)
        lector.feed(cuerpo)
        return lector.campos if lector.encontrado else None

    def abrir_puerta(self, puerta_id: str) -> int:
        """``fichas revisor --apertura manual``: the one click on the Puertas page that opens
        gate ``puerta_id`` (``<familia or *>|<key id>``); raises while the page does not offer
        it (not certified yet, already open, or the app opens gates by itself)."""
        campos = self.formulario_en("/puertas", f"form-abrir-{puerta_id}")
        if campos is None:
            raise LookupError(f"{puerta_id}: the Puertas page offers no opening")
        return self.pedir("/puertas/abrir", dict(campos))[0]

    def aprobar(self, event_id: str) -> int:
        """Approve the ficha as the page shows it (no edit); the HTTP status of the post."""
        campos = self.formulario(event_id, "form-aprobar")
        if campos is None:
            raise LookupError(f"{event_id}: no open item to approve")
        return self.pedir("/item/aprobar", dict(campos))[0]

    def rechazar(self, event_id: str, criterios: Iterable[str] = ("C04",), nota: str = "") -> int:
        """Reject the ficha with the failing criteria; the HTTP status of the post."""
        campos = self.formulario(event_id, "form-rechazar")
        if campos is None:
            raise LookupError(f"{event_id}: no open item to reject")
        datos: dict[str, str | list[str]] = {**campos, "criterio": list(criterios), "nota": nota}
        return self.pedir("/item/rechazar", datos)[0]

    def juzgar_muestra(self, event_id: str, correcta: bool, criterios: Iterable[str] = ()) -> int:
        """Grade a sampled published ficha ``correcta`` or ``incorrecta``."""
        campos = self.formulario(event_id, "form-muestra")
        if campos is None:
            raise LookupError(f"{event_id}: no open sample item")
        datos: dict[str, str | list[str]] = {
            **campos,
            "veredicto": "correcta" if correcta else "incorrecta",
            "criterio": list(criterios),
        }
        return self.pedir("/item/muestra", datos)[0]


def _cookie(cabeceras: dict[str, str], nombre: str) -> str:
    """The value of cookie ``nombre`` set by a response."""
    m = re.search(rf"{nombre}=([^;]+)", cabeceras.get("Set-Cookie", ""))
    if m is None:
        raise RuntimeError(f"the app set no {nombre} cookie")
    return m.group(1)
