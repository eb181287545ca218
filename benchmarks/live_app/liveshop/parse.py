"""Quantities as customers type them: '12', ' 7 ', '1,200', '3 pcs', '5PCS', ''.

The injected bug: the unit suffix is cut one character short, so every quantity typed with "pcs"
('3 pcs', '41pcs', '7 PCS', ...) raises ValueError — one bug, as many distinct bad inputs as there are
numbers. The fix is ``value[:-3]``.
"""


def parse_qty(text):
    value = text.strip().lower()
    if value.endswith("pcs"):
        value = value[:-2]
    if not value:
        return 0
    return int(value.replace(",", ""))
