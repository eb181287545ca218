def collect_tags(posts):
    """Distinct tags across all posts, in order of first appearance."""
    seen = set()
    ordered = []
    for post in posts:
        for tag in post.get("tags", []):
            if tag not in seen:
                ordered.append(tag)
                seen.add(tag)
    return ordered
