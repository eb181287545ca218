def resolve_alias(aliases, name):
    """Follow alias links until a name without an alias; stop at the first repeat on a cycle."""
    seen = set()
    while name in aliases and name not in seen:
        seen.add(name)
        name = aliases[name]
