"""Connector configurations on their way to the workers: validate, create, update, PATCH.

- ``feature``: ``Configs``, the one entry: the sidecar's checks first, ``initial_state`` (KIP-980) and
  PATCH (KIP-477) where the workers lack them, validate answers in the newest shape;
- ``connector_configs``: ``ConnectorConfigs``, every configuration through the ``ConfigCheck``s
  (``domain.config_checks``), merged into the worker's validation; PATCH composed of GET and PUT;
- ``initial_state``: ``ConnectorCreation``, a create PAUSED or STOPPED through the config topic;
- ``unresolved``: validate answers with config provider references shown as given (4.4).
"""

from .connector_configs import ConnectorConfigs
from .feature import Configs
from .initial_state import ConnectorCreation, InitialState, Unreadable, read_initial_state

__all__ = ["Configs", "ConnectorConfigs", "ConnectorCreation", "InitialState", "Unreadable", "read_initial_state"]
