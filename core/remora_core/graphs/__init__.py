"""Batch graphs: bundles run over many nodes as one reviewable batch (DESIGN §10)."""
