"""A control-plane sidecar for Apache Kafka Connect."""

__version__ = "0.1.0"
