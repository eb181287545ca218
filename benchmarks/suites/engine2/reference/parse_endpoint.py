DEFAULT_HOST = "localhost"
DEFAULT_PORT = 8080


def parse_endpoint(text):
    """``"host:port"`` -> (host, port); either part may be missing."""
    host, _, port = text.partition(":")
    return (host or DEFAULT_HOST, int(port) if port else DEFAULT_PORT)
