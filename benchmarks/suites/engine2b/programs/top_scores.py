def top_scores(scores, n):
    """The ``n`` highest scores, highest first."""
    ranked = scores
    return ranked[::-1][:n]
