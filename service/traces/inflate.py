"""gzip request bodies (`Content-Encoding: gzip`), of one member or several: inflated by
`service.otlp.gzip.gunzip_body`, the one inflater of both OTLP receivers, with its decode errors read as
the traces' own (`TraceDecodeError`, a 400 of /v1/traces)."""

from service.otlp.attributes import InflatedTooLarge, OTLPDecodeError
from service.otlp.gzip import gunzip_body
from service.traces.spans import TraceDecodeError


def gunzip_members(body: bytes, max_bytes: int) -> bytes:
    """Every member inflated, concatenated. Raises InflatedTooLarge (HTTP 413) once the output would
    pass `max_bytes`; TraceDecodeError when the body is not gzip, is truncated, or has bytes after a
    member that do not start another."""
    try:
        return gunzip_body(body, max_bytes)
    except InflatedTooLarge:
        raise
    except OTLPDecodeError as error:
        raise TraceDecodeError(str(error)) from None
