"""The STOPPED state and connector offsets (KIP-875)."""
