"""wirefmt's public hook for instrumenting its generated scan functions
(`wirefmt.wrap_generated_scanners`), which the harnesses give ``atheris.instrument_func``
(fuzz/_harness.py): every generated function passes through it, those made before the
call and those made after, and decoding is unchanged."""

from __future__ import annotations

import irmodel
import wirefmt
from irmodel.fuzz.sample_model import sample_model_bytes
from wirefmt import scan


def _live_classes() -> list:
    return [c for c in (r() for r in scan._built) if c is not None]


def test_every_generated_scanner_goes_through_the_hook_now_and_later():
    data = sample_model_bytes()
    expected = irmodel.to_dict(irmodel.loads(data))
    seen = []

    def wrap(fn):
        seen.append(fn)

        def wrapped(*args):
            wrapped.calls += 1
            return fn(*args)

        wrapped.calls = 0
        return wrapped

    try:
        wirefmt.wrap_generated_scanners(wrap)
        classes = _live_classes()
        assert len(seen) == 2 * len(classes)  # both scanners of every class, made now
        assert all(c._make_child.__name__ == c._scan_into.__name__ == "wrapped" for c in classes)
        assert irmodel.to_dict(irmodel.loads(data)) == expected
        assert sum(c._make_child.calls + c._scan_into.calls for c in classes) > 0  # the wrapped ones ran
        # switched to the generic loop and back: the stubs build through the hook again
        wirefmt.use_generated_scanners(False)
        wirefmt.use_generated_scanners(True)
        before = len(seen)
        assert irmodel.to_dict(irmodel.loads(data)) == expected
        assert len(seen) > before
        assert irmodel.GraphProto._make_child.__name__ == "wrapped"
    finally:
        wirefmt.wrap_generated_scanners(None)
    assert all(c._make_child.__name__ != "wrapped" for c in _live_classes())
    assert irmodel.to_dict(irmodel.loads(data)) == expected


def test_classes_on_the_generic_loop_keep_it():
    try:
        wirefmt.use_generated_scanners(False)
        wirefmt.wrap_generated_scanners(lambda fn: fn)
        assert all(c.__dict__["_scan_into"].__func__ is scan._generic_scan_into for c in _live_classes())
    finally:
        wirefmt.wrap_generated_scanners(None)
        wirefmt.use_generated_scanners(True)
