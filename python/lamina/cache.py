"""Lamina's on-disk caches: compiled programs, so that a second
`lamina.compile` of the same program for the same target loads in
milliseconds, and the schedules `--tune` chose (lamina.tuning).

    f = lamina.compile("model.mlir")      # compiled, then cached
    f = lamina.compile("model.mlir")      # loaded from the cache

Where: `$LAMINA_CACHE_DIR`, else `$XDG_CACHE_HOME/lamina`, else
`~/.cache/lamina`; `LAMINA_CACHE=0` turns both caches off.

A compiled program is the object file of the JIT that compiled it
(`ExecutionEngine.dump_to_object_file`), linked by the system `cc` into a
shared library (with the runtime libraries it calls: MLIR's runner
utilities, the OpenMP runtime) and loaded with local symbols, as the JIT's
runtime libraries are (lamina.runtime); the entry is called through the
same `_mlir_ciface_` function. Its key is a hash of the module without
its locations (printed with its large dense constants elided, and a
digest of those constants' bytes, `constants_digest`), the entry, the target (triple, CPU, features, threads,
optimisation level), the pipeline's passes and options, the tuning
cache's entries, Lamina (its version and the sizes and times of its
sources) and the files of any code outside Lamina that defines dialects,
ops, passes or lowerings (plugins, a user's modules). Programs compiled
with pipeline observers (reports) or for distributed runs, and programs
compiled while such definitions come from code without a file (typed at
a prompt), are not cached.

The large constants the program reads as data (a model's weights, see
`lamina.runtime.bind_constant_globals`) are linked into the library's
read-only data by the assembler, so a cached program's weights are mapped
from the file when it loads, neither compiled nor copied.

Every entry is written to a temporary file and renamed into place, the
library before its record (`KEY.json`, with the library's size and
modification time, checked instead of a digest so that loading a model of
hundreds of megabytes does not read them all): a reader sees whole entries
or none. An entry whose record is unreadable or whose library is not the
one it records or does not load is ignored and replaced. Beyond `LIMIT_BYTES` of programs, the least recently used go.
"""

from __future__ import annotations

import _ctypes
import contextlib
import ctypes
import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Callable, Sequence

from mlir import ir

from lamina.parsing import parse
from lamina.runtime import ArrayFunction, CompiledFunction, entry_signature

FORMAT = 3
LARGE_ELEMENTS = 64
"""Dense constants of more elements than this enter a program's key by a
digest of their bytes rather than as printed text (`constants_digest`)."""
LIMIT_BYTES = 1 << 30
"""Compiled programs beyond this total size are removed, least recently
used first, down to three quarters of it."""


_suspended = 0


@contextlib.contextmanager
def suspended():
    """Inside, nothing is read from or written to the caches."""
    global _suspended
    _suspended += 1
    try:
        yield
    finally:
        _suspended -= 1


def cache_dir() -> str | None:
    """The cache directory, or None when `LAMINA_CACHE=0` turns caching off."""
    if _suspended:
        return None
    if os.environ.get("LAMINA_CACHE", "1").strip().lower() in ("0", "off", "false", "no"):
        return None
    explicit = os.environ.get("LAMINA_CACHE_DIR", "").strip()
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.expanduser("~/.cache")
    return os.path.join(base, "lamina")


@functools.lru_cache(maxsize=None)
def package_version() -> str:
    """Lamina's package version."""
    import importlib.metadata
    try:
        return importlib.metadata.version("lamina")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@functools.lru_cache(maxsize=None)
def _source_roots() -> tuple[str, ...]:
    """The directories of Lamina's packages."""
    import lamina
    import lamina.dialects
    import lamina.lowering
    import lamina.passes
    return tuple(sorted({os.path.realpath(p) for package in (lamina, lamina.dialects,
                                                             lamina.lowering, lamina.passes)
                         for p in package.__path__}))


@functools.lru_cache(maxsize=None)
def lamina_version() -> str:
    """Lamina's package version and a digest of its sources' paths, sizes
    and modification times, so that a changed compiler never loads what an
    earlier one cached."""
    digest = hashlib.sha256(package_version().encode())
    for root in _source_roots():
        for directory, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    stat = os.stat(os.path.join(directory, name))
                    digest.update(f"{directory}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n"
                                  .encode())
    return f"{package_version()}+{digest.hexdigest()[:16]}"


