"""Where a lab runs: a throwaway embedded server, or a user's server reached by DSN."""

from .base import Target
from .settings import SettingChange, classify_settings

__all__ = ["SettingChange", "Target", "classify_settings"]
