"""`repute statement` and `repute verify` (SPEC §15): a statement fetched and written, and one checked offline
against the issuer's published keys (a file, a URL, or the server the CLI talks to)."""

from datetime import date
from pathlib import Path
from typing import Any

import httpx
import orjson

from service.client.api import ApiClient, ApiError
from service.statements.statement import Invalid, Verified, verify

KEYS_PATH = "/.well-known/repute-keys.json"


def read_json(path: Path, what: str) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except OSError as error:
        raise ApiError(f"cannot read the {what} {path}: {error.strerror or error}") from None
    except orjson.JSONDecodeError as error:
        raise ApiError(f"the {what} {path} is not JSON: {error}") from None


def published_keys(where: str | None, client: ApiClient | None) -> Any:
    """The key set to verify with: a file, a URL (its /.well-known path when it names only a server), or the
    API's own when `where` is None."""
    if where is None:
        assert client is not None
        return client.json("GET", KEYS_PATH)
    if where.startswith(("http://", "https://")):
        url = where if where.endswith(".json") else where.rstrip("/") + KEYS_PATH
        try:
            response = httpx.get(url, timeout=30)
            response.raise_for_status()
            return response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise ApiError(f"cannot read the keys at {url}: {error}") from None
    return read_json(Path(where), "keys file")


def checked(envelope: Any, keys: Any, today: date, proof: Any | None) -> Verified:
    """The statement verified; raises Invalid naming what failed."""
    if not isinstance(keys, dict):
        raise Invalid('the keys are not a JWK set ({"keys": [...]})')
    return verify(envelope, keys, today, proof)


def summary(verified: Verified, proved: bool) -> str:
    statement: dict[str, Any] = verified.statement
    line = (
        f"valid: {statement['subject']} scores {statement['score']} (confidence {statement['confidence']}) as of"
        f" {statement['as_of']}, issued by {statement['issuer']} with key {verified.keyid}, valid until"
        f" {statement['valid_until']}; evidence: {statement['evidence']['count']} events"
    )
    return line + ("; the event proved is among them" if proved else "")
