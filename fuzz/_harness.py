"""What the ``fuzz_*.py`` harnesses share: atheris when it is there, a plain loop when not.

OSS-Fuzz and ClusterFuzzLite run a harness under atheris (libFuzzer): ``main`` calls
``atheris.Setup`` with the harness's ``TestOneInput`` and the structure-aware mutators,
then ``atheris.Fuzz``.  Without atheris, or with ``--plain`` (or ``IRMODEL_FUZZ_PLAIN=1``),
the same harness runs a plain loop: every seed input, then wire mutants of them, for
``--seconds`` or ``--runs``; CI's smoke campaign is this loop.  A crash in the plain loop
writes the input to ``crash-<sha1>`` (in ``--artifact-dir``, default the current
directory), as libFuzzer does, and exits non-zero.

Mutation: the wire mutator (`irmodel.fuzz.wire`, schema-aware for ONNX) and, once the
branch that adds it is merged, the structure mutator (`irmodel.fuzz.structure`), chosen
by the seed so that a mutant still depends on ``(data, seed)`` only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.isdir(os.path.join(os.path.dirname(_HERE), "irmodel")):  # run from a checkout
    sys.path.insert(0, os.path.dirname(_HERE))

try:
    import atheris  # type: ignore[import-not-found]
except ImportError:  # the plain loop needs nothing but irmodel
    atheris = None


#: The plain loop is chosen before the harness imports what it tests, so that those
#: imports are instrumented for atheris only (instrumenting costs the loop most of its speed).
PLAIN = atheris is None or "--plain" in sys.argv or os.environ.get("IRMODEL_FUZZ_PLAIN") == "1"


#: The packages whose code a harness exercises: libFuzzer sees coverage in these only.
PACKAGES = ("irmodel", "wirefmt")
#: Subpackages no harness runs (the command line, the fuzzing toolkit itself: the mutators
#: run between inputs, where their coverage would only be noise).  A harness that does run
#: one of their modules (fuzz_roundtrip: `irmodel.fuzz.targets`) imports it in its block.
NOT_EXERCISED = ("irmodel.cli", "irmodel.fuzz", "irmodel.__main__")


@contextlib.contextmanager
def instrumented():
    """Under atheris: every module of `PACKAGES` instrumented for libFuzzer; else nothing.

    ``import irmodel`` imports nothing (its names are imported on first use), so a module
    a harness needs would be imported by the first input, after ``instrument_imports()``
    had ended, and libFuzzer would see no coverage in it.  So the block imports every
    module of the packages (`import_all`) before it ends, and the scan functions wirefmt
    generates at run time (which no import hook sees) are instrumented as they are made
    (`instrument_generated_scanners`).  Does nothing in plain-loop mode.
    """
    if PLAIN:
        yield
        return
    with atheris.instrument_imports(include=list(PACKAGES)):
        yield
        import_all()
    instrument_generated_scanners()


def import_all(packages=PACKAGES, skip=NOT_EXERCISED) -> list:
    """Import every module of ``packages`` but those under ``skip``; returns their names.

    A module whose third-party dependency is missing (numpy in a minimal build) is left
    out: the harness cannot reach it either.
    """
    import importlib  # noqa: PLC0415
    import pkgutil  # noqa: PLC0415

    names = []
    for package in packages:
        root = importlib.import_module(package)
        names.append(package)
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            if info.name.startswith(skip):
                continue
            try:
                importlib.import_module(info.name)
            except ImportError:
                continue
            names.append(info.name)
    return names


def instrument_generated_scanners() -> None:
    """Instrument wirefmt's generated scan functions: every one now, and any made later.

    The scanners are compiled from generated source (or loaded from the code cache) on
    the first decode of each message type, so no import hook instruments them; wirefmt
    hands each one, as it makes it, to the function given to its public hook
    `wirefmt.wrap_generated_scanners`, here ``atheris.instrument_func``.
    """
    import wirefmt  # noqa: PLC0415
    from irmodel.messages import CLASSES  # noqa: PLC0415

    CLASSES.values()  # every class built now (each is built on first use), so instrumented at start-up
    wirefmt.wrap_generated_scanners(atheris.instrument_func)


_wire = None
_structure: object | bool | None = None


def _mutators():
    global _wire, _structure
    if _wire is None:
        from irmodel.fuzz.onnx_schema import model_mutator  # noqa: PLC0415
        _wire = model_mutator()
        try:
            from irmodel.fuzz import structure  # noqa: PLC0415
            _structure = structure
        except ImportError:
            _structure = False
    return _wire, _structure


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    """One mutant: the structure mutator for a third of the seeds (when installed), else the wire mutator."""
    wire, structure = _mutators()
    if structure and seed % 3 == 0:
        return structure.custom_mutator(data, max_size, seed)
    return wire(data, max_size, seed)


def custom_crossover(data1: bytes, data2: bytes, max_size: int, seed: int) -> bytes:
    """The structure mutator's crossover; without it, the first input's fields then the second's."""
    _, structure = _mutators()
    if structure:
        return structure.custom_crossover(data1, data2, max_size, seed)
    return (data1 + data2)[:max_size]  # concatenated messages merge, as protobuf parses them


