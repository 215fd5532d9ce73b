"""Log records as stored text, and their content ids (so a resent record is recognised)."""

import hashlib

import msgspec
import orjson

from service.judge.otlp import LogRecord

_decoder = msgspec.json.Decoder(LogRecord)


def encode_record(record: LogRecord) -> str:
    return msgspec.json.encode(record).decode()


def decode_record(payload: bytes | str) -> LogRecord:
    return _decoder.decode(payload)


def record_id(record: LogRecord, occurrence: int = 1) -> str:
    """A digest of the record's content (attribute order ignored); the n-th identical record of one
    request gets `-n`, so repeats within a request are kept while a resent request collapses."""
    canonical = orjson.dumps(msgspec.to_builtins(record), option=orjson.OPT_SORT_KEYS)
    digest = hashlib.sha256(canonical).hexdigest()[:32]
    return digest if occurrence == 1 else f"{digest}-{occurrence}"
