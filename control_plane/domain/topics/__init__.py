"""Topic tracking (KIP-558)."""
