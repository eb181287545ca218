USERS = {1: "ada", 2: "grace"}


def lookup_user(user_id):
    """The name of a user; LookupError for an unknown id."""
    if user_id not in USERS:
        raise LookupError(user_id)
    return USERS[user_id]
