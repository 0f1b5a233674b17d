"""Configuration (foundation layer): typed settings from TOML files and the environment."""

from devops_agent.config.settings import (
    LoadedSettings,
    Settings,
    describe,
    load_settings,
    user_config_dir,
    user_data_dir,
)

__all__ = ["LoadedSettings", "Settings", "describe", "load_settings", "user_config_dir", "user_data_dir"]
