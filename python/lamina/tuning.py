"""Tuning: a time-boxed search for faster schedules, measured on this
machine, kept in a persistent cache that every later compile consults.

    f = lamina.compile("model.mlir", tune=30)      # lamina-compile/lamina-run --tune=30
    for group in f.tuning.groups:
        print(group.describe())

The schedule kinds (lamina.schedules) derive each fusion group's
schedules from a `CPUModel` (lamina.targets.cpu_model): cache sizes give
the contraction's cache tiles (kc, mc), the vector registers its register
tile (mr rows), `unroll` the vector length of loop nests, and the thread
count how finely the thread loop splits the work. Tuning varies these per group, keeps the variants whose
schedules differ, compiles the whole program with each (the other groups
at their best so far) and times it on random inputs (the shortest of
several calls: other processes only ever add time), each candidate right
beside the best program so far, since the machine's load changes. The
default schedule is the first candidate, and a variant replaces the best
only when it is more than `MARGIN` faster than it, so the default wins
ties; at the end the tuned program is timed once more beside the default
and its variants are dropped unless it is faster. A tuned program is thus
never slower than the default on the search's own measurements.
Candidates are tried round robin over the groups until the time is spent.

The chosen model of each group is stored as `tuning/KEY.json` in the cache
directory (lamina.cache), with the times of every candidate; KEY hashes
the group's linalg ops (without locations or tags), the default model
(vector width, registers, threads), the host CPU and its features, and
Lamina's version. The CPU pipeline looks every group up there just before
the `cpu-schedule` pass (`TunedChoices`, a step of the compile driver) and
writes the tuned fields of its model into the IR as a
`lamina.schedule_choice` on the group's ops, which the pass reads: a
default compile gets the tuned schedules, while the pass's output depends
on its input and options only. An unreadable entry is ignored.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field, replace

from mlir import ir

from lamina.cache import cache_dir, package_version, suspended, write_atomically
from lamina.schedules import group_schedules
from lamina.schedules.analysis import (FUSION_GROUP, SCHEDULE_CHOICE, SCHEDULE_TAG, Group,
                                       function_groups)
from lamina.targets.cpu_model import CPUModel

FORMAT = 2
MARGIN = 0.03
"""A candidate must beat the best so far by this fraction of its time."""


@dataclass
class Candidate:
    """One model tried for a group: the program's time with it, and the
    time of the best program so far, timed right after it."""

    model: CPUModel
    seconds: float
    best_seconds: float


@dataclass
class GroupTuning:
    """The search over one fusion group: its key, name and candidates (the
    default first) and the chosen model."""

    key: str
    name: str
    default: CPUModel
    candidates: list[Candidate] = field(default_factory=list)
    chosen: CPUModel | None = None

    @property
    def default_seconds(self) -> float:
        return self.candidates[0].seconds

    def describe(self) -> str:
        chosen = next(c for c in self.candidates if c.model == self.chosen)
        changes = _changes(self.default, self.chosen)
        if not changes:
            return (f"{self.name}: {len(self.candidates)} candidate(s), chose the default: "
                    f"{chosen.seconds * 1e3:.3f} ms")
        return (f"{self.name}: {len(self.candidates)} candidate(s), chose {changes}: "
                f"{chosen.seconds * 1e3:.3f} ms (the best before it "
                f"{chosen.best_seconds * 1e3:.3f} ms)")


@dataclass
class TuningReport:
    """What `tune` measured and chose (`choices`: group key -> model, for
    `applied`). `best_seconds` and `default_seconds` are the tuned and the
    default program timed side by side at the end (both the default's first
    time when no variant won the search); `dropped` says that variants won
    the search but not that last comparison."""

    seconds_spent: float
    default_seconds: float
    best_seconds: float
    groups: list[GroupTuning]
    choices: dict[str, CPUModel] = field(default_factory=dict)
    dropped: bool = False

    def describe(self) -> str:
        lines = [f"tuned {len(self.groups)} group(s) in {self.seconds_spent:.1f} s: "
                 f"{self.best_seconds * 1e3:.3f} ms, default {self.default_seconds * 1e3:.3f} ms "
                 f"({self.default_seconds / self.best_seconds:.2f}x)"]
        if self.dropped:
            lines.append("  (the variants that won the search were not faster than the default "
                         "when timed again, and are dropped)")
        return "\n".join(lines + ["  " + g.describe() for g in self.groups])


def _changes(default: CPUModel, model: CPUModel | None) -> str:
    if model is None:
        return ""
    return ", ".join(f"{f.name}={getattr(model, f.name)}" for f in dataclasses.fields(model)
                     if getattr(model, f.name) != getattr(default, f.name))


# ---------------------------------------------------------------------------
# Keys and the cache.

# Names that depend on where the group is, not on what it computes.
_NAMES = re.compile(r'\s*(%s|%s) = "[^"]*",?'
                    % (re.escape(SCHEDULE_TAG), re.escape(FUSION_GROUP)))


def group_key(group: Group, model: CPUModel) -> str:
    """The tuning cache's key of `group` scheduled from `model`."""
    from lamina.targets.host import detect_host
    host = detect_host()
    digest = hashlib.sha256(f"format {FORMAT}\n{package_version()}\n{host.cpu}\n"
                            f"{','.join(host.features)}\n{model}\n".encode())
    results = {}
    for index, linalg in enumerate(group.ops):
        for number, result in enumerate(linalg.op.results):
            results[hash(result)] = (index, number)
    for index, linalg in enumerate(group.ops):
        text = linalg.op.get_asm(print_generic_op_form=True, use_local_scope=True,
                                 enable_debug_info=False)
        digest.update(_NAMES.sub("", text).encode())
        # Which member produced each operand (the printed text, in its own
        # scope, does not say).
        producers = [results.get(hash(operand)) for operand in linalg.op.operands]
        digest.update(f"{index} {producers}\n".encode())
    return digest.hexdigest()