def user_definitions() -> str | None:
    """The files, with their sizes and times, of the code outside Lamina
    that defines dialects, ops, passes or lowerings (a plugin, a user's
    module); None when some of it has no file (typed at a prompt), so
    that what it compiles cannot be cached."""
    from lamina.dialects.opdef import registered_dialects
    from lamina.lowering.registry import REGISTRIES
    from lamina.pass_registry import REGISTRY
    definitions = list(REGISTRY.values())
    # The lowerings of nn ops by class (nn->linalg, nn->hw), then the other
    # lowering tables of the modules loaded so far (one not loaded has no
    # user's entries).
    for lowerings in REGISTRIES.values():
        definitions += list(lowerings.functions.values())
    for name in ("nn_to_linalg", "hw_to_loops", "hw_to_nvgpu"):
        lowering = sys.modules.get(f"lamina.lowering.{name}")
        for table in ("LOWERINGS", "SCALAR_BODIES"):
            definitions += list(getattr(lowering, table, {}).values())
    for dialect in registered_dialects():
        definitions += [dialect] + list(dialect.ops.values()) + list(dialect.types.values())
    roots = tuple(root + os.sep for root in _source_roots())
    files = set()
    for module_name in {getattr(d, "__module__", None) for d in definitions}:
        path = getattr(sys.modules.get(module_name), "__file__", None)
        if path is None:
            return None
        path = os.path.realpath(path)
        if not path.startswith(roots):
            files.add(path)
    lines = []
    for path in sorted(files):
        try:
            stat = os.stat(path)
        except OSError:
            return None
        lines.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(lines)


def _tuning_state(directory: str) -> str:
    """The names and times of the tuning cache's entries: a compiled
    program depends on the schedules tuned so far."""
    try:
        entries = sorted((e.name, e.stat().st_mtime_ns)
                         for e in os.scandir(os.path.join(directory, "tuning")))
    except OSError:
        return ""
    return "\n".join(f"{name}:{mtime}" for name, mtime in entries)


