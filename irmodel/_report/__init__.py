"""What ``irmodel inspect`` and ``irmodel dump`` print: the summary of a model read without
its weights, and the tree of its fields.  Internal: the command line is the interface."""
