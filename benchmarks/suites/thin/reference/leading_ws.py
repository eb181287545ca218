def indent_of(line):
    return len(line) - len(line.lstrip(" "))
