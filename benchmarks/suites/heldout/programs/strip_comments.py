def strip_comments(line):
    return line.split("#", 1)[0].lstrip()
