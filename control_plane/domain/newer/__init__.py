"""The REST API of newer Connect releases: health, loggers, restart options."""
