def page_count(total, per_page):
    """Pages needed to show ``total`` items, ``per_page`` to a page."""
    return (total + per_page - 1) // per_page
