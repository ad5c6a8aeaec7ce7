"""Lamina: a multi-level AI compiler on top of MLIR."""
