"""gzip request bodies (`Content-Encoding: gzip`), of one member or several.

A gzip stream may be several members back to back (what `cat a.gz b.gz` or a compressor that flushes
in pieces writes); all of them are inflated (`service.judge.gunzip_body` reads one member only). The
inflated size is bounded while inflating, so a small bomb never takes the memory.

zlib copies the input left over after a member's end; the input is fed in chunks that start small and
double, so those copies stay proportional to the members' own sizes and a body of many tiny members
costs linear time.
"""

import zlib

from service.judge.otlp import InflatedTooLarge
from service.traces.spans import TraceDecodeError

GZIP_WBITS = 16 + zlib.MAX_WBITS
FIRST_CHUNK_BYTES = 64
LARGEST_CHUNK_BYTES = 1 << 20


def gunzip_members(body: bytes, max_bytes: int) -> bytes:
    """Every member inflated, concatenated. Raises InflatedTooLarge (HTTP 413) once the output would
    pass `max_bytes`; TraceDecodeError when the body is not gzip, is truncated, or has bytes after a
    member that do not start another."""
    data = memoryview(body)
    parts: list[bytes] = []
    offset, room = 0, max_bytes
    while True:
        inflated, offset = _inflate_member(data, offset, room, max_bytes)
        parts.append(inflated)
        room -= len(inflated)
        if offset == len(data):
            return b"".join(parts)


def _inflate_member(data: memoryview, offset: int, room: int, max_bytes: int) -> tuple[bytes, int]:
    """The member that starts at `offset`, inflated, and the offset after it."""
    inflater = zlib.decompressobj(wbits=GZIP_WBITS)
    pieces: list[bytes] = []
    chunk_bytes = FIRST_CHUNK_BYTES
    while not inflater.eof:
        chunk = data[offset : offset + chunk_bytes]
        if not chunk:
            raise TraceDecodeError("gzip body is truncated")
        try:
            piece = inflater.decompress(chunk, room + 1)
        except zlib.error as error:
            raise TraceDecodeError(f"body is not valid gzip: {error}") from None
        room -= len(piece)
        if room < 0:
            raise InflatedTooLarge(f"gzip body inflates past {max_bytes} bytes")
        pieces.append(piece)
        offset += len(chunk) - len(inflater.unused_data)
        chunk_bytes = min(2 * chunk_bytes, LARGEST_CHUNK_BYTES)
    return b"".join(pieces), offset
