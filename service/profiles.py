"""Which diagnosis profile judges a run (SPEC §4.1). Pure: a tenant's profiles are handed in.

The first that applies:

1. the profile the run names itself (SPEC §3.1 `profile`);
2. a profile naming the run's identity exactly (several: the first by name);
3. the profile whose glob matching the identity is the longest (`claude-code*`; ties: the first by name);
4. a tenant profile naming the run's input kind (`session`, `otlp_logs`, `otlp_traces`; ties: by name);
5. the input kind's built-in default: `long-session` for OTLP log sessions, `agent` for posted sessions and
   traces (both run every detector, SPEC §4.2: errors count). `critiqor` judges the runs that ask for it.

A profile's `identities` and `inputs` are separate rules: a profile holding both applies to those identities
whatever their input, and to every identity of those inputs that no identity rule claims. An entry with
`*`, `?` or `[` is a glob (fnmatch, case-sensitive: `[!x]` negates a class); any other names one identity.
The built-in profiles keep their thresholds, but a tenant may give them rules (`long-session` for
`claude-code*` sessions, `critiqor` for its OTLP logs). A tenant's profiles and rules are its own.
"""

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase, translate

from service.diagnosis import AGENT, BUILT_IN, LONG_SESSION, Profile
from service.errors import FieldError
from service.vocab import InputKind

GLOB_CHARACTERS = frozenset("*?[")
DEFAULT_OF_INPUT: dict[str, Profile] = {
    InputKind.SESSION: AGENT,
    InputKind.OTLP_LOGS: LONG_SESSION,
    InputKind.OTLP_TRACES: AGENT,
}


def is_glob(entry: str) -> bool:
    return not GLOB_CHARACTERS.isdisjoint(entry)


@dataclass(frozen=True)
class Placed:
    """A profile and where it applies."""

    profile: Profile
    identities: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()

    @property
    def built_in(self) -> bool:
        return self.profile.name in BUILT_IN


@dataclass(frozen=True)
class Rule:
    """One step of the resolution: runs whose identity (`identity`, `glob`) or input kind (`input`,
    `default`) is `match` are judged under `profile`."""

    kind: str
    match: str
    profile: str

    def applies(self, identity: str, input_kind: str) -> bool:
        if self.kind == "identity":
            return identity == self.match
        if self.kind == "glob":
            return fnmatchcase(identity, self.match)
        return input_kind == self.match


class TenantProfiles:
    """The built-in profiles and a tenant's own (a tenant row for a built-in name holds its rules only).
    Made once per profile set (service.services.profiles keeps it while the set is unchanged): the rules
    are compiled here, so resolving a run's profile is a dictionary look-up for an exact identity and one
    compiled match a glob, however many runs are judged."""

    def __init__(self, placed: Iterable[Placed] = ()) -> None:
        self.placed = tuple(placed)
        self.by_name: dict[str, Placed] = {name: Placed(profile) for name, profile in BUILT_IN.items()}
        for one in self.placed:
            profile = BUILT_IN.get(one.profile.name, one.profile)
            self.by_name[profile.name] = Placed(profile, one.identities, one.inputs)
        self.rules: tuple[Rule, ...] = _rules(sorted(self.by_name.values(), key=lambda one: one.profile.name))
        self._exact: dict[str, str] = {}
        self._inputs: dict[str, str] = {}
        for rule in self.rules:
            if rule.kind == "identity":
                self._exact.setdefault(rule.match, rule.profile)
            elif rule.kind in ("input", "default"):
                self._inputs.setdefault(rule.match, rule.profile)
        self._globs: list[tuple[Callable[[str], object], str]] = [
            (re.compile(translate(rule.match)).match, rule.profile) for rule in self.rules if rule.kind == "glob"
        ]

    def named(self, name: str) -> Profile | None:
        found = self.by_name.get(name)
        return None if found is None else found.profile

    def resolve(self, identity: str, input_kind: str, own: str = "") -> Profile:
        """The profile that judges a run of `identity` received as `input_kind` that names `own` ('' none)."""
        if own:
            profile = self.named(own)
            if profile is None:
                raise unknown_profile(own)
            return profile
        name = self._exact.get(identity) or next((name for match, name in self._globs if match(identity)), None)
        return self.by_name[name or self._inputs[input_kind]].profile

    def identities(self) -> int:
        """The identities and globs its profiles name, all together."""
        return sum(len(one.identities) for one in self.by_name.values())


def unknown_profile(name: str, field: str = "profile") -> FieldError:
    return FieldError(field, f"no diagnosis profile {name!r}: name a built-in one or one defined with PUT /v1/profiles")


def _rules(placed: list[Placed]) -> tuple[Rule, ...]:
    """Every rule in the order it is tried (`placed` in name order, so ties go to the first name)."""
    entries = [(entry, one.profile.name) for one in placed for entry in one.identities]
    exact = sorted(
        (Rule("identity", entry, name) for entry, name in entries if not is_glob(entry)),
        key=lambda rule: (rule.match, rule.profile),
    )
    globs = sorted(
        (Rule("glob", entry, name) for entry, name in entries if is_glob(entry)),
        key=lambda rule: (-len(rule.match), rule.profile, rule.match),
    )
    order = list(InputKind)
    inputs = sorted(
        (Rule("input", kind, one.profile.name) for one in placed for kind in one.inputs),
        key=lambda rule: (order.index(InputKind(rule.match)), rule.profile),
    )
    defaults = [Rule("default", kind, profile.name) for kind, profile in DEFAULT_OF_INPUT.items()]
    return (*exact, *globs, *inputs, *defaults)
