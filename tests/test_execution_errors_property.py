"""SPEC §6 as a property against the real store: any number of execution-error runs, declared by the
caller or evidenced by a staged error_event, changes no reputation figure of their identity."""

import random
import uuid
from datetime import UTC, date, datetime

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.diagnosis import parse_run
from service.model import RunMaterial
from service.services.inputs import material_of
from service.services.receivers.whole import ingest_sessions
from service.services.reputation import reputation_report
from service.store.client import Store
from service.testing.factory import make_session
from service.vocab import STAGES
from tests.reputation_oracle import reputation_figures

AS_OF = date(2026, 11, 1)
error_runs = st.lists(
    st.tuples(st.sampled_from(STAGES), st.sampled_from(["provider_error", "clone_error", "x-custom"]),
              st.booleans(), st.integers(0, 40)),
    min_size=1, max_size=4,
)  # fmt: skip


def _session(raw: dict) -> RunMaterial:
    return material_of(parse_run(orjson.dumps(raw)))


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(errors=error_runs, seed=st.integers(0, 1000))
def test_execution_error_runs_never_move_reputation(embedded_store: Store, errors: list, seed: int) -> None:
    tenant, rng, now = f"prop-{uuid.uuid4().hex[:8]}", random.Random(seed), datetime.now(UTC)
    quality = [_session(make_session(rng, f"q{i}", "agent-p", rng.randint(3, 30))) for i in range(3)]
    ingest_sessions(embedded_store, tenant, quality, now, 0.8)
    before = reputation_report(embedded_store, tenant, "agent-p", AS_OF)
    assert before is not None

    added = []
    for i, (stage, reason, declared, length) in enumerate(errors):
        raw = make_session(rng, f"err{i}", "agent-p", length)
        if declared:
            raw["execution"] = {"status": "execution_error", "stage": stage, "reason": reason}
        else:
            raw["events"].append({"event": "error_event", "stage": stage, "reason": reason, "error": "boom"})
        added.append(_session(raw))
    results = ingest_sessions(embedded_store, tenant, added, now, 0.8)
    assert all(r.record.execution_status == "execution_error" and r.record.score == 0.0 for r in results)
    after = reputation_report(embedded_store, tenant, "agent-p", AS_OF)
    assert after is not None and reputation_figures(after) == reputation_figures(before)
