def password_ok(pw, min_len=8):
    """At least min_len chars, no spaces, contains a digit and an uppercase letter."""
    if len(pw) < min_len:
        return False
    if " " in pw:
        return False
    has_digit = all(ch.isdigit() for ch in pw)
    has_upper = any(ch.isupper() for ch in pw)
    return has_digit and has_upper
