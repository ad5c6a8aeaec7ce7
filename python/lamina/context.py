"""MLIR contexts with every registered dialect loaded, and verification.

Dialects register themselves when their class is defined (Lamina's own `nn`
when this module is imported, a user's when their file or plugin runs); a
new context loads every dialect registered so far:

    context = make_context()        # upstream dialects + nn + any user dialect
    verify(module.operation)        # upstream verifier, then the Python rules
"""

from mlir import ir

import lamina.dialects.nn  # noqa: F401  (registers the nn dialect)
from lamina.dialects.opdef import Dialect, lookup_op, registered_dialects, verify_ops


def dialects() -> list[type[Dialect]]:
    """Every registered dialect (Lamina's own first), in definition order."""
    return registered_dialects()


def builtin_dialects() -> list[type[Dialect]]:
    """The dialects that ship with Lamina (the ones docs/ describes)."""
    return [d for d in dialects() if d.__module__.startswith("lamina.dialects.")]


def irdl() -> str:
    """The IRDL of every registered dialect, for `mlir-opt --irdl-file=`."""
    return "".join(dialect.irdl() for dialect in dialects())


def load_dialects(context: ir.Context) -> ir.Context:
    """Loads every registered dialect into `context` (idempotent) and
    returns it. Raises DialectError when an op was added to a dialect after
    the context loaded it."""
    for dialect in dialects():
        dialect.load(context)
    return context


def make_context() -> ir.Context:
    """A new context with every upstream dialect and every registered one."""
    context = ir.Context()
    context.allow_unregistered_dialects = False
    return load_dialects(context)


def _op_class(operation: ir.Operation):
    return lookup_op(operation.name)


def verify(operation: ir.Operation) -> bool:
    """The upstream verifier, then the Python rules of the ops of every
    registered dialect. Errors are emitted as diagnostics at the offending
    ops."""
    try:
        operation.verify()
    except ir.MLIRError as error:
        for diagnostic in error.error_diagnostics:
            diagnostic.location.emit_error(diagnostic.message)
        return False
    return verify_ops(operation, _op_class)
