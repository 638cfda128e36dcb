"""A small package used by Remora's end-to-end tests."""
