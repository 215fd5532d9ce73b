"""gzip request bodies (`Content-Encoding: gzip`) of both OTLP receivers and of every route, inflated
within a size limit."""

import zlib

from service.otlp.attributes import InflatedTooLarge, OTLPDecodeError

GZIP_WBITS = 16 + zlib.MAX_WBITS
FIRST_CHUNK_BYTES = 64
LARGEST_CHUNK_BYTES = 1 << 20


def gunzip_body(body: bytes, max_bytes: int) -> bytes:
    """Inflate a `Content-Encoding: gzip` body: every member, concatenated (a gzip stream may be several
    members back to back, as `cat a.gz b.gz` or a compressor that flushes in pieces writes). Raises
    InflatedTooLarge once the output would pass `max_bytes` (bounded while inflating, so a small bomb
    never takes the memory); OTLPDecodeError when the body is not gzip, is truncated, or has bytes after
    a member that do not start another."""
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
    """The member that starts at `offset`, inflated, and the offset after it. zlib copies the input left
    over after a member's end, so the input is fed in chunks that start small and double: those copies
    stay proportional to the members' own sizes, and a body of many tiny members costs linear time."""
    inflater = zlib.decompressobj(wbits=GZIP_WBITS)
    pieces: list[bytes] = []
    chunk_bytes = FIRST_CHUNK_BYTES
    while not inflater.eof:
        chunk = data[offset : offset + chunk_bytes]
        if not chunk:
            raise OTLPDecodeError("gzip body is truncated")
        try:
            piece = inflater.decompress(chunk, room + 1)
        except zlib.error as error:
            raise OTLPDecodeError(f"body is not valid gzip: {error}") from None
        room -= len(piece)
        if room < 0:
            raise InflatedTooLarge(f"gzip body inflates past {max_bytes} bytes")
        pieces.append(piece)
        offset += len(chunk) - len(inflater.unused_data)
        chunk_bytes = min(2 * chunk_bytes, LARGEST_CHUNK_BYTES)
    return b"".join(pieces), offset
