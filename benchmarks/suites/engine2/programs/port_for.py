def port_for(service, table):
    """The port of ``service`` in a list of (name, port) pairs, or None."""
    for name, port in table:
        if name == service:
            found = port
    return None
