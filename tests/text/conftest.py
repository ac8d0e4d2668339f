"""The text-syntax tests' marker: ``slow`` (over ~5 s; run anyway, deselect with -m 'not slow')."""


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a test that takes more than about five seconds")
