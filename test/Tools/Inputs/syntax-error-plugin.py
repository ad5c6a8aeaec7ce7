"""A plugin with a syntax error at line 4."""


def unfinished(:
    pass
