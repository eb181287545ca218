def latest_first(events):
    """Event names, the most recent (last recorded) first."""
    return [event["name"] for event in events]
