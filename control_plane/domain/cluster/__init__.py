"""Being one sidecar of many in front of one Connect cluster (as Connect's ``runtime/distributed`` holds
everything about being one worker of many). Part of the domain's spine: the features build on it.

- ``membership``: ``ClusterMembership``, the workers of the cluster from their own group, the leader, each
  one's version; the sidecars and fences the sidecars' topic shows;
- ``versions``: a worker's version (``Version``) and whose versions decide the capabilities;
- ``presence``: ``Presence``, this sidecar's record among the sidecars of its cluster;
- ``fence``: ``ConnectorFence``, one writer of a connector at a time among every sidecar (a lease in the
  sidecars' topic);
- ``writes``: ``ConnectorWrites``, the one step of every write the sidecar makes for a connector, its
  precondition checked at the moment of the write, under the connector's fence;
- ``acting``: ``OneActor``, the rule that picks the one sidecar that does a piece of work for all;
- ``forward_route``: ``ForwardRoute``, where a request passed through to the workers goes (a create during a
  rolling upgrade across 3.7 to the leader itself).
"""
