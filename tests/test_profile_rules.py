"""Which profile judges a run (service.profiles, SPEC §4.1), pure: the run's own, an exact identity, the
longest matching glob (ties by name), an input kind, the input kind's built-in default."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.diagnosis import CRITIQOR, LONG_SESSION, Profile
from service.diagnosis.built_in import EVERY_DETECTOR
from service.errors import FieldError
from service.profiles import Placed, Rule, TenantProfiles


def _profile(name: str, high: int = 50_000) -> Profile:
    return Profile(
        name, tokens_high=high, tokens_critical=2 * high, tokens_per_point=high // 4, duplicates=3,
        detectors=EVERY_DETECTOR,
    )  # fmt: skip


CODING = Placed(_profile("coding"), identities=("claude-code*",))
CODING_ACME = Placed(_profile("coding-acme"), identities=("claude-code-acme*",))
ALSO_LONG = Placed(_profile("also-long"), identities=("claude-code-acme*",))  # as long: ties go to the first name
ONE_AGENT = Placed(_profile("one-agent"), identities=("claude-code-acme-7",))
TRACED = Placed(_profile("traced"), inputs=("otlp_traces",))
TENANT = TenantProfiles([CODING, CODING_ACME, ALSO_LONG, ONE_AGENT, TRACED])


@pytest.mark.parametrize(
    ("identity", "input_kind", "own", "expected"),
    [
        ("claude-code-acme-7", "session", "critiqor", "critiqor"),  # 1. the run's own
        ("claude-code-acme-7", "otlp_traces", "", "one-agent"),  # 2. the exact name, before any glob or input
        ("claude-code-acme-8", "otlp_traces", "", "also-long"),  # 3. the longest glob; a tie: the first name
        ("claude-code-9", "otlp_traces", "", "coding"),  # 3. the only glob that matches
        ("Claude-Code-9", "session", "", "agent"),  # globs match case-sensitively
        ("travel-agent", "otlp_traces", "", "traced"),  # 4. a tenant profile naming the input kind
        ("travel-agent", "otlp_logs", "", "long-session"),  # 5. the input kind's built-in default
        ("travel-agent", "session", "", "agent"),  # errors count (SPEC §4.2): not critiqor
    ],
)
def test_the_order_of_resolution(identity: str, input_kind: str, own: str, expected: str) -> None:
    assert TENANT.resolve(identity, input_kind, own).name == expected


def test_the_rules_are_listed_in_the_order_they_are_tried() -> None:
    assert TENANT.rules == (
        Rule("identity", "claude-code-acme-7", "one-agent"),
        Rule("glob", "claude-code-acme*", "also-long"),
        Rule("glob", "claude-code-acme*", "coding-acme"),
        Rule("glob", "claude-code*", "coding"),
        Rule("input", "otlp_traces", "traced"),
        Rule("default", "session", "agent"),
        Rule("default", "otlp_logs", "long-session"),
        Rule("default", "otlp_traces", "agent"),
    )


def test_a_built_in_profile_takes_rules_but_keeps_its_thresholds() -> None:
    forged = Placed(_profile("critiqor", high=1), identities=("agent-*",), inputs=("otlp_logs",))
    tenant = TenantProfiles([forged])
    assert tenant.named("critiqor") == CRITIQOR
    assert tenant.resolve("anyone", "otlp_logs") == CRITIQOR  # the tenant's input rule before the default
    assert tenant.resolve("agent-1", "otlp_logs") == CRITIQOR
    assert TenantProfiles().resolve("anyone", "otlp_logs") == LONG_SESSION


def test_an_unknown_own_profile_is_named() -> None:
    with pytest.raises(FieldError) as refused:
        TENANT.resolve("agent", "session", "nope")
    assert refused.value.field == "profile" and "nope" in str(refused.value)
    assert TenantProfiles().named("coding") is None  # another tenant's profiles are not there


_NAMES = st.text(alphabet="ab-*?[]!", min_size=1, max_size=6)


@settings(max_examples=200)
@given(
    placed=st.lists(
        st.tuples(st.lists(_NAMES, max_size=4), st.lists(st.sampled_from(["session", "otlp_logs"]), max_size=1)),
        max_size=5,
    ),
    identity=st.text(alphabet="ab-", min_size=1, max_size=6),
    input_kind=st.sampled_from(["session", "otlp_logs", "otlp_traces"]),
)
def test_the_compiled_resolution_is_the_first_rule_that_applies(
    placed: list[tuple[list[str], list[str]]], identity: str, input_kind: str
) -> None:
    """The rules are compiled once per profile set (exact names in a dictionary, globs matched compiled):
    the profile resolved is the one of the first listed rule that applies. Broken on purpose: the exact
    look-up after the globs, or `_inputs.setdefault` → a plain assignment (the last rule of an input kind
    wins) → this test fails."""
    tenant = TenantProfiles(
        Placed(_profile(f"p{number}"), tuple(identities), tuple(inputs))
        for number, (identities, inputs) in enumerate(placed)
    )
    first = next(rule for rule in tenant.rules if rule.applies(identity, input_kind))
    assert tenant.resolve(identity, input_kind).name == first.profile
