"""lamina-fuzz: differential fuzzing of Lamina with generated nn programs,
and mutation fuzzing of its tools.

    lamina-fuzz --seed 1 --count 300 --jobs 2
    lamina-fuzz --seed 1 --time 600 --jobs 2 --out findings/
    lamina-fuzz --program 1000025                    # one program again
    lamina-fuzz --program 1000025 --print            # ... its text
    lamina-fuzz --mutate test/Tools/Inputs/*.mlir --count 1000 --jobs 2
    lamina-fuzz --list-configs

Each program (`lamina.fuzz`) runs in every configuration that applies to
it (`--configs`, default all; `lamina.fuzz_check`) in a child process of
its own, so a crash or a hang is a finding like a wrong result. The report
counts programs, mismatches, errors, crashes and timeouts, and the programs a
configuration does not cover yet (`cuda-emulate` on a program with an op the
GPU targets do not lower), by reason, which are not findings; each distinct
finding is reduced to a small program written to `--out` as a `.mlir`
test case (`--no-reduce` writes it as found). The exit code is 1 when
anything was found.

With `--mutate`, the given files are mutated byte by byte (`--count`
mutations) and every tool runs on each mutation; a run that dies, hangs,
prints a traceback or an unlocated line, or touches its output file on
failure is reported, and the mutation is written to `--out`.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter

from lamina.diagnostics import UsageError, run_tool
from lamina.plugins import add_plugin_arguments
from lamina.progress import note, progress_bar

KINDS = {"mismatch": "mismatches", "error": "errors", "crash": "crashes", "timeout": "timeouts",
         "invalid": "invalid", "unsupported": "unsupported"}


def _argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lamina-fuzz", allow_abbrev=False,
        description="Differential fuzzing of Lamina with generated nn programs, and mutation "
                    "fuzzing of its tools.")
    parser.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    parser.add_argument("--count", type=int, default=None,
                        help="programs (or mutations) to run (default 100 unless --time)")
    parser.add_argument("--time", type=float, default=None, metavar="SECONDS",
                        help="stop starting new programs after this many seconds")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="child processes at a time")
    parser.add_argument("--first", type=int, default=0, help="index of the first program")
    parser.add_argument("--program", type=int, default=None, metavar="SEED",
                        help="check only the program of this seed (as findings name it)")
    parser.add_argument("--print", dest="print_program", action="store_true",
                        help="with --program: print the program instead of checking it")
    parser.add_argument("--configs", default=None,
                        help="comma-separated configurations (default: all, see --list-configs)")
    parser.add_argument("--list-configs", action="store_true", help="list the configurations")
    parser.add_argument("--max-ops", type=int, default=8, help="ops per program, at most")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds a program (or a tool run) may take")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="write reduced findings (or failing mutations) here")
    parser.add_argument("--no-reduce", action="store_true", help="write findings unreduced")
    parser.add_argument("--mutate", nargs="+", default=None, metavar="FILE",
                        help="mutation fuzzing of the tools over these valid files")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only the summary")
    add_plugin_arguments(parser)
    return parser


def _check_options(options) -> None:
    for name in ("count", "jobs", "first", "max_ops"):
        value = getattr(options, name)
        if value is not None and value < (1 if name in ("jobs", "max_ops") else 0):
            raise UsageError(f"--{name.replace('_', '-')} must be "
                             f"{'positive' if name in ('jobs', 'max_ops') else 'non-negative'}, "
                             f"got {value}")
    if options.seed < 0:
        raise UsageError(f"--seed must be non-negative, got {options.seed}")
    for name in ("time", "timeout"):
        value = getattr(options, name)
        if value is not None and not value > 0:
            raise UsageError(f"--{name} must be positive, got {value}")
    if options.out is not None and os.path.exists(options.out) and not os.path.isdir(options.out):
        raise UsageError(f"--out '{options.out}' is not a directory")


def main(argv: list[str] | None = None) -> int:
    parser = _argument_parser()
    parser.error = lambda message: (_ for _ in ()).throw(UsageError(message))
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    _check_options(options)
    # Before the children fork: they inherit the plugins' ops, which the
    # generator draws like the built-in ones. A plugin is first loaded in a
    # child, held to --timeout like every program.
    from lamina.fuzz_sandbox import load_plugins_in_time
    load_plugins_in_time(options.plugins, options.timeout)
    from lamina.fuzz_check import configurations
    if options.list_configs:
        for configuration in configurations():
            every = f" (one program in {configuration.every})" if configuration.every > 1 else ""
            print(f"{configuration.name:<16} {configuration.description}{every}")
        return 0
    try:
        chosen = configurations(options.configs.split(",") if options.configs else None)
    except ValueError as error:
        raise UsageError(str(error)) from None
    say = (lambda text: None) if options.quiet else note
    if options.mutate:
        return _mutate(options, say)
    if options.program is not None:
        return _one_program(options, chosen, say)
    return _campaign(options, chosen, say)


def _one_program(options, chosen, say) -> int:
    from lamina.fuzz import generate_program
    from lamina.fuzz_campaign import check_in_child
    from lamina.fuzz_sandbox import warm_up
    warm_up()
    program = generate_program(options.program, max_ops=options.max_ops)
    if options.print_program:
        plugins = "".join(f" --load-plugin={path}" for path in options.plugins)
        sys.stdout.write(program.text(
            header=f"// lamina-fuzz --program {options.program}{plugins}\n"))
        return 0
    verdicts = check_in_child(program, 0, [_every(c) for c in chosen], options.timeout)
    for verdict in verdicts:
        print(f"program {options.program}: {verdict}")
    return 1 if any(v.failed for v in verdicts) else 0


def _every(configuration):
    from dataclasses import replace
    return replace(configuration, every=1)


def _campaign(options, chosen, say) -> int:
    from lamina.fuzz_campaign import run_campaign
    count = options.count if options.count is not None or options.time else 100
    result = run_campaign(options.seed, count, options.time, options.jobs, chosen, options.out,
                          not options.no_reduce, options.timeout, options.max_ops, options.first,
                          progress=say)
    counts = ", ".join(f"{result.counts.get(kind, 0)} {plural}" for kind, plural in KINDS.items())
    print(f"lamina-fuzz: {result.programs} programs in {result.seconds:.1f} s (seed "
          f"{options.seed}, jobs {options.jobs}, configurations "
          f"{', '.join(c.name for c in chosen)}): {counts}")
    for finding in result.findings:
        print(f"  program {finding.index} (--program {finding.program_seed}): "
              f"{str(finding.verdict).splitlines()[0][:300]}")
    for (configuration, reason), programs in result.unsupported.most_common():
        print(f"  unsupported in {configuration}: {reason} ({programs} programs)")
    for path in result.cases:
        print(f"  written: {path}")
    return 1 if result.failed else 0


def _mutate(options, say) -> int:
    from lamina.fuzz_mutate import TOOLS, check_tool_run, mutate, run_tools
    from lamina.fuzz_sandbox import warm_up
    warm_up()
    sources = []
    for path in options.mutate:
        try:
            with open(path, "rb") as f:
                sources.append((os.path.basename(path), f.read()))
        except OSError as error:
            raise UsageError(f"cannot open input file '{path}': {error.strerror}") from None
    rng = random.Random(options.seed)
    count = options.count if options.count is not None else 100
    inputs = []
    for number in range(count):
        name, data = rng.choice(sources)
        inputs.append((f"m{number}-{name}", mutate(data, rng)))
    by_name = dict(inputs)
    start = time.monotonic()
    runs, exits, failures = 0, Counter(), []
    slowest = 0.0
    for run in progress_bar(run_tools(inputs, jobs=options.jobs,
                                      timeout=min(options.timeout, 10.0)),
                            total=count * len(TOOLS), description="mutations", unit="run"):
        runs += 1
        slowest = max(slowest, run.seconds)
        exits[f"{run.tool} exit {run.exit_code}" if run.signal is None
              else f"{run.tool} signal {run.signal}"] += 1
        problems = check_tool_run(run)
        if problems:
            failures.append((run, problems))
            say(f"{run.tool} {os.path.basename(run.input_path)}: {'; '.join(problems)}")
        if runs % 300 == 0:
            say(f"{runs} runs, {len(failures)} failures, {time.monotonic() - start:.0f} s")
    if options.out and failures:
        os.makedirs(options.out, exist_ok=True)
        for run, _ in failures:
            name = os.path.basename(run.input_path)
            with open(os.path.join(options.out, name), "wb") as f:
                f.write(by_name[name])
    print(f"lamina-fuzz --mutate: {count} mutations, {runs} tool runs in "
          f"{time.monotonic() - start:.1f} s (slowest {slowest:.1f} s): {len(failures)} failures; "
          + ", ".join(f"{key}: {value}" for key, value in sorted(exits.items())))
    return 1 if failures else 0


def entry() -> None:
    sys.exit(run_tool(main, prog="lamina-fuzz"))


if __name__ == "__main__":
    entry()
