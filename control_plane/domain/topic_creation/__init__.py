"""Topic-creation rules (KIP-158): checks and previews."""
