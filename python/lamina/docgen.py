"""Generates the dialect and pass references in docs/ from the definitions.

The op classes' and passes' docstrings are the documentation; this renders
them as Markdown so that `docs/` never drifts from the code:

    python -m lamina.docgen            # rewrite docs/dialects/*.md, docs/passes.md
    python -m lamina.docgen --check    # exit 1 if they are out of date
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys

from lamina.context import builtin_dialects
from lamina.dialects.opdef import Operand, Result
from lamina.pass_registry import all_passes


def _category(op_cls) -> str:
    bases = [b.__name__ for b in op_cls.__mro__[1:]
             if b.__name__.endswith("Op") and b.__name__ != "Op" and b.__module__ == op_cls.__module__]
    return ", ".join(bases) or "-"


def _values(decls, declaration) -> str:
    """Operands or results: name, kind, and type where it is not the
    declaration's default (a tensor of the op's element types)."""
    described = []
    for decl in decls:
        text = f"`{decl.name}`" + ("" if decl.kind == "single" else f" ({decl.kind})")
        if decl.constraint is not declaration.constraint:
            text += f": {decl.constraint.description}"
        described.append(text)
    return ", ".join(described)


def dialect_reference(dialect) -> str:
    lines = [f"# The `{dialect.name}` dialect", ""]
    module_doc = inspect.getdoc(sys.modules[next(iter(dialect.ops.values())).__module__])
    lines += [module_doc or "", ""]
    for mnemonic, op_cls in dialect.ops.items():
        doc = inspect.getdoc(op_cls) or ""
        lines += [f"## `{dialect.name}.{mnemonic}`", "", doc, ""]
        lines.append(f"- operands: {_values(op_cls.operand_decls, Operand) or '-'}")
        if _values(op_cls.result_decls, Result) != "`result`":
            lines.append(f"- results: {_values(op_cls.result_decls, Result) or '-'}")
        lines.append(f"- element types: {', '.join(op_cls.element_types)}")
        if op_cls.attr_decls:
            attrs = []
            for decl in op_cls.attr_decls:
                default = "required" if decl.required else f"default `{decl.default}`"
                attrs.append(f"`{decl.name}` ({decl.kind.description}, {default})")
            lines.append(f"- attributes: {'; '.join(attrs)}")
        lines.append(f"- category: {_category(op_cls)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _pass_doc(argument: str, cls: type) -> str:
    """The documentation of a pass: its module's docstring, or that of the
    package the module belongs to where the package's starts with the pass's
    flag (a conversion written as a package of modules, one per kernel kind)."""
    name = cls.__module__
    while "." in name:
        doc = inspect.getdoc(sys.modules[name]) or ""
        if doc.startswith(f"--{argument}"):
            return doc
        name = name.rsplit(".", 1)[0]
    return inspect.getdoc(sys.modules[cls.__module__]) or ""


def pass_reference() -> str:
    lines = ["# Lamina passes", "",
             "Every pass runs from `lamina-opt` as `--NAME` or inside `-p 'builtin.module(...)'`,",
             "and from Python through `lamina.pass_registry.get_pass(NAME, OPTIONS)`.", ""]
    for argument, cls in all_passes().items():
        lines += [f"## `--{argument}`", "", _pass_doc(argument, cls), ""]
        lines.append(f"Runs on: `{cls.anchor}`.")
        if cls.options():
            lines += ["", "Options:", ""]
            for field in cls.options():
                lines.append(f"- `{field.name.replace('_', '-')}` (default `{field.default}`)")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def documents(root: str) -> dict[str, str]:
    docs = {os.path.join(root, "docs", "passes.md"): pass_reference()}
    for dialect in builtin_dialects():
        docs[os.path.join(root, "docs", "dialects", f"{dialect.name}.md")] = dialect_reference(dialect)
    return docs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamina.docgen")
    parser.add_argument("--check", action="store_true", help="fail if docs/ is out of date")
    parser.add_argument("--root", default=os.getcwd(), help="the repository root")
    args = parser.parse_args(argv)
    stale = []
    for path, text in documents(args.root).items():
        current = open(path).read() if os.path.exists(path) else None
        if current != text:
            stale.append(path)
            if not args.check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
    if args.check and stale:
        print("out of date (run `python -m lamina.docgen`): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
