"""What the CLI talks to: the REST API, always. In embedded mode one process owns the store: when
`repute serve` runs on this data directory (or, from a directory without a store of its own, anywhere
for this user), commands go to it over HTTP; otherwise the same app runs in this process on the store
opened here, as the operator (`open_client` says in which order). So a CLI command is one function over one
client, and both paths answer exactly what the API answers."""

from service.client.api import ApiClient, ApiError, NoStore
from service.client.connect import open_client

__all__ = ["ApiClient", "ApiError", "NoStore", "open_client"]
