"""A plugin that fails while it loads, in a function it calls on line 10:
the error is at the raise, line 6."""


def register():
    raise RuntimeError("cannot register the frobnicate pass")


if True:
    register()
