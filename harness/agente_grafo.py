"""The agents as ``grafo.agentes`` built them until issue 33: a ``create_agent`` graph.

``grafo.agentes.LlamadaEstructurada`` makes the same model call without the graph. This is the
"before" that ``tests/grafo/test_chat_model.py`` compares it with (same body on the wire, same
answer) and that ``bench.capas`` times it against.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain.agents import create_agent
from langchain.agents.structured_output import ProviderStrategy
from langchain_core.messages import HumanMessage


def agente_create_agent(model: Any, name: str, prompt: str, schema: Any) -> Any:
    """A ``create_agent`` graph with the provider's JSON-schema output and no checkpointer
    (agents run inside a node; with one they would inherit the parent's)."""
    return create_agent(
        model,
        tools=[],
        system_prompt=prompt,
        response_format=ProviderStrategy(schema),
        checkpointer=False,
        name=name,
    )


class AgenteGrafo:
    """A ``create_agent`` graph behind ``LlamadaEstructurada``'s interface (``name``,
    ``ainvoke(content, formato=None) -> (message, structured response)``), so ``Agentes``
    can call it in place of its own agents."""

    def __init__(self, model: Any, name: str, prompt: str, schema: Any) -> None:
        self.name = name
        self.agente = agente_create_agent(model, name, prompt, schema)

    async def ainvoke(
        self, content: str, formato: Mapping[str, Any] | None = None
    ) -> tuple[Any, Any]:
        """One human message in; the last message and the structured response out.

        ``formato`` is accepted because ``Agentes`` passes it on every call, but a graph's
        response format is fixed when it is built: only the quoting evaluator, which came
        after issue 33, ever gives one, and it is refused rather than ignored.
        """
        if formato is not None:
            raise ValueError(f"{self.name}: a create_agent graph's response format is fixed")
        salida = await self.agente.ainvoke({"messages": [HumanMessage(content=content)]})
        return salida["messages"][-1], salida["structured_response"]
