"""``irmodel fuzz corpus|diff|reduce``: make inputs, run them through parsers, shrink what they disagree on.

- ``corpus OUT --count N --kind valid|near-valid|hostile [--seed S]`` writes N model files:
  generated valid models, generated near-valid ones (one rule broken), or hostile ones
  (wire mutants of generated models and of the sample model, `irmodel.fuzz.wire`).
- ``diff --target T ... [--seconds N] [--jobs N] [--corpus DIR]`` runs inputs (the corpus
  files first, then wire mutants of them) through the targets in worker processes
  (`irmodel.fuzz.runner`), shows a progress line on stderr and prints the report.
- ``reduce INPUT --target T ... -o OUT`` shrinks an input while the targets' outcomes stay
  the same (`irmodel.fuzz.reduce`) and writes ``OUT`` (bytes) and ``OUT.txt`` (raw text).

Targets: the built-in names of `irmodel.fuzz.runner.BUILTIN` (``ours``, ``ours-roundtrip``,
``upb``, ``protobuf-python``, ``onnx-checker``, ``onnx-shape-inference``, ``onnxruntime``...),
``module:function``, or ``cmd:COMMAND`` (a command reading the file named by ``{file}``, or
given the file as its last argument).  Everything is deterministic in ``--seed`` except
how many inputs fit in ``--seconds``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from .common import EXIT_OK, UsageError, whole_number

KINDS = ("valid", "near-valid", "hostile")
#: ``diff`` without --seconds or --count stops after this many seconds.
DEFAULT_SECONDS = 60


def add_parser(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("fuzz", help="make fuzzing inputs, run them through several parsers, reduce disagreements")
    fsub = c.add_subparsers(dest="fuzz_command", required=True, metavar="SUBCOMMAND")

    p = fsub.add_parser("corpus", help="write a corpus of valid, near-valid or hostile model files")
    p.add_argument("out", metavar="OUT", help="directory to write the files into (created if missing)")
    p.add_argument("--count", type=whole_number("a number of files", 1), required=True, metavar="N")
    p.add_argument("--kind", choices=KINDS, required=True)
    p.add_argument("--seed", type=whole_number("a seed"), default=0, metavar="S",
                   help="first seed (file i is made from seed S + i; default 0)")
    p.set_defaults(func=run_corpus)

    p = fsub.add_parser("diff", help="run inputs through several targets and report where they disagree")
    _add_targets(p)
    p.add_argument("--seconds", type=whole_number("a number of seconds", 1), metavar="N",
                   help=f"stop after N seconds (default {DEFAULT_SECONDS} unless --count is given)")
    p.add_argument("--count", type=whole_number("a number of inputs", 1), metavar="N", help="stop after N inputs")
    p.add_argument("--jobs", type=whole_number("a number of jobs", 1), default=1, metavar="N",
                   help="inputs in flight at once (each target gets N worker processes; default 1)")
    p.add_argument("--corpus", metavar="DIR", help="seed inputs: every file in DIR (default: the sample model)")
    p.add_argument("--seed", type=whole_number("a seed"), default=0, metavar="S", help="seed of the mutations")
    p.add_argument("--no-mutate", action="store_true", help="run the corpus files only, no mutants")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS", help="per input and target (default 10)")
    p.add_argument("--save", metavar="DIR",
                   help="write each distinct disagreement's first input there (.bin and raw text .txt)")
    p.set_defaults(func=run_diff)

    p = fsub.add_parser("reduce", help="shrink an input while the targets' outcomes stay the same")
    p.add_argument("path", metavar="INPUT")
    _add_targets(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="write the reduced bytes to OUT and their raw text to OUT.txt")
    p.add_argument("--max-tests", type=whole_number("a number of tests", 1), default=2000, metavar="N",
                   help="run the targets at most N times (default 2000)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS", help="per input and target (default 10)")
    p.add_argument("--schemaless", action="store_true", help="reduce without the ONNX schema (any protobuf)")
    p.set_defaults(func=run_reduce)


def _add_targets(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", action="append", required=True, metavar="T",
                   help="a target (repeat the option, or separate names by commas): a built-in name, "
                        "module:function, or cmd:COMMAND with {file} where the input's path goes")


# -- targets and inputs --------------------------------------------------------------------

def parse_targets(specs: list) -> list:
    """The `Target` of each ``--target`` value; built-in names may be comma-separated."""
    import shlex  # noqa: PLC0415

    from ..fuzz.runner import Target, parse_target  # noqa: PLC0415

    targets: list = []
    for spec in specs:
        if spec.startswith("cmd:"):
            command = spec[4:].strip()
            argv = shlex.split(command)
            if not argv:
                raise UsageError(f"--target {spec!r}: no command")
            if not any("{file}" in a for a in argv):
                argv.append("{file}")
            targets.append(Target(_command_name(argv, targets), command=tuple(argv)))
            continue
        names = [spec] if ":" in spec else [s.strip() for s in spec.split(",") if s.strip()]
        for name in names:
            try:
                targets.append(parse_target(name))
            except ValueError as exc:
                raise UsageError(str(exc)) from None
    names = [t.name for t in targets]
    if len(set(names)) != len(names):
        raise UsageError(f"a target is given twice: {', '.join(sorted({n for n in names if names.count(n) > 1}))}")
    return targets


def _command_name(argv: list, earlier: list) -> str:
    base = "cmd:" + os.path.basename(argv[0])
    taken = {t.name for t in earlier}
    name, n = base, 2
    while name in taken:
        name, n = f"{base}#{n}", n + 1
    return name


def _generator():
    """`irmodel.fuzz.generate`, or None when this installation has no model generator."""
    try:
        from ..fuzz import generate  # noqa: PLC0415
    except ImportError:
        return None
    return generate


def seed_models(seed: int, count: int = 4) -> list:
    """Seed inputs for hostile files and for ``diff`` without a corpus: the sample model,
    and ``count`` generated models (half valid, half near-valid) when the generator exists."""
    from ..fuzz.sample_model import sample_model_bytes  # noqa: PLC0415

    seeds = [sample_model_bytes()]
    generate = _generator()
    if generate is not None:
        for i in range(count):
            seeds.append(generate.model_bytes(seed + i, "valid" if i % 2 == 0 else "near-valid"))
    return seeds


def mutants(seeds: list, seed: int, *, stack: float = 0.25, max_size: int | None = None):
    """Endless wire mutants of ``seeds`` (deterministic in ``seed``).

    A quarter of them mutate a recent mutant again, so mutations combine (a tag 0 inside a
    length that is also overlong...); the rest start from a seed input.
    """
    import random  # noqa: PLC0415

    from ..fuzz.onnx_schema import model_mutator  # noqa: PLC0415

    mutator = model_mutator()
    rng = random.Random(seed)
    recent: list = []
    i = 0
    while True:
        base = recent[rng.randrange(len(recent))] if recent and rng.random() < stack else seeds[rng.randrange(len(seeds))]
        limit = max_size if max_size is not None else max(4096, 2 * len(base))
        data = mutator(base, limit, seed * 1_000_003 + i)
        i += 1
        if len(recent) < 64:
            recent.append(data)
        else:
            recent[rng.randrange(64)] = data
        yield data


def _read_corpus(path: str) -> list:
    if not os.path.isdir(path):
        raise UsageError(f"--corpus {path}: not a directory")
    out = []
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if os.path.isfile(full):
            with open(full, "rb") as f:
                out.append(f.read())
    if not out:
        raise UsageError(f"--corpus {path}: no files in it")
    return out


# -- corpus ---------------------------------------------------------------------------------

def run_corpus(args: argparse.Namespace) -> int:
    if args.kind in ("valid", "near-valid"):
        generate = _generator()
        if generate is None:
            raise UsageError(f"--kind {args.kind} needs the model generator (irmodel.fuzz.generate), "
                             "which this installation does not have")
        make = (lambda i: generate.model_bytes(args.seed + i, args.kind))
    else:
        stream = mutants(seed_models(args.seed), args.seed)
        make = (lambda i: next(stream))
    os.makedirs(args.out, exist_ok=True)
    width = max(6, len(str(args.count - 1)))
    total = 0
    for i in range(args.count):
        data = make(i)
        with open(os.path.join(args.out, f"{args.kind}-{i:0{width}d}.onnx"), "wb") as f:
            f.write(data)
        total += len(data)
    print(f"{args.count} {args.kind} files, {total} bytes, in {args.out}")
    return EXIT_OK


# -- diff ----------------------------------------------------------------------------------

class _ProgressLine:
    """One line on stderr: rewritten in place on a terminal, else a line every 10 seconds."""

    def __init__(self, seconds: float | None, count: int | None):
        self.tty = sys.stderr.isatty()
        self.every = 0.5 if self.tty else 10.0
        self.last = time.monotonic()
        self.seconds, self.count = seconds, count

    def text(self, report) -> str:
        rate = report.inputs / report.seconds if report.seconds > 0 else 0.0
        goal = f"/{self.count}" if self.count else ""
        left = f", {max(0.0, self.seconds - report.seconds):.0f} s left" if self.seconds else ""
        return (f"irmodel: fuzz diff: {report.inputs}{goal} inputs, {rate:.1f}/s, "
                f"{len(report.disagreements)} distinct disagreements{left}")

    def __call__(self, report) -> None:
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            self.show(report)

    def show(self, report) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K" + self.text(report))
        else:
            sys.stderr.write(self.text(report) + "\n")
        sys.stderr.flush()

    def close(self, report) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K")
        sys.stderr.write(self.text(report) + "\n")
        sys.stderr.flush()


def _bounded(inputs, seconds: float | None, count: int | None):
    start = time.monotonic()
    for n, data in enumerate(inputs):
        if (count is not None and n >= count) or (seconds is not None and time.monotonic() - start >= seconds):
            return
        yield data


def run_diff(args: argparse.Namespace) -> int:
    import itertools  # noqa: PLC0415

    from ..fuzz.runner import Runner  # noqa: PLC0415

    targets = parse_targets(args.target)
    seeds = _read_corpus(args.corpus) if args.corpus else seed_models(args.seed)
    seconds = args.seconds if args.seconds or args.count else DEFAULT_SECONDS
    inputs = iter(seeds) if args.no_mutate else itertools.chain(seeds, mutants(seeds, args.seed))
    progress = _ProgressLine(seconds, args.count)
    with Runner(targets, jobs=args.jobs, timeout=args.timeout) as runner:
        try:
            report = runner.run(_bounded(inputs, seconds, args.count), progress=progress)
        except RuntimeError as exc:  # a target that cannot start (a missing package)
            raise UsageError(str(exc)) from None
    progress.close(report)
    print(report.format())
    if args.save:
        _save_disagreements(report, args.save)
    return EXIT_OK


def _save_disagreements(report, directory: str) -> None:
    from ..fuzz.reduce import write_reproducer  # noqa: PLC0415

    os.makedirs(directory, exist_ok=True)
    ranked = sorted(report.disagreements.values(), key=lambda d: -d.count)
    for n, d in enumerate(ranked, 1):
        note = "\n".join(f"{t}: {o}" + (f" ({detail[:200]})" if detail else "")
                         for t, o, detail in zip(report.targets, d.vector, d.details))
        write_reproducer(d.example, os.path.join(directory, f"disagreement-{n:03d}"),
                         note=f"{d.count} inputs gave these outcomes:\n{note}")
    with open(os.path.join(directory, "report.txt"), "w", encoding="utf-8") as f:
        f.write(report.format() + "\n")
    print(f"{len(ranked)} disagreements written to {directory}")


# -- reduce --------------------------------------------------------------------------------

def run_reduce(args: argparse.Namespace) -> int:
    from ..fuzz.onnx_schema import MODEL_TYPE, onnx_registry  # noqa: PLC0415
    from ..fuzz.reduce import reduce_disagreement, write_reproducer  # noqa: PLC0415
    from ..fuzz.runner import Runner  # noqa: PLC0415
    from .common import check_file  # noqa: PLC0415

    targets = parse_targets(args.target)
    check_file(args.path)
    with open(args.path, "rb") as f:
        data = f.read()
    schema = {} if args.schemaless else {"registry": onnx_registry(), "root_type": MODEL_TYPE}
    with Runner(targets, jobs=1, timeout=args.timeout) as runner:
        try:
            small, vector = reduce_disagreement(runner, data, max_tests=args.max_tests, **schema)
        except RuntimeError as exc:
            raise UsageError(str(exc)) from None
    outcomes = ", ".join(f"{t.name}={o}" for t, o in zip(targets, vector))
    stem = args.output[:-4] if args.output.endswith(".bin") else args.output
    bin_path, txt_path = write_reproducer(small, stem, note=f"reduced from {args.path} ({len(data)} bytes)\n"
                                                          f"outcomes: {outcomes}")
    if bin_path != args.output:
        os.replace(bin_path, args.output)
        bin_path = args.output
    os.replace(txt_path, args.output + ".txt")
    print(f"{len(data)} -> {len(small)} bytes, outcomes {outcomes}; written {bin_path} and {args.output}.txt")
    return EXIT_OK
