def parse_table(lines):
    """Comma-separated lines -> list of dicts keyed by the header line; cells stripped."""
    if not lines:
        return []
    header = [h.strip() for h in lines[0].split(",")]
    rows = []
    for line in lines[1:]:
        cells = [c.strip() for c in line.split(",")]
        rows.append(dict(zip(header, cells)))
    return rows
