"""The rubric evaluator's answers mapped onto the contract's Veredicto."""

from __future__ import annotations

from grafo.rubrica import Pregunta, Rubrica, veredicto_de_rubrica


def _rubrica(**fallan: str) -> Rubrica:
    return Rubrica(
        **{
            campo: Pregunta(cita=fallan.get(campo, ""), falla=campo in fallan)
            for campo in ("inventa", "publicidad", "vacia")
        }
    )


def test_ninguna_pregunta_falla_aprueba() -> None:
    veredicto = veredicto_de_rubrica(_rubrica())
    assert veredicto.aprobada and veredicto.problemas == []


def test_cada_pregunta_es_su_criterio_y_cita_la_frase() -> None:
    veredicto = veredicto_de_rubrica(
        _rubrica(inventa="Apta para lavavajillas.", publicidad="", vacia="Botella.")
    )
    assert not veredicto.aprobada
    assert [p.criterio for p in veredicto.problemas] == ["C04", "C05", "C06"]
    assert "Apta para lavavajillas." in veredicto.problemas[0].detalle
    assert veredicto.problemas[1].detalle  # no quote: a default detail, never empty


def test_detalle_cabe_en_el_limite() -> None:
    veredicto = veredicto_de_rubrica(_rubrica(inventa="x" * 500))
    assert len(veredicto.problemas[0].detalle) <= 200


def test_una_cita_sin_falla_no_rechaza() -> None:
    rubrica = Rubrica(
        inventa=Pregunta(cita="Pesa 280 g.", falla=False),
        publicidad=Pregunta(falla=False),
        vacia=Pregunta(falla=False),
    )
    assert veredicto_de_rubrica(rubrica).aprobada
