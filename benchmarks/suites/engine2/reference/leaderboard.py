def leaderboard(entries):
    """Names ordered by score, highest first; equal scores by name."""
    ranked = sorted(entries, key=lambda entry: (-entry["score"], entry["name"]))
    return [entry["name"] for entry in ranked]
