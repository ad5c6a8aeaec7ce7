"""MLIR contexts for Lamina's dialects, and verification.

Dialects register themselves when their class is defined (Lamina's own `nn`
when this module is imported, a user's when their file or plugin runs).
Their ops and types are parsed as unregistered ones (MLIR's generic form),
so everything registered so far is usable in every context, old or new, and
`verify` holds them to their Python definitions, reporting at the op any
name or type that no dialect defines:

    context = make_context()        # upstream dialects + every Lamina dialect
    verify(module.operation)        # upstream verifier, then Lamina's rules

(Why not IRDL in the context: see `lamina.dialects.opdef`. The IRDL export,
`irdl()`, is for upstream tools.)
"""

from mlir import ir

import lamina.dialects.nn  # noqa: F401  (registers the nn dialect)
import lamina.dialects.hw  # noqa: F401  (registers the hw dialect)
import lamina.dialects.hw_instructions  # noqa: F401  (registers the hw instruction ops)
from lamina.dialects.opdef import (Dialect, follows_rules, lookup_op, registered_dialect,
                                   registered_dialects)
from lamina.types import size_problem


def dialects() -> list[type[Dialect]]:
    """Every registered dialect (Lamina's own first), in definition order."""
    return registered_dialects()


def lookup_dialect(name: str) -> type[Dialect] | None:
    """The registered dialect called `name`, or None."""
    return registered_dialect(name)


def builtin_dialects() -> list[type[Dialect]]:
    """The dialects that ship with Lamina (the ones docs/ describes)."""
    return [d for d in dialects() if d.__module__.startswith("lamina.dialects.")]


def irdl() -> str:
    """The IRDL of every registered dialect, for `mlir-opt --irdl-file=`."""
    return "".join(dialect.irdl() for dialect in dialects())


def load_dialects(context: ir.Context) -> ir.Context:
    """Makes `context` accept the ops and types of every registered dialect
    (they parse as unregistered ones; `verify` checks them) and returns it."""
    context.allow_unregistered_dialects = True
    return context


def make_context() -> ir.Context:
    """A new context with every upstream dialect and every registered one."""
    return load_dialects(ir.Context())


def verify(operation: ir.Operation) -> bool:
    """The upstream verifier, then Lamina's: every op and type must belong
    to a loaded dialect, and the ops of Lamina's dialects must keep their
    Python rules. Errors are emitted as diagnostics at the offending ops."""
    return verify_upstream(operation) and check_registered(operation, rules=True)


def verify_upstream(operation: ir.Operation) -> bool:
    """The upstream verifier alone, its errors emitted as diagnostics."""
    try:
        operation.verify()
    except ir.MLIRError as error:
        for diagnostic in error.error_diagnostics:
            diagnostic.location.emit_error(diagnostic.message)
        return False
    return True


def _type_problem(t: ir.Type, known: dict | None = None) -> str | None:
    """Why a type belongs to no dialect or is too large, or None. `known`
    remembers the answers for types already asked about (types are
    uniqued: one verification asks about the same few again and again)."""
    if known is not None:
        if t in known:
            return known[t]
        known[t] = problem = _type_problem(t)
        return problem
    if isinstance(t, ir.ShapedType):
        return size_problem(t) or _type_problem(ir.ShapedType(t).element_type)
    if isinstance(t, ir.FunctionType):
        function = ir.FunctionType(t)
        for inner in list(function.inputs) + list(function.results):
            problem = _type_problem(inner)
            if problem:
                return problem
        return None
    if not isinstance(t, ir.OpaqueType):
        return None
    namespace = ir.OpaqueType(t).dialect_namespace
    dialect = lookup_dialect(namespace)
    if dialect is None:
        return f"type '{t}' belongs to no loaded dialect"
    if ir.OpaqueType(t).data not in dialect.types:
        return f"type '{t}' is not a type of the {namespace} dialect"
    return None


def _has_properties(operation: ir.Operation) -> bool:
    """True when an op of a Lamina dialect was written with properties
    (`<{...}>`), which its Python definition would not see."""
    text = operation.get_asm(print_generic_op_form=True, use_local_scope=True,
                             assume_verified=True)
    header = text[text.index(f'"{operation.name}"('):]
    return header[header.index(")") + 1:].lstrip().startswith("<{")


