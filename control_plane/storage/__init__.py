"""Kafka-backed storage: the readers that tail Connect's internal topics and the writers the
sidecar uses where the worker cannot do a job itself. Only this package imports aiokafka."""
