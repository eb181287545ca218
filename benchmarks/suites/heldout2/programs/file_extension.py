def file_extension(path):
    name = path.rsplit("/", 1)[-1]
    if name.startswith("."):
        name = name[1:]
    if "." not in name:
        return ""
    return name.split(".", 1)[1].lower()
