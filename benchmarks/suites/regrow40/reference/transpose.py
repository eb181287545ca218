def transpose(matrix):
    """Transpose a rectangular list-of-lists matrix."""
    if not matrix or not matrix[0]:
        return []
    result = []
    for c in range(len(matrix[0])):
        result.append([row[c] for row in matrix])
    return result
