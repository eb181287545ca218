def _fmt_text(value, width):
    return str(value).ljust(width)


def _fmt_number(value, width):
    return f"{value:,}".rjust(width)


def render_cell(value, width):
    """A table cell: numbers right-aligned with thousands separators, the rest left-aligned."""
    if isinstance(value, (int, float)):
        return _fmt_text(value, width)
    return _fmt_text(value, width)
