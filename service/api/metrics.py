"""Prometheus metrics: request counts and latencies by route, runs finalized, events ingested, store errors."""

from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.types import ASGIApp, Receive, Scope, Send

from service.api.watch import WatchedResponse

# Label values are bounded, or anyone could grow /metrics without a key: a request names any method
# and any path; unknown methods read "other", and paths no route matches "unmatched".
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class Metrics:
    """One registry per app, so several apps in one process (tests) never collide."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "repute_http_requests", "HTTP requests", ["method", "route", "status"], registry=self.registry
        )
        self.latency = Histogram(
            "repute_http_request_duration_seconds", "HTTP request latency", ["method", "route"], registry=self.registry
        )
        self.runs_finalized = Counter("repute_runs_finalized", "Runs finalized", registry=self.registry)
        self.events_ingested = Counter("repute_events_ingested", "Run events stored", registry=self.registry)
        self.store_errors = Counter("repute_store_errors", "Store unavailable errors", registry=self.registry)
        self.sweep_failures = Counter(
            "repute_session_sweep_failures",
            "Idle sessions the sweeper could not finalize: closed as execution errors (undiagnosable), or retried",
            ["outcome"],
            registry=self.registry,
        )


class MetricsMiddleware:
    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        response = WatchedResponse(send)
        try:
            await self.app(scope, receive, response.send)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            method = scope["method"] if scope["method"] in KNOWN_METHODS else "other"
            self.metrics.requests.labels(method, route, str(response.status)).inc()
            self.metrics.latency.labels(method, route).observe(response.seconds())
