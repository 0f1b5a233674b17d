"""policies layer."""
