"""The workers' plugins: the catalog, versions (KIP-891), listings (KIP-769)."""
