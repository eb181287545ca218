def numbered(lines):
    """The non-blank lines prefixed with their line number (blank lines count)."""
    out = []
    number = 1
    for line in lines:
        if line.strip():
            out.append(f"{number}: {line}")
        number += 1
    return out
