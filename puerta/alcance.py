"""What the automatic opener may open: which families, and whether the pooled gate (pure).

``fichas revisor --apertura-familias zapatillas,camisetas`` (default: every family) and
``--sin-puerta-conjunta`` (no pooled gate, so no family is covered by one) narrow what the
reviewer app opens and covers by itself; people can still open a gate by hand in manual mode,
and ``fichas calibrar`` is not bound by it. Invariants: the default scope is everything (the
behaviour before the options existed); the pooled gate ``*`` is never named as a family; a
family outside the scope is neither opened nor covered by the app. Why: docs/puerta.md,
"Scope of automatic opening".
"""

from __future__ import annotations

from dataclasses import dataclass

from esquemas.constantes import FAMILIA_TODAS


@dataclass(frozen=True)
class Alcance:
    """The automatic opener's scope: ``familias`` (None: all) and whether ``*`` may open."""

    familias: frozenset[str] | None = None
    conjunta: bool = True

    def __post_init__(self) -> None:
        """Refuse an empty list and the pooled gate's name among the families."""
        if self.familias is not None:
            if not self.familias:
                raise ValueError("the list of families for automatic opening is empty")
            if FAMILIA_TODAS in self.familias or any(not f.strip() for f in self.familias):
                raise ValueError(
                    f"a family name must not be empty nor {FAMILIA_TODAS!r} "
                    "(the pooled gate has its own option)"
                )

    @classmethod
    def de_texto(cls, familias: str | None, conjunta: bool = True) -> Alcance:
        """From the command line: ``"zapatillas,camisetas"`` (spaces ignored); None or
        ``""`` means every family."""
        if familias is None or not familias.strip():
            return cls(None, conjunta)
        nombres = frozenset(f.strip() for f in familias.split(",") if f.strip())
        if not nombres:
            raise ValueError(f"no family named in {familias!r}")
        return cls(nombres, conjunta)

    def incluye(self, familia: str) -> bool:
        """Whether the app may open (or cover) the gate of ``familia`` (``*``: the pooled one)."""
        if familia == FAMILIA_TODAS:
            return self.conjunta
        return self.familias is None or familia in self.familias

    def describir(self) -> str:
        """One line for the Puertas page and the app's start-up log."""
        familias = "todas" if self.familias is None else ", ".join(sorted(self.familias))
        conjunta = "sí" if self.conjunta else "no (--sin-puerta-conjunta)"
        return f"familias: {familias}; puerta conjunta: {conjunta}"
