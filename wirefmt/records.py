"""Named tuples made without ``typing`` or ``collections``.

``typing.NamedTuple`` imports ``typing`` (and ``collections``, which
``collections.namedtuple`` needs too): several milliseconds of every process, for
classes that only hold a few values.  `named_tuple` makes the same thing, a tuple
subclass with a property per field, ``_fields``, ``_asdict``, ``_replace`` and a
readable ``repr``, from the standard library's built-ins alone.  A module defines its
class for the type checker as a ``NamedTuple`` under ``TYPE_CHECKING`` and with
`named_tuple` at run time, then subclasses it to add methods (see `wirefmt.reader.Field`).
"""

from __future__ import annotations

from _operator import itemgetter  # built into the interpreter: `operator` is not imported


def cast(_type: object, value: object) -> object:
    """``typing.cast`` at run time: the identity.  A module imports `typing.cast` for the
    type checker (under ``TYPE_CHECKING``) and this one otherwise."""
    return value


def named_tuple(name: str, fields: tuple, module: str) -> type:
    """A tuple subclass with the given field names; its subclasses add ``__slots__ = ()``."""

    def __new__(cls, *values, **named):
        if named:
            values = values + tuple(named.pop(f) for f in fields[len(values):] if f in named)
            if named:
                raise TypeError(f"{name} has no field {next(iter(named))!r}")
        if len(values) != len(fields):
            raise TypeError(f"{name} takes {len(fields)} values, got {len(values)}")
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{n}={v!r}" for n, v in zip(fields, self)) + ")"

    def _replace(self, **changes):
        return type(self)(*(changes.pop(n, v) for n, v in zip(fields, self)))

    ns = {"__slots__": (), "_fields": fields, "__new__": __new__, "__repr__": __repr__, "_replace": _replace,
          "__getnewargs__": lambda self: tuple(self), "_asdict": lambda self: dict(zip(fields, self)),
          "__module__": module, "__qualname__": f"_{name}Fields"}
    for i, field in enumerate(fields):
        ns[field] = property(itemgetter(i), doc=f"Field {i}: {field}.")
    return type(f"_{name}Fields", (tuple,), ns)
