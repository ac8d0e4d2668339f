"""The step table against the operator schemas: every step that is not type-only is read."""

from __future__ import annotations

from irmodel._converter import schemas, steps


def _signature(s):
    return ([(p.name, p.option) for p in s.inputs], [(p.name, p.option) for p in s.outputs],
            sorted(s.attributes))


def _types(s):
    return {t.type_param_str: frozenset(t.allowed_type_strs) for t in s.type_constraints}


def test_every_step_that_is_not_type_only_has_an_entry():
    """A step whose inputs, outputs or attributes changed, or where nothing visible changed
    (so the meaning did), must be in STEPS or REVIEWED; a type-only step needs neither."""
    missing = []
    for domain, op, old, new in schemas.all_steps():
        a, b = schemas.schema(domain, op, old), schemas.schema(domain, op, new)
        type_only = _signature(a) == _signature(b) and _types(a) != _types(b)
        if type_only or b.deprecated:
            continue
        if (domain, op, new) not in steps.STEPS and (domain, op, new) not in steps.REVIEWED:
            missing.append((domain, op, old, new))
    assert missing == []


def test_table_names_only_real_steps():
    """Every entry is a step of the schemas (no typo in an op name or a version)."""
    real = {(d, op, new) for d, op, _, new in schemas.all_steps()}
    # an entry at an operator's first version says how to go below it (Trilu, Mod)
    extra = [k for k in list(steps.STEPS) + list(steps.REVIEWED)
             if k not in real and schemas.versions(k[0], k[1])[:1] != [k[2]]]
    assert extra == []


def test_every_step_count():
    """The table's scope: every step of ai.onnx and ai.onnx.ml is either handled by an
    entry, reviewed, or type-only; the count is the schemas' (a new onnx adds steps)."""
    all_steps = schemas.all_steps()
    assert len(all_steps) == len({(d, op, new) for d, op, _, new in all_steps})
    assert len(all_steps) > 400
