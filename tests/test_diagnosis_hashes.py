"""The diagnosis bytes are a contract (SPEC §4): stored hashes must still match after any change to the
engine. These values were computed before the engine was tuned for speed (issue #14); a change here is a
change of every stored diagnosis, never a refactoring."""

import hashlib
import random
from typing import Any

import orjson
import pytest

from service.diagnosis import diagnose, parse_run
from tests.conftest import FIXTURES

PARITY_ROWS = [orjson.loads(line) for line in (FIXTURES / "critiqor_parity.jsonl").read_bytes().splitlines()]

SESSION_HASHES = {
    "session_clean.json": "07a90cf7f84d032e8b7527060acb270930ec0f8add40e47d21add33657d2a5fd",
    "session_infra_error.json": "0badd42a9bdfcb9c7537c5ae73b7439b444fff8675f8b4ac4fc36698847fddf1",
    "session_loop.json": "90d6366e0ecd80b89bae9a58b62e0bfc12d77a6e91e7bca9416b0a23fdc46f16",
    "session_multi.json": "cfb1837caaed38aa110a5d22521a005632e4550a361f0c503af0e8990d1039f8",
}
PARITY_HASHES = {
    "v00": "f6b01be03132a8dfaa86d4a11a9fa1aa196808ce83d8934db9ab2ab207bca733",
    "v01": "ed9b57bb11803e8e515af60d1cca0344979a5d507c7a4c55779610bd443cf395",
    "v02": "7a705be36892f41b6e3a1377e045d9d33ca88acd1e82c9d09e594d0529a889fb",
    "v03": "f3fb6c834776a4ccef26166cd6c3d83fc5ce232d308c4b751dfa2d51e69b080f",
    "v04": "046e334fe68705bf65b6fac5533484490fe670e0c52342c6f65beaa0cdb85d26",
    "v05": "1c815a400fa7fa005dab0d07e4099a0fd740192e4aa285a6dae2b3139479061c",
    "v06": "fb90fc56f7c34b52f1aff0737a4ec7d8f8eead07bfe2b52eb808df2a4023daf0",
    "v07": "1de9e16f7ce4b2b8cae8e740a59f3f4d73625c568d3623914e70b6b65545faf2",
    "v08": "57f7dbeb64fb2650fd395084e199d0b191c6fb0deff3f7deaf3844c3726cfe47",
    "v09": "89bebb533309fcb133ac8fd7a96a6591840c154fdba5f2d172a314823ab8cb32",
    "v10": "b17f32540f12efcaeaa838ba950e1197c82282d3baff6ba07a2d121dba9de09f",
    "v11": "f3fb6c834776a4ccef26166cd6c3d83fc5ce232d308c4b751dfa2d51e69b080f",
    "v12": "8ac75baa7242ac93799d983862583b68f81e2a3d8ff73f51aa77e00c51cd39e8",
    "v13": "bd167ad8c0141c71bf5c4eefd14e1c9a1413715c098c4dcfc111f7d4a2f5a6ce",
    "v14": "2609bdb1badb1ed6c711374154b54a6aa2ec157c75881f6788c0439f6e030da1",
    "v15": "a9cca913f1ec924b4cb933b6a25c74e3395f58cb6b7e102645962221c1cf4536",
    "v16": "fe6c8dd105307f4372a924c97d7d2dc264e00eadd8c18c7a5cd23cec52166aa1",
    "v17": "21ecf01198ae2edc90846877465ba7f7bfdda189705b1af228945ec054de0c42",
    "v18": "690dfbf5f65014379f3c1143e5e2e55d1b7d59487bf5e29681c0b92a91853ac9",
    "v19": "d9581020065ae086eab4833e877785192a8cb2b83d0a1f0e05269ee30ac655b0",
    "v20": "a5348a0cbf164d00ebb0b27b4f434df17fffcc410411a7f94c5379e63debf7b0",
    "v21": "a26e936d6e98e1eafd809aab50dd23203ef8d0e0c763bbb5efe198d6c7c6f19f",
    "v22": "abd7b3a7c7709e9b0d8466b969a671c6570c318d2e81ef40f43bcc5b1de1ee37",
    "v23": "13b7fdf0dd76d31972771fefdb85bf6e14236f36f10a13d841f69ce68e622307",
    "v24": "4f77f95ca4596f03f17223f61a5819ee5f778500487b5bbcd1a0138e696325e7",
    "v25": "9509c853dcb156347a115fb09744f5ced6eafa6f3014977a8f18091411e47f0d",
    "v26": "e565306a40a90d38fc69136698762068f982bc646837183f65ca6085f72d9783",
    "v27": "b4e72a36c0a42b569430ecd4ef2e74ab041081aaea1abb4459ee762cedd2019e",
    "v28": "dcc5b48dfeeb90e9e0e30278c4ee08d5cb503df6260a8b7b40de422ddaac3a84",
    "v29": "d95f34db1520e66d665d7f57b7300bccb5ce080d55ff70af85dc6af4f9572ff7",
    "v30": "c44ea1e1bb2e24025acf8b0d593549d0ac26ee4d65f29c115f870a62d29fc173",
    "v31": "64f24404265e1131371378a9358f0079fab5839090ddc8e4f68fe4a2126314f7",
    "v32": "567c86245f6ffddb0661329c1883c653b8f9c4a3c4a52bd62b4aea8303a70e98",
    "v33": "a305042aa9af4dd5f57b2de85e2c842fb5de2ef38610b16c3e93d66b4f662d69",
    "v34": "605ef2083c980b2df75cd25af26cff6703123af7342d2ae11f452419f6546964",
    "v35": "e47c874889e11ffca54fa5e5a727388f664e07440f60a7d12c413c47efbcbf36",
    "v36": "942eb47b317b756418d44b8bbb69e43d0a3a490d16503bceb50314f79d1ede57",
    "v37": "73c33ec9dcc6f9cb661a44bbd33d532acaa428924f1da8f731ad918f9817f830",
    "v38": "620ec34c7878f28ea355841eb3e64a354bb8210e25bde4058f0950e14ac8c5d3",
    "v39": "2a017812c41428ca25042052962d43f7b3a99ed5fa245bcbe451c2b059bbc6ba",
}
# sha256 over the diagnosis hashes of `_awkward_runs()`, one per line.
AWKWARD_RUNS_DIGEST = "385ee17e19347a21095261e0c80dc82d16a657364c3b9527753480d780e18354"


