"""A tiny inventory package: the example project Remora's README runs on."""
