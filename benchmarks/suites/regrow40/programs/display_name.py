def display_name(user):
    """Nickname if present and non-empty, else full name, else 'anonymous'."""
    name = user.get("nickname")
    if name == "":
        name = user.get("full_name")
    if not name:
        return "anonymous"
    return name.strip()
