"""Lamina's Python-defined passes: registration by name, options, running.

A pass is a dataclass in its own file under `passes/` (within a level) or
`lowering/` (between levels), registered with `@register_pass`:

    @register_pass
    @dataclass
    class NNCanonicalize(Pass):
        '''Simplifies nn ops: ...'''           # shown by --list-passes
        argument = "nn-canonicalize"          # the flag
        anchor = "func.func"                  # runs on each function
        max_iterations: int = 10              # option max-iterations=...

        def run(self, op): ...

Options are the dataclass fields; `--nn-canonicalize='max-iterations=3'` and
`NNCanonicalize(max_iterations=3)` set the same one. Integer options must
fit in 64 bits, and a field may state bounds that both ways are held to
(an `OptionError` otherwise), so that no value a user types reaches
upstream code that would abort on it:

        max_iterations: int = field(default=10, metadata={"minimum": 1}) Python passes are not in
MLIR's pass registry, so they run as module-level passes of an upstream
PassManager (`add_to`) and visit their anchor ops themselves; after each run
the output is verified (upstream verifier and the Python rules of Lamina's
ops).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import pkgutil
from typing import ClassVar

from mlir import ir, passmanager

from lamina.context import verify, verify_upstream

REGISTRY: dict[str, type["Pass"]] = {}


class PassFailure(Exception):
    """Raised by a pass that cannot do its job on the given IR; the message
    becomes an error at `location` (or the anchor op's)."""

    def __init__(self, message: str, location: ir.Location | None = None):
        super().__init__(message)
        self.location = location


class OptionError(ValueError):
    """A pass option that does not exist or does not parse."""


@dataclasses.dataclass
class Pass:
    """Base of Lamina passes."""

    argument: ClassVar[str] = ""
    anchor: ClassVar[str] = "builtin.module"
    # Whether the IR after the pass is checked by Lamina's verifier too
    # (`lamina.context.verify`: ops and types of loaded dialects, the Python
    # rules of Lamina's ops), not only by upstream's. The passes of the
    # stages after `linalg`, whose IR holds no op of Lamina's dialects, turn
    # it off: its walk of the IR in Python is the largest cost of verifying
    # large lowered modules (a third of the compile time of a convnet).
    verifies_lamina_ops: ClassVar[bool] = True

    def run(self, op: ir.Operation) -> None:
        """Transforms one anchor op in place; raises PassFailure on failure."""
        raise NotImplementedError

    def __post_init__(self):
        for field in self.options():
            _check_bounds(self.argument, field, getattr(self, field.name))

    # -- description ---------------------------------------------------------

    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""

    @classmethod
    def description(cls) -> str:
        return (cls.__doc__ or "").strip()

    @classmethod
    def options(cls) -> list[dataclasses.Field]:
        return list(dataclasses.fields(cls))

    @classmethod
    def from_options(cls, text: str = "") -> "Pass":
        """An instance from an option string `key=value key2=value2`."""
        fields = {f.name.replace("_", "-"): f for f in cls.options()}
        values = {}
        for item in _split_options(text):
            key, eq, raw = item.partition("=")
            key = key.strip()
            if key not in fields:
                raise OptionError(f"pass '{cls.argument}' has no option '{key}'"
                                  + (f" (options: {', '.join(sorted(fields))})" if fields else ""))
            field = fields[key]
            values[field.name] = _convert_option(cls.argument, key, field, raw.strip() if eq else "true")
        return cls(**values)

    def option_string(self) -> str:
        return " ".join(f"{f.name.replace('_', '-')}={_format_option(getattr(self, f.name))}"
                        for f in self.options())

    def __str__(self) -> str:
        options = self.option_string()
        return f"{self.argument}{{{options}}}" if options else self.argument

    # -- running -------------------------------------------------------------

    def apply(self, root: ir.Operation) -> bool:
        """Runs the pass on every anchor op under `root` (or on `root`),
        then verifies. Errors are emitted as diagnostics; returns success."""
        targets = []
        if root.name == self.anchor or self.anchor == "any":
            targets.append(root)
        else:
            def collect(op):
                if op.name == self.anchor:
                    targets.append(op)
                    return ir.WalkResult.SKIP
                return ir.WalkResult.ADVANCE
            root.walk(collect, ir.WalkOrder.PRE_ORDER)
        for target in targets:
            try:
                self.run(target)
            except PassFailure as failure:
                (failure.location or target.location).emit_error(str(failure))
                return False
        return verify(root) if self.verifies_lamina_ops else verify_upstream(root)

    def add_to(self, pm: passmanager.PassManager) -> None:
        """Appends the pass to an upstream PassManager (module level)."""

        def callback(op, external_pass):
            if not self.apply(op):
                external_pass.signal_pass_failure()

        pm.add(callback, name=type(self).__name__, argument=self.argument,
               description=self.summary())


def register_pass(cls: type[Pass]) -> type[Pass]:
    if not cls.argument:
        raise ValueError(f"{cls.__name__} has no argument")
    REGISTRY[cls.argument] = cls
    return cls


PASS_PACKAGES = ("lamina.passes", "lamina.lowering")


@functools.lru_cache(maxsize=None)
def _import_pass_packages() -> None:
    """Imports every module of Lamina's pass packages (each registers its
    passes); once per process."""
    for package_name in PASS_PACKAGES:
        package = importlib.import_module(package_name)
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package_name}.{module.name}")


