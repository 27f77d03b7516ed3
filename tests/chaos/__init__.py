"""The fault campaign: a workload of concurrent operations through three sidecars, a fault injector that
stalls and kills the processes under them, and a checker over the recorded history (docs/chaos.md).

Three parts, as Jepsen splits them: ``workload`` (the clients and what they record), ``nemesis`` (the
faults), ``checker`` (pure rules over a ``history.History``). ``cluster`` is what they run against (a broker,
a Connect worker and three sidecar processes of the campaign's own), ``campaign`` runs it all; ``python -m
tests.chaos`` is the long form (``make chaos``), ``tests/integration/test_fault_campaign.py`` the short one.
"""
