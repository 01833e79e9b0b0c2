"""The agents as ``grafo.agentes`` built them until issue 33: a ``create_agent`` graph.

``grafo.agentes.LlamadaEstructurada`` makes the same model call without the graph. This is the
"before" that ``tests/grafo/test_chat_model.py`` compares it with (same body on the wire, same
answer) and that ``bench.capas`` times it against.
"""

from __future__ import annotations

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
    ``ainvoke(content) -> (message, structured response)``)."""

    def __init__(self, model: Any, name: str, prompt: str, schema: Any) -> None:
        self.name = name
        self.agente = agente_create_agent(model, name, prompt, schema)

    async def ainvoke(self, content: str) -> tuple[Any, Any]:
        """One human message in; the last message and the structured response out."""
        salida = await self.agente.ainvoke({"messages": [HumanMessage(content=content)]})
        return salida["messages"][-1], salida["structured_response"]
