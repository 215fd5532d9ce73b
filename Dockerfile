# The Repute service, for docker-compose (or any container runtime) against a ClickHouse server.
# The first stage builds the wheel; the image installs only that wheel, which carries the migrations and
# the named SQL queries, so it runs the installed package and no source tree.
FROM python:3.11-slim AS wheel

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY service ./service
COPY migrations ./migrations
COPY sql ./sql
RUN pip wheel --no-deps --wheel-dir /wheels .

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    REPUTE_DATA_DIR=/data

COPY --from=wheel /wheels /wheels
RUN pip install /wheels/*.whl \
    && useradd --system --uid 10001 --home-dir /data repute \
    && mkdir -p /data \
    && chown repute /data

USER repute
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=5 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
CMD ["repute", "serve", "--host", "0.0.0.0", "--port", "8000"]
