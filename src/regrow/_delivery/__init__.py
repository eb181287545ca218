"""9. Keeping a fix: write-back, patches, provenance, git and GitHub."""
