def pass_rate(scores, cutoff=50):
    if not scores:
        return 0.0
    passed = [s for s in scores if s > cutoff]
    return len(passed) / len(scores)
