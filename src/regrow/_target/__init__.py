"""1. The function being healed: where it lives, its source, what it reads and writes."""
