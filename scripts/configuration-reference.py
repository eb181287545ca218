"""Write docs/configuration.md from regrow._settings.Settings (tests/test_settings.py checks it is current)."""

from pathlib import Path

from regrow._settings import reference

Path(__file__).resolve().parents[1].joinpath("docs", "configuration.md").write_text(reference(), encoding="utf-8")
