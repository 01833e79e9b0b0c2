"""revision.certificador.confianza: the trust figures, from the decisions people took."""

from __future__ import annotations

import pytest

from revision.certificador.confianza import DecisionResumen, calcular


def test_precision_por_familia_criterio_y_ventana():
    decisiones = [DecisionResumen("muestra", "incorrecta", "botellas", ["C04"])] * 10
    decisiones += [DecisionResumen("muestra", "correcta", "zapatillas", [])] * 50
    decisiones += [
        DecisionResumen("revision", "aprobada", "zapatillas", []),
        DecisionResumen("revision", "rechazada", "zapatillas", ["C04"]),
    ]
    c = calcular(decisiones)
    assert c.precision.valor == pytest.approx(50 / 60)
    assert c.ventana.total == 50 and c.ventana.valor == 1.0  # the last 50 were all correct
    assert c.por_familia["botellas"].valor == 0.0
    assert c.por_criterio["C04"].valor == pytest.approx(50 / 60)
    assert c.por_criterio["C01"].valor == 1.0
    assert c.rechazos_confirmados.aciertos == 1 and c.rechazos_confirmados.total == 2
