"""A small shop whose prices are tested."""