def _entry_path(directory: str, key: str) -> str:
    return os.path.join(directory, "tuning", key + ".json")


def load_choice(key: str) -> CPUModel | None:
    """The tuned model of the group `key`, if the cache holds a usable one."""
    directory = cache_dir()
    if directory is None:
        return None
    try:
        with open(_entry_path(directory, key), "rb") as file:
            record = json.loads(file.read())
        fields = record["model"]
        return CPUModel(**{name: tuple(value) if isinstance(value, list) else value
                           for name, value in fields.items()})
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store_choice(tuning: GroupTuning) -> None:
    """Records the model chosen for a group, with every candidate's times."""
    directory = cache_dir()
    if directory is None:
        return
    record = {"name": tuning.name, "model": dataclasses.asdict(tuning.chosen),
              "default": dataclasses.asdict(tuning.default),
              "candidates": [{"model": dataclasses.asdict(c.model), "seconds": c.seconds,
                              "best_seconds": c.best_seconds} for c in tuning.candidates]}
    try:
        write_atomically(_entry_path(directory, tuning.key), json.dumps(record, indent=1).encode())
    except OSError:
        pass


# ---------------------------------------------------------------------------
# The tuned choices, written into the IR before the schedule pass.


@dataclass
class _Session:
    """Models chosen for groups by key, and (when recording) the groups met."""

    choices: dict[str, CPUModel]
    recorded: dict[str, GroupTuning] | None = None
    variants: dict[str, list[CPUModel]] = field(default_factory=dict)


_session: _Session | None = None


@contextlib.contextmanager
def applied(choices: dict[str, CPUModel], session: _Session | None = None):
    """Schedules compiled inside use `choices` (group key -> model), or
    those of `session`, and the default model for the other groups; the
    tuning cache is not read."""
    global _session
    previous = _session
    _session = session or _Session(dict(choices))
    try:
        yield _session
    finally:
        _session = previous


@contextlib.contextmanager
def recording():
    """Inside, compiles use the default schedules, and the session yielded
    records each group met (`recorded`: key -> GroupTuning) and the
    variants worth trying for it (`variants`: key -> models)."""
    with applied({}, _Session({}, recorded={})) as session:
        yield session


def tuned_model(group: Group, model: CPUModel) -> CPUModel:
    """The model of `group`: the one being tried or chosen by a search in
    progress, else the tuning cache's, else `model`."""
    key = group_key(group, model)
    if _session is not None:
        if _session.recorded is not None and key not in _session.recorded:
            _session.recorded[key] = GroupTuning(key, group.name, model)
            _session.variants[key] = variants(group, model)
        return _session.choices.get(key, model)
    return load_choice(key) or model


def choice_attribute(chosen: CPUModel, model: CPUModel, context: ir.Context) -> ir.Attribute | None:
    """The `lamina.schedule_choice` of a group whose model is `chosen`
    where the schedule pass's is `model`: the fields that differ; None
    when none does."""
    changed = {f.name: ir.IntegerAttr.get(ir.IntegerType.get_signless(64, context),
                                          getattr(chosen, f.name))
               for f in dataclasses.fields(chosen) if getattr(chosen, f.name) != getattr(model, f.name)}
    return ir.DictAttr.get(changed, context) if changed else None


class TunedChoices:
    """A step of the compile driver before `cpu-schedule` (not a pass: what
    it writes depends on the tuning cache and on the search in progress):
    each fusion group whose tuned model differs from `model`, the schedule
    pass's, gets those fields as a `lamina.schedule_choice` on its ops,
    which the pass reads."""

    argument = "lamina-tuned-choices"

    def __init__(self, model: CPUModel):
        self.model = model

    def __str__(self) -> str:
        return self.argument

    def __call__(self, module: ir.Module) -> None:
        operation = module.operation if isinstance(module, ir.Module) else module
        for op in operation.regions[0].blocks[0].operations:
            op = op.operation
            if op.name != "func.func" or not op.regions[0].blocks:
                continue
            function = ir.StringAttr(op.attributes["sym_name"]).value
            for group in function_groups(op):
                group.name = f"{function}_{group.name}"
                choice = choice_attribute(tuned_model(group, self.model), self.model,
                                          operation.context)
                if choice is not None:
                    for linalg in group.ops:
                        linalg.op.attributes[SCHEDULE_CHOICE] = choice


