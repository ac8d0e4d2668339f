"""ONNX element types: the plain table (`table`), the rows made from it (`rows`) and the
packing of 2-, 4- and 6-bit types (`packing`).  Empty on purpose: a reader that needs one
column of the table imports `table` alone and pays for nothing else."""
