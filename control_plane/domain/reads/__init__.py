"""Connector and task reads, the dashboards' states, the sidecar's own information."""
