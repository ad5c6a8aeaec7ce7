"""The lowerings of nn ops, by op class, one registry per conversion.

A conversion of nn ops (`convert-nn-to-linalg` for the CPU,
`convert-nn-to-hw` for the GPU) looks each op's lowering up here by the
op's class: the class's own, else its nearest base class's (so one
function serves a category, e.g. every unary elementwise op). Lamina's
lowerings register here as a plugin's do, and a plugin op declares its
GPU lowering the way it declares its CPU one:

    from lamina.lowering.registry import lowering

    @lowering(MyOp)                 # convert-nn-to-linalg
    def lower_my_op(op, x, y): ...

    @lowering(MyOp, to="hw")        # convert-nn-to-hw
    def lower_my_op_to_hw(op, lowering): ...

What a function takes and gives is the conversion's: see `to="linalg"`
in `lamina.lowering.nn_to_linalg` (`(op, *operands) -> value(s)`) and
`to="hw"` in `lamina.lowering.nn_to_hw` (`(op, lowering: HWLowering) ->
ops consumed, or None`). The module imports no lowering and no pass, so
both conversions and plugins can import it.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator


class Lowerings:
    """The class-keyed lowerings of one conversion."""

    def __init__(self, conversion: str):
        self.conversion = conversion
        self.functions: dict[type, Callable[..., Any]] = {}

    def register(self, op_class: type, function: Callable[..., Any]) -> Callable[..., Any]:
        if not isinstance(op_class, type):
            raise TypeError(f"lowerings of {self.conversion} are registered for an op class, "
                            f"not {op_class!r}")
        self.functions[op_class] = function
        return function

    def lookup(self, op_class: type | None) -> Callable[..., Any] | None:
        """The lowering of an op class: its own or its nearest base class's."""
        if op_class is None:
            return None
        return next((self.functions[c] for c in op_class.__mro__ if c in self.functions), None)

    def __contains__(self, op_class: type) -> bool:
        return self.lookup(op_class) is not None

    def __iter__(self) -> Iterator[type]:
        return iter(self.functions)


REGISTRIES = {
    "linalg": Lowerings("convert-nn-to-linalg"),
    "hw": Lowerings("convert-nn-to-hw"),
}


def registry(to: str) -> Lowerings:
    """The lowerings of the conversion to `to` ("linalg" or "hw")."""
    if to not in REGISTRIES:
        raise ValueError(f"no conversion of nn ops to '{to}' (one of {', '.join(REGISTRIES)})")
    return REGISTRIES[to]


def lowering(op_class: type, to: str = "linalg") -> Callable[[Callable], Callable]:
    """Registers the decorated function as the lowering of `op_class` (and
    of its subclasses without one of their own) in the conversion to `to`."""
    lowerings = registry(to)

    def register(function: Callable) -> Callable:
        return lowerings.register(op_class, function)
    return register