def variants(group: Group, model: CPUModel) -> list[CPUModel]:
    """Models giving `group` schedules that differ from `model`'s and from
    each other's: halved and doubled cache sizes (the cache tiles), half
    the registers (a smaller register tile), other vector lengths, and a
    thread loop split two or four times finer."""
    candidates = [replace(model, l1_bytes=model.l1_bytes // 2),
                  replace(model, l1_bytes=model.l1_bytes * 2),
                  replace(model, l2_bytes=model.l2_bytes // 2),
                  replace(model, l2_bytes=model.l2_bytes * 2),
                  replace(model, vector_registers=model.vector_registers // 2)]
    candidates += [replace(model, unroll=u) for u in (1, 2, 8) if u != model.unroll]
    if model.threads > 1:
        candidates += [replace(model, threads=model.threads * 2),
                       replace(model, threads=model.threads * 4)]
    seen = {tuple(group_schedules(group, model))}
    distinct = []
    for candidate in candidates:
        try:
            schedules = tuple(group_schedules(group, candidate))
        except (ValueError, ZeroDivisionError):
            continue
        if schedules not in seen:
            seen.add(schedules)
            distinct.append(candidate)
    return distinct


# ---------------------------------------------------------------------------
# The search.


def measure(function, arrays, budget: float = 0.25, least: int = 5) -> float:
    """The shortest time of calls of `function` on `arrays` (after one call
    to warm up): at least `least` calls, more while within `budget` seconds."""
    function(*arrays)
    times = []
    start = time.perf_counter()
    while len(times) < least or (time.perf_counter() - start < budget and len(times) < 50):
        begin = time.perf_counter()
        function(*arrays)
        times.append(time.perf_counter() - begin)
    return min(times)


def tune(module, target, entry: str | None = None, seconds: float = 30.0, pipeline=None):
    """Searches faster schedules for the fusion groups of `module`'s entry
    on `target` (a CPU target, run on this machine) for about `seconds`,
    stores the choices in the tuning cache and returns the entry compiled
    with them; its `tuning` attribute is the `TuningReport`. Raises
    CompileError, and ValueError for a budget that is not positive."""
    from lamina.progress import progress_bar
    from lamina.reference import random_inputs

    if not seconds > 0:
        raise ValueError(f"the tuning budget must be a positive number of seconds, got {seconds}")
    if getattr(target, "kind", None) != "cpu":
        raise ValueError(f"tuning runs on the cpu target, not '{target.name}'")
    start = time.perf_counter()

    search_pipeline = None
    if pipeline is not None:
        search_pipeline = pipeline.copy()
        search_pipeline.observers = []

    def compile_with(session: _Session):
        with suspended(), applied({}, session):
            return target.compile(module, entry=entry, pipeline=search_pipeline)

    with recording() as session:
        function = compile_with(session)
    arrays = random_inputs(function.inputs)
    baseline = measure(function, arrays)
    groups = list(session.recorded.values())
    for tuning in groups:
        tuning.candidates.append(Candidate(tuning.default, baseline, baseline))
        tuning.chosen = tuning.default
    # Round robin over the groups, so that a short budget reaches each.
    plan = [(tuning, model) for position in range(max((len(v) for v in session.variants.values()),
                                                      default=0))
            for tuning in groups for model in session.variants[tuning.key][position:position + 1]]
    best_function = function
    choices: dict[str, CPUModel] = {}
    longest = time.perf_counter() - start
    with progress_bar(total=len(plan), description="tune", unit="candidate") as bar:
        for tuning, model in plan:
            if time.perf_counter() - start + longest > seconds:
                break
            began = time.perf_counter()
            trial = _Session({**choices, tuning.key: model})
            candidate = compile_with(trial)
            # Timed beside the best so far: the machine's load changes.
            elapsed = measure(candidate, arrays)
            best = measure(best_function, arrays)
            tuning.candidates.append(Candidate(model, elapsed, best))
            if elapsed < best * (1 - MARGIN):
                best_function = candidate
                choices[tuning.key] = model
                tuning.chosen = model
            longest = max(longest, time.perf_counter() - began)
            bar.update(1)
    final, dropped = (baseline, baseline), False
    if choices:
        # Confirmed against the default side by side, so that noise in one
        # measurement cannot make the tuned program the slower one.
        confirmed = measure(best_function, arrays)
        default = measure(function, arrays)
        final = (confirmed, default)
        if confirmed >= default:
            choices.clear()
            for tuning in groups:
                tuning.chosen = tuning.default
            final, dropped = (default, default), True
    for tuning in groups:
        store_choice(tuning)
    if choices or (pipeline is not None and pipeline.observers):
        with applied(choices):
            # Compiled as a default compile now would be (and cached as such).
            tuned = target.compile(module, entry=entry, pipeline=pipeline)
    else:
        tuned = function
    tuned.tuning = TuningReport(time.perf_counter() - start, final[1], final[0], groups,
                                dict(choices), dropped)
    return tuned


def budget(text: str) -> float:
    """The seconds of `--tune=SECONDS` (argparse type): a positive number."""
    import argparse
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got '{text}'")
    return seconds
