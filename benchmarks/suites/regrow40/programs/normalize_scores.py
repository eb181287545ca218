def normalize_scores(scores):
    """Min-max scale scores into [0, 1]; if all scores are equal every result is 0.0."""
    if not scores:
        return []
    lo = min(scores)
    hi = max(scores)
    if hi - lo == 0:
        return [0.0 for _ in scores]
    return [(s - lo) / hi for s in scores]
