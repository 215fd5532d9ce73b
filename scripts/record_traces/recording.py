"""One recording, run in a process of its own (instrumentations patch libraries for the whole process):
an in-memory OpenTelemetry SDK, the framework's instrumentation, the application against the fake model,
then the finished spans as a JSON list of `ReadableSpan.to_json()` objects."""

import importlib
import json
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from scripts.record_traces.app import SERVICE_NAME
from scripts.record_traces.fake_model import FakeModel


def provider_with_memory() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider, exporter


def record(name: str, out: Path) -> dict[str, Any]:
    """Runs the recording `name` (a module of this package), writes `<out>/<name>.json`, and returns what
    the fake model served and the versions of the libraries it used."""
    module = importlib.import_module(f"scripts.record_traces.{name}")
    provider, exporter = module.own_provider() if hasattr(module, "own_provider") else provider_with_memory()
    module.instrument(provider)
    with FakeModel(module.TURNS) as model:
        module.run(model.base_url)
    provider.force_flush()
    spans = [json.loads(span.to_json()) for span in exporter.get_finished_spans()]
    (out / f"{name}.json").write_text(json.dumps(spans, indent=1) + "\n")
    return {
        "title": module.TITLE,
        "libraries": {library: _version_and_licence(library) for library in module.LIBRARIES},
        "served": model.served,
        "spans": len(spans),
    }


def _version_and_licence(name: str) -> dict[str, str]:
    """The installed version, and the licence the distribution declares: its SPDX expression, else its
    licence classifiers, else the title line of the licence file it ships."""
    distribution = metadata.distribution(name)
    meta = distribution.metadata
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or () if c.startswith("License ::")]
    licence = meta["License-Expression"] or ", ".join(classifiers)
    for file in meta.get_all("License-File") or ():
        text = distribution.read_text(f"licenses/{file}") or distribution.read_text(file) or ""
        licence = licence or next((line.strip() for line in text.splitlines() if line.strip()), "")
    return {"version": meta["Version"], "licence": licence or "unknown"}


def installed(libraries: tuple[str, ...]) -> bool:
    try:
        for library in libraries:
            metadata.version(library)
    except metadata.PackageNotFoundError:
        return False
    return True


if __name__ == "__main__":
    if not installed(importlib.import_module(f"scripts.record_traces.{sys.argv[1]}").LIBRARIES):
        sys.exit(3)
    print(json.dumps(record(sys.argv[1], Path(sys.argv[2]))))
