"""A plugin whose pass the registry refuses (no flag): the error is at the
decorator, line 9."""

from dataclasses import dataclass

from lamina.pass_registry import Pass, register_pass


@register_pass
@dataclass
class NoFlag(Pass):
    """A pass without an argument."""
