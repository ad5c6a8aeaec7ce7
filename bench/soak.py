"""Soak test of Lamina's tools on byte-mutated programs: the promise that bad
input gets a located error, exit 1, no traceback, no signal and no touched
output, checked on thousands of inputs no one wrote by hand.

    python bench/soak.py --count 10000 --jobs 2            # writes bench/soak-results.md
    python bench/soak.py --count 200 --out /tmp/soak.md     # a short run

The valid programs mutated are the examples, the tools' test inputs and
generated nn programs (`lamina.fuzz`), so that mutations reach the parser,
the verifier, every stage of the CPU pipeline and the JIT. Each mutation
goes to lamina-opt (`--nn-canonicalize --canonicalize`), lamina-compile
(`--emit=llvm`) and lamina-run (`--random --check`), each run in a forked
child over an existing output file (`lamina.fuzz_mutate`), with a limit
of 10 s. The report counts exits per tool and lists every run that broke
a rule, with its mutated input saved next to the report. A section of the
report that begins with "## Differential fuzzing" (the record of a
lamina-fuzz campaign) is kept when the report is written again.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUZZ_RECORD = "## Differential fuzzing"


def seed_inputs(generated: int) -> list[tuple[str, bytes]]:
    """The valid programs that get mutated."""
    from lamina.fuzz import generate_program
    inputs = []
    for path in sorted(ROOT.glob("examples/*.mlir")) + [
            ROOT / "test/Tools/Inputs" / name for name in
            ("add.mlir", "double-neg.mlir", "long-sum.mlir")]:
        inputs.append((path.name, path.read_bytes()))
    for seed in range(generated):
        inputs.append((f"generated-{seed}.mlir", generate_program(seed).text().encode()))
    return inputs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10000, help="mutations (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="mutation seed")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per tool run")
    parser.add_argument("--out", default=str(ROOT / "bench" / "soak-results.md"),
                        help="the report (failing inputs go to a directory next to it)")
    options = parser.parse_args()

    from lamina.fuzz_mutate import TOOLS, check_tool_run, mutate, run_tools
    from lamina.progress import note, progress_bar
    from lamina.fuzz_sandbox import warm_up
    warm_up()
    rng = random.Random(options.seed)
    sources = seed_inputs(40)
    inputs = []
    for number in range(options.count):
        name, data = rng.choice(sources)
        inputs.append((f"m{number}-{name}", mutate(data, rng)))
    by_name = dict(inputs)

    start = time.monotonic()
    exits: dict[str, Counter] = defaultdict(Counter)
    slowest: dict[str, float] = defaultdict(float)
    failures = []
    runs = 0
    for run in progress_bar(run_tools(inputs, jobs=options.jobs, timeout=options.timeout),
                            total=len(inputs) * len(TOOLS), description="soak", unit="run"):
        runs += 1
        outcome = ("timeout" if run.timed_out else f"signal {run.signal}" if run.signal
                   else f"exit {run.exit_code}")
        exits[run.tool][outcome] += 1
        slowest[run.tool] = max(slowest[run.tool], run.seconds)
        problems = check_tool_run(run)
        if problems:
            failures.append((run, problems))
            note(f"{run.tool} {os.path.basename(run.input_path)}: {'; '.join(problems)}")
        if runs % 1500 == 0:
            note(f"{runs} runs, {len(failures)} failures, {time.monotonic() - start:.0f} s")
    seconds = time.monotonic() - start

    out = Path(options.out)
    failed_dir = out.with_name(out.stem + "-failures")
    if failures:
        failed_dir.mkdir(parents=True, exist_ok=True)
        for run, _ in failures:
            name = os.path.basename(run.input_path)
            (failed_dir / name).write_bytes(by_name[name])
    rules = Counter(problem.split(":")[0].split(" (")[0] for _, problems in failures
                    for problem in problems)
    lines = [
        "# Soak: Lamina's tools on byte-mutated programs",
        "",
        f"Command: `python bench/soak.py --count {options.count} --seed {options.seed} "
        f"--jobs {options.jobs} --timeout {options.timeout:g}`",
        f"on {platform.machine()} with {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}; "
        f"{runs} tool runs on {options.count} mutations of {len(sources)} valid programs in "
        f"{seconds:.0f} s.",
        "",
        "Every run must exit with 0 or 1 within the limit, never by a signal; on exit 1 print "
        "only `FILE:LINE:COL: error:`, `TOOL: error:` or note lines, no traceback and no "
        "internal error, and leave its existing output file as it was.",
        "",
        "| tool | options | runs | exit 0 | exit 1 | signals | timeouts | slowest |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for tool, options_used in TOOLS.items():
        counts = exits[tool]
        signals = sum(v for k, v in counts.items() if k.startswith("signal"))
        lines.append(f"| {tool} | `{' '.join(options_used)}` | {sum(counts.values())} | "
                     f"{counts['exit 0']} | {counts['exit 1']} | {signals} | "
                     f"{counts['timeout']} | {slowest[tool]:.1f} s |")
    lines += ["", f"Runs that broke a rule: {len(failures)}."]
    for rule, number in rules.most_common():
        lines.append(f"* {rule}: {number}")
    if failures:
        lines += ["", f"Failing inputs are in `{failed_dir.name}/`; the first ones:", ""]
        for run, problems in failures[:40]:
            lines.append(f"* {run.tool} `{os.path.basename(run.input_path)}`: "
                         f"{'; '.join(problems)[:300]}")
    # The record of the differential fuzzing campaign, kept in the same file.
    kept = ""
    if out.exists() and FUZZ_RECORD in out.read_text():
        kept = "\n" + FUZZ_RECORD + out.read_text().split(FUZZ_RECORD, 1)[1]
    out.write_text("\n".join(lines) + "\n" + kept)
    print(f"{runs} runs, {len(failures)} failures in {seconds:.0f} s; report: {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
