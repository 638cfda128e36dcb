"""One module per LSP feature, each exposing ``register(server)``."""
