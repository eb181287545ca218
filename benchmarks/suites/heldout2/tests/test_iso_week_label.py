from datetime import date
from programs.iso_week_label import iso_week_label
def test_iso_week_label():
    assert iso_week_label(date(2024, 3, 14)) == "2024-W11"
    assert iso_week_label(date(2024, 12, 30)) == "2025-W01"
