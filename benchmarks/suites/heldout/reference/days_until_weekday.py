def days_until_weekday(d, target):
    """Days from d until the next given weekday (0=Mon..6=Sun); 0 if d is that day."""
    return (target - d.weekday()) % 7
