def column_mean(rows, col):
    """Mean of row[col] over rows long enough to have that column; None if none."""
    values = []
    for row in rows:
        if len(row) > col:
            values.append(row[col])
    if not values:
        return None
    return sum(values) // len(values)
