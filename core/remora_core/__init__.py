"""Remora's editor-agnostic engine: parsing, identity, storage and the node graph.

Nothing in this package imports pygls, lsprotocol or ``remora_lsp``; the language
server adapts it to the protocol.
"""

__version__ = "0.1.0"
