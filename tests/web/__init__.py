"""The web page's browser tests (one Chromium for the package, see conftest.py)."""
