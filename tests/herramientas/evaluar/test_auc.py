"""The AUC of the evaluator's score against people, a pure function (Mann–Whitney form)."""

from __future__ import annotations

import random

import pytest

from herramientas.evaluar.medidas import auc, bloque_puntuacion


def _por_pares(pares: list[tuple[float | None, bool]]) -> float:
    """The definition, pair by pair: P(positive > negative) + P(tie) / 2; None lowest."""
    valor = [(-1.0 if s is None else s, y) for s, y in pares]
    pos = [s for s, y in valor if y]
    neg = [s for s, y in valor if not y]
    gana = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return gana / (len(pos) * len(neg))


def test_perfect_reversed_and_uninformative() -> None:
    assert auc([(0.9, True), (0.8, True), (0.2, False), (0.1, False)]) == 1.0
    assert auc([(0.1, True), (0.2, True), (0.8, False), (0.9, False)]) == 0.0
    assert auc([(0.5, True), (0.5, False), (0.5, True), (0.5, False)]) == 0.5


def test_known_value_with_a_tie() -> None:
    # positives 0.9, 0.6, 0.4; negatives 0.6, 0.3: wins 2 + 0.5 + 2 + ... = (2 + 1.5 + 1) / 6
    pares = [(0.9, True), (0.6, True), (0.4, True), (0.6, False), (0.3, False)]
    assert auc(pares) == pytest.approx(4.5 / 6)


def test_missing_scores_rank_lowest_and_tie_with_each_other() -> None:
    pares = [(None, True), (0.2, False), (None, False), (0.7, True)]
    # 0.7 beats both negatives; None ties None and loses to 0.2: (2 + 0.5) / 4
    assert auc(pares) == pytest.approx(2.5 / 4)


def test_undefined_without_both_classes_or_without_any_score() -> None:
    assert auc([]) is None
    assert auc([(0.3, True), (0.9, True)]) is None
    assert auc([(0.3, False)]) is None
    assert auc([(None, True), (None, False)]) is None


def test_equals_the_pairwise_definition_on_random_scores() -> None:
    rng = random.Random(7)
    for _ in range(20):
        pares: list[tuple[float | None, bool]] = [
            (None if rng.random() < 0.1 else round(rng.random(), 1), rng.random() < 0.4)
            for _ in range(60)
        ]
        if any(y for _, y in pares) and not all(y for _, y in pares):
            assert auc(pares) == pytest.approx(_por_pares(pares))


def test_block_counts_and_interval() -> None:
    pares = [(0.1 * i, i >= 5) for i in range(10)] + [(None, False)]
    bloque = bloque_puntuacion(pares)
    assert bloque["n"] == 11 and bloque["con_puntuacion"] == 10 and bloque["positivos"] == 5
    assert bloque["auc"]["valor"] == 1.0
    assert bloque["auc"]["ic95"] == [1.0, 1.0]
    assert bloque_puntuacion([(None, True), (None, False)])["auc"] == {"valor": None, "ic95": None}
