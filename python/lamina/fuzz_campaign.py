"""A fuzzing campaign: many generated programs, each checked in a child
process (`lamina.fuzz_sandbox`), findings reduced and written as test
cases. What `lamina-fuzz` runs.

    result = run_campaign(seed=1, count=300, jobs=2)
    result.programs, result.findings, result.cases

Program `i` of seed `S` is `generate_program(program_seed(S, i))`, so a
finding is reproduced alone with `lamina-fuzz --program P`.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

from lamina.fuzz import Program, generate_program
from lamina.fuzz_check import Configuration, Verdict, check_program, configurations
from lamina.fuzz_reduce import case_text, reduce_program, run_line
from lamina.fuzz_sandbox import (Outcome, exception_of, reports_of, result_of, run_children,
                                  warm_up)
from lamina.progress import progress_bar


def program_seed(seed: int, index: int) -> int:
    """The seed of program `index` of a campaign seeded with `seed`."""
    return seed * 1_000_000 + index


@dataclass
class Finding:
    """A failing program: its seed, where it stands in the campaign, and why."""

    program_seed: int
    index: int
    verdict: Verdict


@dataclass
class CampaignResult:
    programs: int = 0
    seconds: float = 0.0
    counts: Counter = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    # (configuration, reason) -> programs it does not cover yet
    unsupported: Counter = field(default_factory=Counter)

    @property
    def failed(self) -> bool:
        return bool(self.findings)


def verdicts_of(outcome: Outcome) -> list[Verdict]:
    """A child's verdicts; a child that died is a crash or a timeout in
    the configuration it had started."""
    started = [message[1] for message in reports_of(outcome)
               if isinstance(message, tuple) and message[0] == "start"]
    where = started[-1] if started else ""
    if outcome.timed_out:
        return [Verdict("timeout", where, outcome.describe())]
    if outcome.signal is not None:
        tail = _crash_summary(outcome.stderr_tail)
        return [Verdict("crash", where, f"{outcome.describe()}: {tail}")]
    verdicts = result_of(outcome)
    if verdicts is None:
        return [Verdict("error", where, exception_of(outcome) or outcome.describe())]
    return verdicts


def _crash_summary(stderr: str) -> str:
    """The line of a crash's stderr that says what went wrong."""
    text = stderr.split("PLEASE submit a bug report")[0].split("Stack dump:")[0]
    # A fault handler's report (Python's, under pytest) follows what the
    # process printed; only its first line says anything.
    text, fatal, fault = text.partition("Fatal Python error:")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if fatal and not lines:
        lines = [fatal + fault.splitlines()[0]]
    for line in lines:
        if "Assertion" in line or "UNREACHABLE" in line or "LLVM ERROR" in line:
            return re.sub(r"^\S+: ", "", line.strip())[:400]
    return lines[-1][:400] if lines else "(no output)"


def check_in_child(program: Program, index: int, chosen: Sequence[Configuration],
                   timeout: float) -> list[Verdict]:
    """`check_program` in a forked child; a crash or a timeout is a verdict."""
    outcome = next(run_children([(index, lambda report: check_program(
        program, index, chosen, report))], 1, timeout))
    return verdicts_of(outcome)


def run_campaign(seed: int, count: int | None = None, seconds: float | None = None,
                 jobs: int = 1, chosen: Sequence[Configuration] | None = None,
                 output_dir: str | None = None, reduce: bool = True, timeout: float = 120.0,
                 max_ops: int = 8, first: int = 0,
                 progress: Callable[[str], None] = lambda text: None) -> CampaignResult:
    """Checks programs `first`, `first + 1`, ... of `seed` until `count`
    programs or `seconds` have passed, `jobs` children at a time. Each
    distinct finding (kind and configuration) is reduced (with `reduce`)
    and written to `output_dir` as a `.mlir` test case."""
    chosen = configurations() if chosen is None else list(chosen)
    warm_up()
    result = CampaignResult()
    start = time.monotonic()
    deadline = start + seconds if seconds is not None else None

    def tasks():
        index = first
        while (count is None or index < first + count) and (
                deadline is None or time.monotonic() < deadline):
            program = generate_program(program_seed(seed, index), max_ops=max_ops)
            yield ((index, program), _task(program, index, chosen))
            index += 1

    failing: dict[tuple, tuple[Program, Finding]] = {}
    for outcome in progress_bar(run_children(tasks(), jobs, timeout), total=count,
                                description="fuzz", unit="program"):
        index, program = outcome.key
        result.programs += 1
        for verdict in verdicts_of(outcome):
            result.counts[verdict.kind] += 1
            if verdict.kind == "unsupported":
                result.unsupported[verdict.configuration, verdict.detail] += 1
            if verdict.failed:
                finding = Finding(program.seed, index, verdict)
                result.findings.append(finding)
                failing.setdefault(verdict.signature(), (program, finding))
                progress(f"program {index} (--program {program.seed}): {verdict}")
        if result.programs % 50 == 0:
            progress(f"{result.programs} programs, {sum(1 for _ in result.findings)} findings, "
                     f"{time.monotonic() - start:.0f} s")
    result.seconds = time.monotonic() - start
    if output_dir is not None:
        os.makedirs(output_dir, exist_ok=True)
        for signature, (program, finding) in failing.items():
            path = write_finding(program, finding, chosen, output_dir, reduce, timeout, progress)
            result.cases.append(path)
    return result


def _task(program: Program, index: int, chosen: Sequence[Configuration]):
    return lambda report: check_program(program, index, chosen, report)


def write_finding(program: Program, finding: Finding, chosen: Sequence[Configuration],
                  output_dir: str, reduce: bool, timeout: float,
                  progress: Callable[[str], None] = lambda text: None) -> str:
    """Reduces a failing program (keeping its kind of failure) and writes it
    as a test case; returns the path."""
    signature = finding.verdict.signature()
    involved = [c for c in chosen if c.name == finding.verdict.configuration
                or c.name == _compared_with(finding.verdict)]

    def still_fails(candidate: Program) -> bool:
        verdicts = check_in_child(candidate, 0, [_every_program(c) for c in involved], timeout)
        return any(v.signature() == signature for v in verdicts)

    small = program
    if reduce:
        progress(f"reducing program {finding.index}: {finding.verdict.kind} in "
                 f"{finding.verdict.configuration}")
        small = reduce_program(program, still_fails, progress=lambda text: progress("  " + text))
    verdict = finding.verdict
    first_line = verdict.detail.strip().splitlines()[0][:300] if verdict.detail.strip() else ""
    summary = (f"Found by lamina-fuzz (--program {finding.program_seed})"
               f"{', reduced' if reduce else ''}:\n"
               f"{verdict.kind} in {verdict.configuration or 'the checker'}: {first_line}")
    name = f"{verdict.kind}-{verdict.configuration or 'checker'}-{finding.program_seed}.mlir"
    path = os.path.join(output_dir, re.sub(r"[^\w.-]", "-", name))
    with open(path, "w") as f:
        f.write(case_text(small, summary, run_line(verdict.kind, verdict.configuration,
                                                   small.seed)))
    return path


def _compared_with(verdict: Verdict) -> str | None:
    match = re.search(r"differs from (\S+)", verdict.detail)
    return match.group(1) if match else None


def _every_program(configuration: Configuration) -> Configuration:
    from dataclasses import replace
    return replace(configuration, every=1)