def _awkward_event(rng: random.Random) -> dict[str, Any]:
    """Events that take every branch of the readers: other spellings and keys, odd values, colliding ids."""
    kind = rng.choice([
        "tool_call", "tool_call", "TOOL_CALL", "tool_output", "memory_event", "retry_event", "error_event",
        "context_event", "token_usage", "skill_event", "decision", "custom_kind", None, 7,
    ])  # fmt: skip
    event: dict[str, Any] = {} if kind == 7 else {rng.choice(["event", "type"]): kind}
    for name in rng.sample(
        [
            "used",
            "referenced",
            "status",
            "action",
            "invoked",
            "saturation",
            "saturation_score",
            "name",
            "skill",
            "tool",
            "args",
            "arguments",
            "usage",
            "total",
            "input",
            "tokens",
        ],
        4,
    ):
        event[name] = rng.choice([
            None, True, False, 0, 3, 96, 2.5, "", "false", "FALSE", "Ignored", "miss", "recall_failed", "mismatch",
            "compaction", "87%", "x", {}, {"k": 1}, {"b": [1, "é"], "a": None}, [1, 2], {"total_tokens": 700},
        ])  # fmt: skip
    if rng.random() < 0.3:
        event["event_id"] = rng.choice(["c0", "c0#2", "event_1", "failure_skill_failure", "failure_cost_explosion"])
    return event


def _awkward_runs() -> list[list[dict[str, Any]]]:
    rng = random.Random(14)
    return [[_awkward_event(rng) for _ in range(rng.randrange(0, 60))] for _ in range(300)]


def _hash_of(events: list[Any]) -> str:
    diagnosis = diagnose(events)
    assert diagnosis.to_dict()["diagnosis_hash"] == diagnosis.diagnosis_hash
    assert diagnosis.canonical_json() == orjson.dumps(diagnosis.to_dict(), option=orjson.OPT_SORT_KEYS)
    return diagnosis.diagnosis_hash


@pytest.mark.parametrize("name", sorted(SESSION_HASHES))
def test_session_fixture_hashes_are_pinned(name: str) -> None:
    assert _hash_of(parse_run((FIXTURES / name).read_bytes()).events) == SESSION_HASHES[name]


@pytest.mark.parametrize("row", PARITY_ROWS, ids=[row["id"] for row in PARITY_ROWS])
def test_parity_row_hashes_are_pinned(row: dict[str, Any]) -> None:
    assert _hash_of(row["events"]) == PARITY_HASHES[row["id"]]


def test_awkward_runs_digest_is_pinned() -> None:
    hashes = "\n".join(_hash_of(events) for events in _awkward_runs())
    assert hashlib.sha256(hashes.encode()).hexdigest() == AWKWARD_RUNS_DIGEST
