class SettingsError(Exception):
    """Any problem with the settings."""


class MissingSetting(SettingsError, KeyError):
    """A setting that must be present is not."""


class BadSetting(SettingsError, ValueError):
    """A setting has a value of the wrong kind."""


def require_key(settings, key):
    """``settings[key]``; MissingSetting when it is absent, BadSetting when it is empty."""
    if key not in settings:
        raise MissingSetting(key)
    value = settings[key]
    if value in ("", None):
        raise BadSetting(key)
    return value
