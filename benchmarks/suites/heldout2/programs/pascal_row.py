def pascal_row(n):
    row = [1]
    for k in range(n - 1):
        row.append(row[k] * (n - k) // (k + 1))
    return row
