"""MLIR contexts with Lamina's dialects loaded."""

from mlir import ir

from lamina.dialects.nn import NN

DIALECTS = (NN,)


def load_dialects(context: ir.Context) -> ir.Context:
    """Loads Lamina's dialects into `context` (idempotent) and returns it."""
    for dialect in DIALECTS:
        dialect.load(context)
    return context


def make_context() -> ir.Context:
    """A new context with every upstream dialect and Lamina's dialects."""
    context = ir.Context()
    context.allow_unregistered_dialects = False
    return load_dialects(context)


def verify(operation: ir.Operation) -> bool:
    """The upstream verifier, then the Python rules of Lamina's ops. Errors
    are emitted as diagnostics at the offending ops."""
    try:
        operation.verify()
    except ir.MLIRError as error:
        for diagnostic in error.error_diagnostics:
            diagnostic.location.emit_error(diagnostic.message)
        return False
    return all([dialect.verify(operation) for dialect in DIALECTS])
