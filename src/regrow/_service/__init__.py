"""10b. The front-ends of a running service: ``watch``, ``regrow run``, middleware, workers."""
