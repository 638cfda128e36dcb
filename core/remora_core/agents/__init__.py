"""Agents: what makes a node's agent think and act (DESIGN §8).

| module | responsibility |
|---|---|
| ``paths.py`` | project-relative paths: nothing outside the root, secrets never shown |
| ``context.py`` | ``AgentContext``: what one turn's tools can reach |
| ``prompt.py`` | the system prompt of a node and the turn's input |
| ``tools.py`` | the core tools, validating their arguments |
| ``fenced.py`` | the ``fenced`` turn protocol for small models |
| ``providers.py`` | which model a turn talks to, built from settings |
| ``chat_model.py`` | the chat-completions model, preparing tool schemas once |
| ``resilient.py`` | the model wrapper: events per request, retries with backoff |
| ``kernel.py`` | one agent turn: prompt + triggers + history → tool loop → events |
| ``local.py``, ``local_server.py`` | the embedded llama.cpp model (extra ``local``) |
| ``bundles.py`` | ``bundle.yaml`` loading, the shipped defaults in ``bundles/`` |
| ``sandbox.py`` | ``.pym`` tools run in the pydantic-monty sandbox |
| ``extensions.py`` | ``.remora/models/*.py`` ``ExtensionNode`` classes |
| ``memory.py`` | chat history per agent |
"""