def seed_inputs() -> list:
    """The seeds the plain loop starts from when given no corpus (the seed corpus's core)."""
    from irmodel.fuzz.sample_model import sample_model_bytes  # noqa: PLC0415

    seeds = [sample_model_bytes()]
    try:
        from irmodel.fuzz import generate  # noqa: PLC0415
    except ImportError:
        generate = None
    if generate is not None:
        seeds += [generate.model_bytes(i, "valid" if i % 2 == 0 else "near-valid") for i in range(6)]
    reproducers = os.path.join(_HERE, "reproducers")
    if os.path.isdir(reproducers):
        for name in sorted(os.listdir(reproducers)):
            if name.endswith(".bin"):
                with open(os.path.join(reproducers, name), "rb") as f:
                    seeds.append(f.read())
    return seeds


def _corpus(paths: list) -> list:
    import zipfile  # noqa: PLC0415

    out = []
    for path in paths:
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                full = os.path.join(path, name)
                if os.path.isfile(full):
                    with open(full, "rb") as f:
                        out.append(f.read())
        elif zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                out += [z.read(n) for n in sorted(z.namelist()) if not n.endswith("/")]
        else:
            with open(path, "rb") as f:
                out.append(f.read())
    return out


def plain_loop(test_one_input, seeds: list, *, seconds: float | None = 10.0, runs: int | None = None,
               artifact_dir: str = ".", max_size: int = 1 << 20, out=sys.stderr) -> int:
    """Run every seed, then mutants of them; returns the number of runs.  A crash is re-raised
    after its input is written to ``artifact_dir/crash-<sha1>``."""
    start = time.monotonic()
    n = 0
    pool = list(seeds) or [b""]

    def one(data: bytes) -> None:
        try:
            test_one_input(data)
        except BaseException:
            path = os.path.join(artifact_dir, "crash-" + hashlib.sha1(data).hexdigest())
            with open(path, "wb") as f:
                f.write(data)
            print(f"plain loop: crash after {n} runs; input written to {path}", file=out)
            raise

    def done() -> bool:
        return (runs is not None and n >= runs) or (seconds is not None and time.monotonic() - start >= seconds)

    for data in pool:
        if done():
            break
        one(data)
        n += 1
    seed = 0
    while not done():
        base = pool[seed % len(pool)]
        data = custom_mutator(base, max(max_size, len(base)), seed)
        if seed % 4 == 3 and len(pool) < 256:
            pool.append(data)  # a few mutants become bases: mutations stack
        one(data)
        n += 1
        seed += 1
    elapsed = time.monotonic() - start
    print(f"plain loop: {n} runs in {elapsed:.1f} s ({n / elapsed if elapsed else 0:.0f} exec/s), no crash", file=out)
    return n


def main(test_one_input, argv: list | None = None) -> int:
    """The harness's entry point: atheris unless asked for (or left with) the plain loop."""
    import argparse  # noqa: PLC0415

    argv = list(sys.argv if argv is None else argv)
    if not (PLAIN or "--plain" in argv):
        atheris.Setup(argv, test_one_input, custom_mutator=custom_mutator, custom_crossover=custom_crossover)
        atheris.Fuzz()
        return 0
    p = argparse.ArgumentParser(prog=os.path.basename(argv[0]), description="plain-loop mode (no atheris)")
    p.add_argument("--plain", action="store_true")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--runs", type=int)
    p.add_argument("--artifact-dir", default=".")
    p.add_argument("corpus", nargs="*", help="directories, files or seed-corpus zips (default: built-in seeds)")
    args = p.parse_args(argv[1:])
    seeds = _corpus(args.corpus) if args.corpus else seed_inputs()
    plain_loop(test_one_input, seeds, seconds=args.seconds, runs=args.runs, artifact_dir=args.artifact_dir)
    return 0
