"""The sidecar's features, one module each, each with a native path and, where needed, an emulated one."""