def write_atomically(path: str, data: bytes) -> None:
    """Writes `path` through a temporary file in its directory and a rename."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


# ---------------------------------------------------------------------------
# Compiled programs.


def program_key(module: ir.Module, entry: str | None, target_description: str,
                pipeline_text: str, directory: str) -> str | None:
    """The key of a compiled program (see the module docstring); None when
    it cannot be cached (see `user_definitions`)."""
    definitions = user_definitions()
    if definitions is None:
        return None
    text = module.operation.get_asm(enable_debug_info=False, print_generic_op_form=True,
                                    large_elements_limit=LARGE_ELEMENTS)
    digest = hashlib.sha256()
    for part in (f"format {FORMAT}", lamina_version(), target_description, f"entry {entry}",
                 pipeline_text, definitions, _tuning_state(directory), text,
                 constants_digest(module)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _large_elements(attribute: ir.Attribute, found: list) -> None:
    """Appends to `found` the dense elements attributes in `attribute`
    (itself, or inside arrays and dictionaries) that the printer elides."""
    if isinstance(attribute, ir.DenseElementsAttr):
        if not attribute.is_splat and len(attribute) > LARGE_ELEMENTS:
            found.append(attribute)
    elif isinstance(attribute, ir.ArrayAttr):
        for element in attribute:
            _large_elements(element, found)
    elif isinstance(attribute, ir.DictAttr):
        for index in range(len(attribute)):
            _large_elements(attribute[index].attr, found)


def constants_digest(module: ir.Module) -> str:
    """A digest of the bytes of the module's large dense constants (those
    that `LARGE_ELEMENTS` keeps out of the printed key), in the order of
    their ops, hashed straight from their buffers: a model's weights are
    never printed as text to be hashed. The constants are hashed on two
    threads (hashlib releases the GIL)."""
    found: list[ir.DenseElementsAttr] = []

    def visit(op):
        attributes = op.attributes
        for index in range(len(attributes)):
            _large_elements(attributes[index].attr, found)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if not found:
        return ""

    def digest(attribute: ir.DenseElementsAttr) -> bytes:
        try:
            data = memoryview(attribute)
        except (TypeError, ValueError, RuntimeError, BufferError):
            data = str(attribute).encode()  # an element type without a buffer format
        return str(attribute.type).encode() + b"\0" + hashlib.sha256(data).digest()

    if len(found) == 1:
        digests = [digest(found[0])]
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=2) as pool:
            digests = list(pool.map(digest, found))
    return hashlib.sha256(b"".join(digests)).hexdigest()


class LoadedLibrary:
    """A cached program's shared library, loaded with local symbols and
    unloaded with its last function; like the ExecutionEngine it stands in
    for, `raw_lookup(NAME)` is the address of the packed wrapper
    `_mlir_NAME` (one array of argument pointers), 0 when there is none."""

    def __init__(self, path: str):
        self.path = path
        self._library = ctypes.CDLL(path, mode=os.RTLD_LOCAL | os.RTLD_NOW)

    def raw_lookup(self, name: str) -> int:
        try:
            return ctypes.cast(getattr(self._library, "_mlir_" + name), ctypes.c_void_p).value
        except AttributeError:
            return 0

    def __del__(self):
        library = getattr(self, "_library", None)
        if library is not None:
            _ctypes.dlclose(library._handle)


def _library_stamp(path: str) -> dict:
    """What identifies a library file as written: its size and time."""
    stat = os.stat(path)
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def load_program(directory: str, key: str, module: ir.Module, entry: str | None,
                 start: float) -> CompiledFunction | None:
    """The cached program `key`, or None when there is none or it is
    unusable (an unreadable record, a library that is not the one it
    recorded or does not load)."""
    record_path = os.path.join(directory, "programs", key + ".json")
    library_path = os.path.join(directory, "programs", key + ".so")
    try:
        with open(record_path, "rb") as file:
            record = json.loads(file.read())
        if _library_stamp(library_path) != record["library"]:
            return None
        name, inputs, results = entry_signature(module, entry)
        if record["entry"] != name:
            return None
        library = LoadedLibrary(library_path)
        if not library.raw_lookup("_mlir_ciface_" + name):
            return None
        with contextlib.suppress(OSError):
            os.utime(record_path)  # used now (see `evict`)
        return CompiledFunction(library, name, inputs, results, None, time.perf_counter() - start)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _data_section(work: str, constants: Sequence) -> str:
    """An assembly file defining the large constants a program reads as
    data (`lamina.runtime.bind_constant_globals`) in the library's
    read-only data, their bytes included from a file by the assembler
    (not compiled by LLVM)."""
    data_path = os.path.join(work, "constants.bin")
    lines = ['.section .rodata.lamina_constants,"a",@progbits']
    offset = 0
    with open(data_path, "wb") as data:
        for constant in constants:
            size = constant.array.nbytes
            data.write(memoryview(constant.array).cast("B"))
            lines += [f".globl {constant.symbol}", f".hidden {constant.symbol}",
                      f".type {constant.symbol}, @object", f".size {constant.symbol}, {size}",
                      f".balign {constant.alignment}", f"{constant.symbol}:",
                      f'.incbin "{data_path}", {offset}, {size}']
            offset += size
    assembly = os.path.join(work, "constants.s")
    with open(assembly, "w") as file:
        file.write("\n".join(lines) + "\n")
    return assembly


def store_program(directory: str, key: str, engine, name: str,
                  libraries: Sequence[str], constants: Sequence = ()) -> bool:
    """Links the JIT's object file (with the large constants it reads as
    data) into a shared library and records it as `key`; False (nothing
    stored) when the object cannot be dumped or linked."""
    programs = os.path.join(directory, "programs")
    try:
        os.makedirs(programs, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=programs, prefix=".tmp-") as work:
            obj = os.path.join(work, "program.o")
            library = os.path.join(work, "program.so")
            engine.dump_to_object_file(obj)
            sources = [obj] + ([_data_section(work, constants)] if constants else [])
            # The JIT's code (large code model, absolute relocations) needs
            # text relocations in a shared library; only the runtime
            # libraries it calls become its dependencies.
            rpaths = sorted({os.path.dirname(path) for path in libraries})
            command = ["cc", "-shared", "-o", library, *sources, "-Wl,-z,notext",
                       "-Wl,--as-needed", *libraries, "-lm",
                       *[f"-Wl,-rpath,{d}" for d in rpaths]]
            linked = subprocess.run(command, capture_output=True)
            if linked.returncode != 0 or not os.path.exists(library):
                return False
            final = os.path.join(programs, key + ".so")
            os.replace(library, final)
            record = {"entry": name, "library": _library_stamp(final),
                      "lamina": lamina_version()}
            write_atomically(os.path.join(programs, key + ".json"), json.dumps(record).encode())
        evict(programs)
        return True
    except (OSError, RuntimeError):
        return False


def evict(programs: str, limit: int = LIMIT_BYTES) -> None:
    """Removes the least recently used programs (by their records' times)
    while they take more than `limit` bytes, down to three quarters of it."""
    entries = {}
    total = 0
    for entry in os.scandir(programs):
        key, _, suffix = entry.name.partition(".")
        if suffix not in ("so", "json") or not key:
            continue
        stat = entry.stat()
        total += stat.st_size
        used, size = entries.get(key, (0, 0))
        entries[key] = (max(used, stat.st_mtime_ns if suffix == "json" else 0),
                        size + stat.st_size)
    if total <= limit:
        return
    for key, (_, size) in sorted(entries.items(), key=lambda item: item[1][0]):
        for suffix in (".json", ".so"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(programs, key + suffix))
        total -= size
        if total <= limit * 3 // 4:
            break


def cached_compile(module: ir.Module, entry: str | None, target_description: str,
                   pipeline, libraries: Sequence[str],
                   compile: Callable[[], ArrayFunction]) -> ArrayFunction:
    """`compile()`'s function, loaded from the cache when it holds this
    program, else compiled and stored."""
    start = time.perf_counter()
    directory = cache_dir()
    if directory is None or pipeline.observers:
        return compile()
    if isinstance(module, str):
        module = parse(module)
    key = program_key(module, entry, target_description, str(pipeline), directory)
    if key is None:
        return compile()
    loaded = load_program(directory, key, module, entry, start)
    if loaded is not None:
        return loaded
    function = compile()
    engine = getattr(function, "engine", None)
    if engine is not None:
        store_program(directory, key, engine, function.name, libraries,
                      getattr(function, "constants", ()))
    return function
