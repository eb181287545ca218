"""2. A failure and the evidence it carries: captured, rendered, redacted, disclosed."""
