"""Agents: what makes a node's agent think and act.

| module | responsibility |
|---|---|
| ``runtime.py`` | the agents' services of one project, started and closed together |
| ``context.py`` | ``AgentServices``, ``AgentContext``: what a turn's tools reach |
| ``prompt.py`` | the system prompt of a node and the turn's input |
| ``tools.py``, ``toolset.py`` | the core tools, validating their arguments |
| ``looking.py`` | search, read and references of any node: bounded, no secrets |
| ``project_rules.py`` | ``AGENTS.md`` / ``.remora/rules.md`` in every prompt, bounded |
| ``instructions.py`` | a person's standing instructions for one node |
| ``host.py`` | host functions ``.pym`` tools may call |
| ``fenced.py``, ``guided.py`` | the ``fenced`` protocol, grammars for small models |
| ``guarding.py`` | the intent guard applied to an agent's rewrite |
| ``providers.py`` | which model a turn talks to, built from settings |
| ``chat_model.py`` | the chat-completions model, preparing tool schemas once |
| ``resilient.py`` | the model wrapper: events per request, retries with backoff |
| ``kernel.py`` | one agent turn: prompt + triggers + history → tool loop → events |
| ``local.py``, ``local_server.py`` | the embedded llama.cpp model (extra ``local``) |
| ``bundles.py`` | ``bundle.yaml`` loading, the shipped defaults in ``bundles/`` |
| ``sandbox.py`` | ``.pym`` tools run in the pydantic-monty sandbox |
| ``extensions.py`` | ``.remora/models/*.py`` ``ExtensionNode`` classes |
| ``memory.py`` | chat history per agent |
| ``workspace.py`` | each agent's key-value memory and overlay files |
| ``questions.py`` | ``ask_user``: questions to the person, answered or timed out |
| ``statuses.py`` | each agent's status (idle, running, …) on its node and stored |

Project paths (nothing outside the root, secrets never shown) are
``remora_core/project_paths.py``, shared with the review.
"""
