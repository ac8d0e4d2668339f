"""The converter tests' marker: ``slow`` (the full differential sweep)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds (full corpus sweeps)")
