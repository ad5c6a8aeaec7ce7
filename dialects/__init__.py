"""Lamina's Python-defined dialects."""
