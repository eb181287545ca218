def initials(name):
    return "".join(p[0].upper() for p in name.split()[1:])
