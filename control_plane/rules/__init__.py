"""Pure Connect rules shared by the sidecar and the Spark jobs."""
