"""The agents' prompts as Markdown, reviewed like code: no Python here, and it imports nothing.

``grafo.mensajes`` reads them through ``importlib.resources`` (pyproject.toml ships
``prompts/*.md`` as package data): ``generador.md`` (plus ``generador_ejemplos.md`` with
``FICHAS_GENERADOR_EJEMPLOS``) for the generator, ``evaluador.md`` (plus ``evaluador_senal.md``
with the unsupported-words signal) or ``evaluador_rubrica.md`` for the evaluator. A deployment
may replace one with a file (``FICHAS_PROMPT_*_ARCHIVO``: ``grafo.mensajes.Plantillas``).

Invariants: nothing of the generator's prompt reaches the evaluator (tests/grafo/test_ceguera.py);
a changed text changes the gate's key (``grafo.fuente_puerta``), so a certified gate no longer
applies; the fake LLM reads markers in them (harness/fake_llm/prompt_contract.py, checked by
tests/harness/test_fake_llm_contrato.py). docs/grafo.md, "Who sees what", gives the why.
"""
