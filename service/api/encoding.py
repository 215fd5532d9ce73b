"""A request body's Content-Encoding, on every route: none (or `identity`) or gzip. The OTLP receivers
inflate theirs while decoding (service.otlp.gzip.gunzip_body); every other route reads its body inflated
(service.api.routing). Any other encoding is refused with a 415 that names it."""

from starlette.requests import Request

GZIP = "gzip"
_AS_IS = ("", "identity")


class UnsupportedEncoding(Exception):
    def __init__(self, encoding: str) -> None:
        super().__init__(f"Content-Encoding {encoding!r} is not supported: send the body as is, or with gzip")


def body_encoding(request: Request) -> str:
    """ "" for a body sent as is, or GZIP; raises UnsupportedEncoding for any other."""
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding in _AS_IS:
        return ""
    if encoding == GZIP:
        return GZIP
    raise UnsupportedEncoding(encoding)
