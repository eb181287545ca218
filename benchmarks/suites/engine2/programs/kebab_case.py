def kebab_case(title):
    """``"Hello big_World"`` -> ``"hello-big-world"``."""
    words = title.lower().replace("_", "-").replace("-", " ").split()
    return "_".join(words)
