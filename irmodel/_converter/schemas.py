"""The operator versions of a domain, as the converter walks them (from `irmodel.defs`)."""

from __future__ import annotations

from bisect import bisect_right

_INDEX: dict[tuple[str, str], tuple[list[int], dict[int, object]]] | None = None


def _index() -> dict:
    global _INDEX
    if _INDEX is None:
        from .. import defs  # noqa: PLC0415

        index: dict = {}
        for s in defs.get_all_schemas_with_history():
            versions, by = index.setdefault((s.domain, s.name), ([], {}))
            versions.append(s.since_version)
            by[s.since_version] = s
        for versions, _ in index.values():
            versions.sort()
        _INDEX = index
    return _INDEX


def domain_key(domain: str) -> str:
    """The registry's spelling of a node's domain ("ai.onnx" is "")."""
    return "" if domain in ("", "ai.onnx") else domain


def versions(domain: str, op: str) -> list[int]:
    """The since_versions of ``op`` in ``domain``, ascending (empty when unknown)."""
    entry = _index().get((domain, op))
    return entry[0] if entry else []


def schema(domain: str, op: str, since_version: int):
    return _index()[(domain, op)][1][since_version]


def in_force(domain: str, op: str, opset: int) -> int | None:
    """The since_version of ``op`` in force at ``opset`` (None: the op does not exist yet)."""
    vs = versions(domain, op)
    i = bisect_right(vs, opset)
    return vs[i - 1] if i else None


def all_steps(domains=("", "ai.onnx.ml")) -> list[tuple[str, str, int, int]]:
    """Every version step (domain, op, old since_version, new since_version)."""
    out: list[tuple[str, str, int, int]] = []
    for (domain, op), (vs, _) in sorted(_index().items()):
        if domain in domains:
            out.extend((domain, op, a, b) for a, b in zip(vs, vs[1:]))
    return out
