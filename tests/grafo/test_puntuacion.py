"""The evaluator's score read from token logprobs, as a pure function on fixed token lists."""

from __future__ import annotations

import math
from typing import Any

import pytest

from grafo.puntuacion import (
    MASA_MINIMA,
    RUTA_APROBADA,
    probabilidad_verdadero,
    puntuacion_rubrica,
    puntuacion_veredicto,
    recortar_logprobs,
)
from grafo.rubrica import PREGUNTAS


def _tok(text: str, top: dict[str, float] | None = None, chosen: float | None = None) -> dict:
    """One token as the OpenAI API reports it; ``top`` maps alternatives to probabilities."""
    alternatives = [
        {"token": t, "logprob": math.log(p), "bytes": list(t.encode())}
        for t, p in (top or {}).items()
    ]
    if chosen is None:
        chosen = (top or {}).get(text, 1.0)
    return {
        "token": text,
        "logprob": math.log(chosen),
        "bytes": list(text.encode()),
        "top_logprobs": alternatives,
    }


def _logprobs(*tokens: dict[str, Any] | str) -> dict[str, Any]:
    """A logprobs object from tokens (a plain string is a token with no alternatives)."""
    return {"content": [_tok(t) if isinstance(t, str) else t for t in tokens]}


def test_verdict_token_with_leading_space() -> None:
    lp = _logprobs(
        '{"', "ap", "rob", "ada", '":', _tok(" true", {" true": 0.6, " false": 0.3}), ',"', "}"
    )
    assert puntuacion_veredicto(lp) == pytest.approx(0.6 / 0.9)


def test_variants_with_and_without_space_and_split_words_all_count() -> None:
    # The chosen token is "t" (the word split in pieces); alternatives differ in their space.
    verdict = _tok("t", {"t": 0.2, " true": 0.1, "tr": 0.1, "false": 0.3, " f": 0.1, "F": 0.1})
    lp = _logprobs('{"aprobada":', verdict, "rue", ', "problemas": []}')
    assert puntuacion_veredicto(lp) == pytest.approx(0.4 / 0.9)


def test_word_with_punctuation_and_capital_counts() -> None:
    verdict = _tok("true,", {"true,": 0.5, "False": 0.3, "trueish": 0.1})
    lp = _logprobs('{"aprobada": ', verdict, '"problemas": []}')
    assert puntuacion_veredicto(lp) == pytest.approx(0.5 / 0.8)


def test_token_that_opens_with_the_colon() -> None:
    # The verdict token carries the key's closing quote and colon; so do its alternatives.
    verdict = _tok('":false', {'":false': 0.7, '":true': 0.2, '":': 0.05})
    lp = _logprobs('{"aprobada', verdict, "}")
    assert puntuacion_veredicto(lp) == pytest.approx(0.2 / 0.9)


def test_chosen_token_missing_from_top_list_is_counted() -> None:
    verdict = _tok(" true", {" false": 0.2, " null": 0.1}, chosen=0.6)
    lp = _logprobs('{"aprobada":', verdict, "}")
    assert puntuacion_veredicto(lp) == pytest.approx(0.6 / 0.8)


def test_key_order_other_than_the_schema() -> None:
    lp = _logprobs(
        '{"problemas": [{"criterio": "C06", "detalle": "x"}], "aprobada":',
        _tok(" false", {" false": 0.9, " true": 0.05}),
        "}",
    )
    assert puntuacion_veredicto(lp) == pytest.approx(0.05 / 0.95)


def test_aprobada_inside_a_string_before_the_real_key_is_not_the_verdict() -> None:
    decoy = _tok(" true", {" true": 0.99, " false": 0.01})
    lp = _logprobs(
        '{"problemas": [{"criterio": "C04", "detalle": "dice \\"aprobada\\":',
        decoy,
        '"}], "aprobada":',
        _tok(" false", {" false": 0.8, " true": 0.2}),
        "}",
    )
    assert puntuacion_veredicto(lp) == pytest.approx(0.2)


def test_nested_aprobada_is_not_the_top_level_key() -> None:
    lp = _logprobs(
        '{"problemas": [{"aprobada":',
        _tok(" true", {" true": 0.99, " false": 0.01}),
        '}], "aprobada":',
        _tok(" true", {" true": 0.3, " false": 0.6}),
        "}",
    )
    assert puntuacion_veredicto(lp) == pytest.approx(1 / 3)


def test_multibyte_character_split_across_tokens_keeps_offsets() -> None:
    # "é" split in two byte tokens whose text alone is not valid UTF-8.
    e1 = {"token": "\\xc3", "logprob": 0.0, "bytes": [0xC3], "top_logprobs": []}
    e2 = {"token": "\\xa9", "logprob": 0.0, "bytes": [0xA9], "top_logprobs": []}
    lp = _logprobs(
        '{"problemas": [{"detalle": "caf',
        e1,
        e2,
        '"}], "aprobada":',
        _tok(" true", {" true": 0.75, " false": 0.25}),
        "}",
    )
    assert puntuacion_veredicto(lp) == pytest.approx(0.75)


@pytest.mark.parametrize(
    "logprobs",
    [None, {}, {"content": None}, {"content": []}, "texto", {"content": [{"logprob": 0.0}]}],
)
def test_missing_logprobs_give_no_score(logprobs: Any) -> None:
    assert puntuacion_veredicto(logprobs) is None


def test_answer_without_the_key_gives_no_score() -> None:
    lp = _logprobs('{"problemas": [], "aprobado":', _tok(" true", {" true": 0.9}), "}")
    assert puntuacion_veredicto(lp) is None


