LETTERS = 26


def column_letter(index):
    """Spreadsheet column name of a 1-based index: 1 -> A, 27 -> AA."""
    name = ""
    while index > 0:
        index, rest = divmod(index - 1, LETTERS)
        name = chr(ord("A") + rest) + name
    return name
