"""The REST API of newer Connect releases on every worker version.

- ``feature``: ``NewerApi``, the one entry: restart options (KIP-745), loggers (KIP-976, log4j 2's
  levels), ``GET /health`` (KIP-1017), the version ``GET /`` advertises;
- ``restart``: ``ConnectorRestarter``, a restart with options composed of the older restarts;
- ``loggers``: ``Loggers``, a level set on every worker, ``last_modified``;
- ``logger_requests``: a level change's body read as 4.0+ reads it (pure);
- ``health``: ``HealthCheck``, a probe of the worker's herder.
"""

from .feature import NewerApi
from .health import HealthCheck
from .loggers import Loggers
from .restart import RestartRequest

__all__ = ["HealthCheck", "Loggers", "NewerApi", "RestartRequest"]