# Upstream ops whose blocks end without a terminator.
_NO_TERMINATOR = {"builtin.module", "gpu.module", "spirv.module"}


def check_registered(root: ir.Operation, rules: bool = False) -> bool:
    """Reports every op and type under `root` that no loaded dialect
    defines (what MLIR's parser reports for registered dialects), and
    properties on Lamina's ops; with `rules`, when there are none, the
    Python rules of the Lamina ops (in the same walk of the IR). Returns
    success."""
    context = root.context
    ok = True
    known_types: dict = {}
    lamina_ops: list = []
    calls: list = []
    shardings: list = []

    def error(operation, message):
        nonlocal ok
        operation.location.emit_error(message)
        ok = False

    def visit(operation):
        name = operation.name
        namespace = name.partition(".")[0]
        if lookup_dialect(namespace) is not None:
            op_class = lookup_op(name)
            if op_class is None:
                error(operation, f"unregistered operation '{name}' found in dialect "
                                 f"('{namespace}'), which has no such op")
            elif _has_properties(operation):
                error(operation, f"'{name}' op is written with properties (<{{...}}>); the ops "
                                 "of Lamina's dialects take attributes ({...})")
            else:
                lamina_ops.append((operation, op_class))
        elif not context.is_registered_operation(name):
            error(operation, f"operation '{name}' belongs to no loaded dialect")
        elif name == "func.call":
            calls.append(operation)
        elif namespace == "shard":
            shardings.append(operation)
        types = [r.type for r in operation.results]
        for region in operation.regions:
            for block in region.blocks:
                types.extend(a.type for a in block.arguments)
                operations = block.operations
                count = len(operations)
                last = operations[count - 1] if count else None
                # MLIR takes an unregistered op for a possible terminator.
                if (last is not None and name not in _NO_TERMINATOR
                        and lookup_dialect(last.operation.name.partition(".")[0]) is not None):
                    error(last.operation, "block with no terminator: "
                                          f"'{last.operation.name}' ends the block, and the ops "
                                          "of Lamina's dialects are not terminators")
        if "function_type" in operation.attributes:
            attribute = operation.attributes["function_type"]
            if isinstance(attribute, ir.TypeAttr):
                types.append(ir.TypeAttr(attribute).value)
        for t in types:
            problem = _type_problem(t, known_types)
            if problem:
                error(operation, problem)
                break
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    if ok and calls:
        ok = check_no_recursion(calls)
    if ok and shardings:
        from lamina.sharding import check_shardings
        ok = check_shardings(shardings)
    if ok and rules:
        for operation, op_class in lamina_ops:
            ok = follows_rules(operation, op_class) and ok
    return ok


def _enclosing_function(operation: ir.Operation) -> str | None:
    """The symbol of the `func.func` an op is in, or None."""
    op = operation.parent
    while op is not None and op.name != "func.func":
        op = op.parent
    return None if op is None else ir.StringAttr(op.attributes["sym_name"]).value


def check_no_recursion(calls: list[ir.Operation]) -> bool:
    """Reports a cycle of the call graph made by the `func.call` ops
    `calls` at the call closing it, naming the functions on it: compiled
    code has no stack to grow, so recursion is rejected before it becomes a
    stack overflow at run time. Returns success."""
    edges: dict[str, list[tuple[str, ir.Operation]]] = {}
    for call in calls:
        caller = _enclosing_function(call)
        if caller is not None and "callee" in call.attributes:
            callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            edges.setdefault(caller, []).append((callee, call))
    done: set[str] = set()
    for start in edges:
        if start in done:
            continue
        path, on_path = [start], {start: 0}
        stack = [iter(edges.get(start, []))]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                finished = path.pop()
                del on_path[finished]
                done.add(finished)
                continue
            callee, call = step
            if callee in on_path:
                cycle = path[on_path[callee]:] + [callee]
                what = (f"@{callee} calls itself" if len(cycle) == 2 else
                        "the calls " + " -> ".join(f"@{name}" for name in cycle) + " form a cycle")
                call.location.emit_error(f"recursion is not supported: {what} (a call graph "
                                         "with a cycle would overflow the stack at run time)")
                return False
            if callee in done:
                continue
            on_path[callee] = len(path)
            path.append(callee)
            stack.append(iter(edges.get(callee, [])))
    return True

