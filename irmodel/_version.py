"""The package's version: its own module so that any module may read it without importing the
facade (which imports, lazily, nearly everything)."""

__version__ = "0.1.0"