def home_modules(argument: str) -> list[str]:
    """Where Lamina's own pass `argument` is defined: each pass lives in the
    module named after its flag, `cpu-plan-memory` in
    `lamina.passes.cpu_plan_memory`, and a lowering `convert-X-to-Y` in
    `lamina.lowering.X_to_Y` (or that package's `convert` module), so that
    running one pass imports its module only, not every pass's.
    test_pass_pipeline checks that every pass keeps to it."""
    name = argument.replace("-", "_")
    modules = [f"{PASS_PACKAGES[0]}.{name}"]
    if name.startswith("convert_"):
        lowering = f"{PASS_PACKAGES[1]}.{name[len('convert_'):]}"
        modules += [lowering, f"{lowering}.convert"]
    return modules


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # its parent package does not exist
        return False


def find_pass(argument: str) -> type[Pass] | None:
    """The pass registered as `argument` (Lamina's own, imported from its
    home module on first use, or one registered by a plugin), or None for a
    name that is no Lamina pass (an upstream pass, or a mistake)."""
    if argument not in REGISTRY:
        for module in home_modules(argument):
            if _module_exists(module):
                importlib.import_module(module)
                if argument in REGISTRY:
                    break
    return REGISTRY.get(argument)


def all_passes() -> dict[str, type[Pass]]:
    """Every registered Lamina pass by flag: Lamina's own (the pass
    packages are scanned on the first call) and any registered since."""
    _import_pass_packages()
    return dict(sorted(REGISTRY.items()))


def get_pass(argument: str, options: str = "") -> Pass:
    """The pass registered as `argument`, configured by an option string."""
    cls = find_pass(argument)
    if cls is None:
        raise KeyError(argument)
    return cls.from_options(options)


def _split_options(text: str) -> list[str]:
    """Splits `a=1 b={x y} c=[1,2]` on spaces outside brackets and quotes."""
    items, depth, current, quote = [], 0, "", None
    for ch in text:
        if quote:
            current += ch
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            current += ch
        elif ch in "{[(":
            depth += 1
            current += ch
        elif ch in "}])":
            depth -= 1
            current += ch
        elif ch == " " and depth == 0:
            if current.strip():
                items.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        items.append(current.strip())
    return items


def _convert_option(pass_name, key, field, raw):
    kind = field.type if isinstance(field.type, type) else {
        "int": int, "float": float, "bool": bool, "str": str}.get(str(field.type), str)
    raw = raw.strip("\"'")
    try:
        if kind is bool:
            if raw.lower() in ("true", "1", "on"):
                return True
            if raw.lower() in ("false", "0", "off"):
                return False
            raise ValueError
        if str(field.type).startswith(("list", "tuple")):
            inner = int if "int" in str(field.type) else str
            return tuple(inner(v) for v in raw.strip("[]{}").split(",") if v.strip())
        return kind(raw)
    except ValueError:
        raise OptionError(f"option '{key}' of pass '{pass_name}' expects "
                          f"{getattr(kind, '__name__', kind)}, got '{raw}'") from None


def _check_bounds(pass_name: str, field: dataclasses.Field, value) -> None:
    """Raises OptionError for an integer option (or element of a list
    option) outside 64 bits or outside the field's stated bounds."""
    key = field.name.replace("_", "-")
    low, high = field.metadata.get("minimum"), field.metadata.get("maximum")
    for item in value if isinstance(value, (list, tuple)) else [value]:
        if isinstance(item, bool) or not isinstance(item, int):
            continue
        if not -2**63 <= item < 2**63:
            problem = "an integer that fits in 64 bits"
        elif low is not None and item < low:
            problem = f">= {low}"
        elif high is not None and item > high:
            problem = f"<= {high}"
        else:
            continue
        raise OptionError(f"option '{key}' of pass '{pass_name}' must be {problem}, got {item}")


def _format_option(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)