def test_mass_below_the_floor_gives_no_score() -> None:
    # The model wanted a string or a newline: only 0.4 of its probability is on a boolean.
    verdict = _tok(" false", {' "': 0.5, " false": 0.3, " true": 0.1, "\n": 0.1})
    lp = _logprobs('{"aprobada":', verdict, "}")
    assert MASA_MINIMA == 0.5
    assert puntuacion_veredicto(lp) is None
    assert puntuacion_veredicto(lp, masa_minima=0.3) == pytest.approx(0.25)


def test_mass_at_the_floor_gives_a_score() -> None:
    verdict = _tok(" true", {" true": 0.25, " false": 0.25, '"': 0.5})
    assert puntuacion_veredicto(_logprobs('{"aprobada":', verdict, "}")) == pytest.approx(0.5)


def _rubrica(p_falla: dict[str, float | None], orden: tuple[str, ...] = tuple(PREGUNTAS)) -> dict:
    """A rubric answer whose ``falla`` tokens carry P(true) = p_falla[question]."""
    tokens: list[dict[str, Any] | str] = ["{"]
    for n, pregunta in enumerate(orden):
        p = p_falla[pregunta]
        top = {" true": 0.3, '"': 0.7} if p is None else {" true": p, " false": 1 - p}
        chosen = " false" if p is not None and p < 0.5 else " true"
        sep = ", " if n else ""
        tokens += [f'{sep}"{pregunta}": {{"cita": "", "falla":', _tok(chosen, top), "}"]
    tokens.append("}")
    return _logprobs(*tokens)


def test_rubric_score_is_the_product_of_no_failure() -> None:
    p = {"inventa": 0.1, "publicidad": 0.2, "vacia": 0.5}
    esperado = 0.9 * 0.8 * 0.5
    assert puntuacion_rubrica(_rubrica(p), tuple(PREGUNTAS)) == pytest.approx(esperado)
    # The order the model wrote the questions in does not matter.
    otro_orden = _rubrica(p, ("vacia", "inventa", "publicidad"))
    assert puntuacion_rubrica(otro_orden, tuple(PREGUNTAS)) == pytest.approx(esperado)
    assert probabilidad_verdadero(_rubrica(p), ("vacia", "falla")) == pytest.approx(0.5)


def test_rubric_without_a_score_for_one_question_has_none() -> None:
    p = {"inventa": 0.1, "publicidad": None, "vacia": 0.0001}
    assert puntuacion_rubrica(_rubrica(p), tuple(PREGUNTAS)) is None
    assert puntuacion_rubrica(None, tuple(PREGUNTAS)) is None


# -- recortar_logprobs: what the evaluator's chat model keeps of the server's logprobs ----------

RUTAS_RUBRICA = tuple((p, "falla") for p in PREGUNTAS)


def _veredictos() -> list[dict[str, Any]]:
    """Verdict answers of the tests above: verdict first, last, nested decoys, split bytes."""
    return [
        _logprobs(
            '{"',
            "ap",
            "rob",
            "ada",
            '":',
            _tok(" true", {" true": 0.6, " false": 0.3}),
            ', "problemas": [',
            _tok('{"criterio"', {'{"criterio"': 0.9, "]": 0.1}),
            "]}",
        ),
        _logprobs('{"aprobada":', _tok("t", {"t": 0.2, " true": 0.1, "false": 0.3}), "rue", "}"),
        _logprobs(
            '{"problemas": [{"aprobada":',
            _tok(" true", {" true": 0.99, " false": 0.01}),
            '}], "aprobada":',
            _tok(" true", {" true": 0.3, " false": 0.6}),
            "}",
        ),
        _logprobs('{"aprobada":', _tok(" false", {' "': 0.5, " false": 0.3, " true": 0.1}), "}"),
        _logprobs('{"problemas": [], "aprobado":', _tok(" true", {" true": 0.9}), "}"),
    ]


@pytest.mark.parametrize("lp", _veredictos())
def test_recortar_keeps_the_verdict_score(lp: dict[str, Any]) -> None:
    recortado = recortar_logprobs(lp, (RUTA_APROBADA,))
    assert puntuacion_veredicto(recortado) == puntuacion_veredicto(lp)
    assert puntuacion_veredicto(recortado, 0.3) == puntuacion_veredicto(lp, 0.3)


def test_recortar_drops_what_follows_the_verdict_and_the_other_alternatives() -> None:
    lp = _veredictos()[0]
    recortado = recortar_logprobs(lp, (RUTA_APROBADA,))
    assert recortado is not None
    tokens = [t["token"] for t in recortado["content"]]
    assert tokens == ['{"', "ap", "rob", "ada", '":', " true"]  # nothing after the verdict
    con_alternativas = [t["token"] for t in recortado["content"] if "top_logprobs" in t]
    assert con_alternativas == [" true"]
    assert lp["content"][7]["top_logprobs"]  # the original is left as it was


def test_recortar_keeps_every_rubric_question() -> None:
    p = {"inventa": 0.1, "publicidad": 0.2, "vacia": 0.5}
    for orden in (tuple(PREGUNTAS), ("vacia", "inventa", "publicidad")):
        lp = _rubrica(p, orden)
        recortado = recortar_logprobs(lp, RUTAS_RUBRICA)
        assert recortado is not None
        assert puntuacion_rubrica(recortado, tuple(PREGUNTAS)) == pytest.approx(0.9 * 0.8 * 0.5)
        assert len(recortado["content"]) < len(lp["content"])  # the closing braces are gone
        assert sum("top_logprobs" in t for t in recortado["content"]) == 3


@pytest.mark.parametrize("logprobs", [None, {}, {"content": None}, {"content": []}])
def test_recortar_without_logprobs_gives_what_came(logprobs: Any) -> None:
    assert recortar_logprobs(logprobs, (RUTA_APROBADA,)) == logprobs
