"""Offsets and status records that are hard to decode as a worker's JsonConverter does (repeated members,
big numbers, escapes, bad UTF-8, keys that are not a worker's), for the decoders of the Spark jobs: every
one must decode as the codec decodes it."""

from __future__ import annotations

KEY = b'["src",{"filename":"/a"}]'

TRICKY_VALUES: list[bytes | None] = [
    None,
    b'{"position":7}',
    b'{"z":1,"a":2,"_":3,"A":4,"a ":5,"a":6}',  # a repeated member: the last value, at the first place
    b'{"z":1,"a":2,"_":3,"A":4,"a ":5}',
    b'{"s":"text","t":true,"f":false,"n":null}',
    b"{}",
    b'{"big":999999999999999999}',  # 18 digits: the JVM's
    b'{"bigger":9999999999999999999}',  # 19: the codec's (beyond a long: no rank)
    b'{"neg":-12,"zero":0}',
    b'{"negzero":-0}',
    b'{"lead":01}',
    b'{"f":1.0}',
    b'{"f":1e5,"g":1.0E7,"h":-0.0}',
    b'{"esc":"x\\"y"}',
    b'{"esc":"\\u00e9\\n"}',
    b'{"pair":"\\ud83d\\ude00","lone":"\\ud800"}',
    '{"é":1,"日本":"日本"}'.encode(),
    b'{ "a": 1 }',
    b'{"a":1}\n',
    b'{"a":1} ',
    b'\xef\xbb\xbf{"a":1}',
    b'{"a":{"b":1}}',
    b'{"a":[1,2]}',
    b"[1]",
    b"1",
    b'"s"',
    b"null",
    b'{"a":"\xff"}',
    b'{"a":}',
    b'{"a":NaN}',
    b'{"a":1,}',
    b"",
    b'{"a":"tab\there"}',
    b'{"a":"del\x7f"}',
    # a '":' that is not where a scalar begins: a name that begins with ':' (its opening quote follows
    # '{' or ','), a string that ends with ','
    b'{":":1}',
    b'{":1":5}',
    b'{"a":1,":t":2}',
    b'{"a,":1,"b":2}',
    b'{",":":1,",":":-1}',  # a ',"' inside a value that reads like the start of a repeated name
    b'{"a":1,"b":","a":"}',
    b'{"a":1,"b":2,"a":3}',
    # past the members the shape is first searched for with (jvm_decode.FEW), and a name repeated there
    b'{"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8}',
    b'{"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9}',
    b'{"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m1":8}',
    b'{"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m1":9}',
    b'{"m1":1,"m2":2,"m3":3,"m4":4,"m5":5,"m6":6,"m7":7,"m8":8,"m9":9,"m5":"x"}',
    b'{"m":1,"m1":2}',  # an earlier name that begins a later one
    b'{"m1":1,"m":2}',
]

TRICKY_KEYS: list[bytes | None] = [
    KEY,
    b'["src", {"filename": "/a"}]',
    b'["src",null]',
    b'["src",{"f":"\\u00e9","g":1.5}]',
    b'["src"]',
    b"not json",
    None,
    '["é",{"日":"本"}]'.encode(),
]

STATUS_KEYS: list[bytes | None] = [
    b"status-connector-src",
    b"status-task-src-0",
    b"status-task-a-b-c-12",
    b"status-task-src-x",
    b"status-task-src-99999999999",
    b"status-topic-t1:connector-src",
    b"status-topic-t:1:connector-a:b",
    b"status-topic-:connector-src",
    b"status-connector-",
    b"status-connector-\xc3\xa9",
    b"status-connector-\xff",
    b"other",
    None,
]
STATE = b'{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":3}'
TOPIC = b'{"topic":{"name":"t1","connector":"src","task":0,"discoverTimestamp":1700000000000}}'
STATUS_VALUES: list[bytes | None] = [
    None,
    STATE,
    STATE[:-1] + b',"version":null}',
    STATE[:-1] + b',"version":"1.2.3"}',
    STATE[:-1] + b',"version":7}',
    b'{"state":"FAILED","trace":"org.example.Boom: no\\n\\tat x","worker_id":"w1:8083","generation":3}',
    b'{"state":"FAILED","trace":"plain","worker_id":"","generation":-1}',
    b'{"state":"","trace":null,"worker_id":"w","generation":1}',
    b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":2147483648}',
    b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":2147483647}',
    b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":1.0}',
    b'{"state":"RUNNING","worker_id":"w","generation":1}',
    b'{"trace":null,"state":"RUNNING","worker_id":"w","generation":1}',
    '{"state":"RUNNING","trace":null,"worker_id":"wé","generation":1}'.encode(),
    b'{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}\n',
    TOPIC,
    b'{"topic":{"name":"other","connector":"x","task":-3,"discoverTimestamp":-1}}',
    b'{"topic":{"name":"t1","connector":"src","task":2147483648,"discoverTimestamp":1}}',
    b'{"topic":{"name":"t1","connector":"src","task":0,"discoverTimestamp":9999999999999999999}}',
    b'{"topic":{"name":"t\\u0031","connector":"src","task":0,"discoverTimestamp":1}}',
    b'{"topic":"t1"}',
    b"[]",
    b"not json",
    b"\xff",
]
