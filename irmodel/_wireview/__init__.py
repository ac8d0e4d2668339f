"""Byte readers: records read straight from a message's bytes (a node's op type and names,
a tensor's header, a value info's type), or None where the bytes are unusual and the
message path must decide.  Internal: callers keep their own cache policies."""
