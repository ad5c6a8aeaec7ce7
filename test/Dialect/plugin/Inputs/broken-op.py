"""A plugin whose op declaration is wrong: Variadic takes Operand or Result."""

from lamina.dialects.opdef import Dialect, Result, Variadic


class Broken(Dialect, name="broken_decl"):
    """Never finished loading."""


class BadOp(Broken.Operation, name="bad"):
    """Variadic of an int."""

    values: Variadic[int]
    result: Result
