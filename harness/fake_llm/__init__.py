"""Scriptable OpenAI-compatible LLM server for tests and benchmarks, run as a real process.

``python -m harness.fake_llm --host 127.0.0.1 --port 0 [--config FILE] [--record FILE]``;
from Python, ``client.FakeLLM`` starts and drives it. The package, one reason
to change per module:

* ``prompt_contract``: what it reads from a request (agent, SKU, origin), named in one place:
  its whole dependence on ``grafo``'s prompts and schemas, checked by
  ``tests/harness/test_fake_llm_contrato.py``;
* ``script``: what it answers per agent and SKU, as pydantic models (``extra="forbid"``);
* ``answers``: the ficha, verdict or rubric, their log-probabilities, the OpenAI body;
* ``limiter``: ``max_parallel``, resizable while requests wait;
* ``server``: the aiohttp app (chat completions, ``/v1/models``, ``/_admin/*``), recording,
  outages, restart from the record file;
* ``client``: the server started and driven as a real process (``FakeLLM``);
* ``__main__``: the command line.

Nothing is imported here, so ``python -m harness.fake_llm`` loads only what it runs.
"""
