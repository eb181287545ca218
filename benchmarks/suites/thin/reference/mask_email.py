def mask_email(e):
    user, _, domain = e.partition("@")
    return user[:1] + "*" * (len(user) - 1) + "@" + domain
