"""``rest.steps.stamp``: the sidecar's own answers carry a worker's ``Server`` and a ``Date``, as Jetty's do."""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime

from control_plane.rest.steps.stamp import http_date, stamped


def test_an_answer_without_them_gets_the_server_and_a_date_first() -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"2")]
    got = stamped(headers, b"Jetty(12.0.34)")
    assert got[0] == (b"server", b"Jetty(12.0.34)")
    assert got[1][0] == b"date"
    assert got[2:] == headers


def test_a_workers_own_are_kept() -> None:
    headers = [(b"Server", b"Jetty(9.4.48.v20220622)"), (b"Date", b"Thu, 01 Jan 2026 00:00:00 GMT")]
    assert stamped(headers, b"Jetty(12.0.34)") is headers


def test_no_server_before_a_worker_named_one() -> None:
    got = stamped([(b"content-length", b"0")], None)
    assert [name for name, _ in got] == [b"date", b"content-length"]


def test_the_date_is_an_imf_fixdate_of_now() -> None:
    text = http_date().decode("ascii")
    assert text.endswith(" GMT") and len(text) == len("Thu, 26 Nov 2026 03:29:10 GMT")
    assert abs(parsedate_to_datetime(text).timestamp() - time.time()) < 2
