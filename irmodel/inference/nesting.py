"""How deep inference may nest, and a Python stack deep enough for it.

Inference recurses through sub-graphs (an If's branches, a Loop's body) and through
function calls (a model-local function's body, a schema's function body): each level
costs about a dozen Python frames.  The decoder bounds the nesting of graphs *within* one
message (100 message levels), but not through calls: ten functions each calling the next
inside 30 nested Ifs are 310 levels, 3,500 frames, a valid model that onnx's full check
accepts and Python's default recursion limit (1,000 frames) refused.

So the depth is a budget of its own, counted in levels (a sub-graph or a call each):
`irmodel.limits.MAX_NESTING`, above what any model onnx accepts can reach (100 chained
functions, each at most 33 If levels deep inside its 100 message levels: 3,400).  Past
it, inference stops with `FatalError` (an `InferenceError` in every mode).  Below it, Python's
stack is never the bound: a run starts on the caller's thread with the levels that fit
in the caller's remaining recursion limit; a model that nests deeper stops that run
(`NeedsDeeperStack`, which nothing in between catches) and is run again from the start,
on a thread of its own with a stack of `STACK_BYTES` and a recursion limit made for
`MAX_NESTING` levels (the limit is the interpreter's, raised while that thread runs).
"""

from __future__ import annotations

import contextvars
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from types import FrameType

from .. import limits
from .errors import FatalError, InferenceError

#: Python frames one level of nesting takes at most (measured: 7 for an If in plain
#: inference, 12 for a function call with an If; twice that for the other modes' hooks).
FRAMES_PER_LEVEL = 24
#: Frames kept free besides the levels (the caller's, the rules' own helpers).
FRAME_MARGIN = 2000
#: The C stack of the thread that runs a deeply nested model (reserved address space;
#: pages are touched only as deep as the run goes).
STACK_BYTES = 512 << 20

_local = threading.local()


class NeedsDeeperStack(BaseException):
    """A run nested deeper than the caller's stack allows (a BaseException so that no
    handler of the rules' errors stops it): `run_with_room` runs it again on a deeper one."""


def allowance() -> int:
    """The levels a run may nest on this thread before it needs a deeper stack."""
    levels = getattr(_local, "levels", None)
    if levels is None:
        depth = 0
        frame: FrameType | None = sys._getframe()
        while frame is not None:
            depth += 1
            frame = frame.f_back
        levels = max(0, (sys.getrecursionlimit() - depth - 200) // FRAMES_PER_LEVEL)
    return min(levels, limits.MAX_NESTING)


def enter(run) -> None:
    """One level deeper (a sub-graph or a call); `leave` when it is done."""
    run.nesting += 1
    if run.nesting > run.allowance:
        bound = limits.MAX_NESTING
        if run.nesting > bound:
            run.nesting -= 1
            raise FatalError(f"the model nests sub-graphs and function calls more than {bound} levels "
                             "deep (irmodel.limits.MAX_NESTING)")
        raise NeedsDeeperStack


def leave(run) -> None:
    run.nesting -= 1


def run_with_room(fn):
    """``fn()``, run again on a thread with room for `MAX_NESTING` levels if it nests
    deeper than this thread allows.  ``fn`` must start from scratch each time (the first
    run's partial state is dropped); exceptions pass through as raised."""
    try:
        return fn()
    except NeedsDeeperStack:
        pass
    context = contextvars.copy_context()  # (a new thread starts with an empty context)
    outcome: list = []

    def target() -> None:
        _local.levels = limits.MAX_NESTING
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, limits.MAX_NESTING * FRAMES_PER_LEVEL + FRAME_MARGIN))
        try:
            outcome.append((True, context.run(fn)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread as it was
            outcome.append((False, exc))
        finally:
            sys.setrecursionlimit(old)

    old_size = threading.stack_size()
    try:
        threading.stack_size(STACK_BYTES)
        thread = threading.Thread(target=target, name="irmodel-deep-inference", daemon=True)
        thread.start()
    except (RuntimeError, MemoryError, ValueError):
        raise InferenceError(["model nested too deeply for the memory this process may use (a thread "
                              f"with a {STACK_BYTES >> 20} MiB stack could not start)"]) from None
    finally:
        threading.stack_size(old_size)
    thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value
