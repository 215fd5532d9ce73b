"""The causal graph (SPEC §4): event nodes linked by `precedes`, failure nodes, `causes` and `reinforces`.

Node ids. Callers may repeat an event_id, and an event may call itself `failure_<type>`, so node ids are
made unique in input order: an event keeps its id unless an earlier event (or a failure node) holds it;
then it becomes `<id>#2`, `<id>#3`... (the first free one). Cause evidence uses these node ids too, so
every evidence id names exactly one node. Edges are unique as (from, to, type): a `reinforces` edge may
join the same pair as a `precedes` edge.
"""

from collections.abc import Sequence
from itertools import pairwise

from service.diagnosis.cause import Cause

FAILURE_NODE_PREFIX = "failure_"
FAILURE_NODE_TYPE = "failure"
PRECEDES, CAUSES, REINFORCES = "precedes", "causes", "reinforces"


def failure_node_id(failure_type: str) -> str:
    return FAILURE_NODE_PREFIX + failure_type


def node_ids(event_ids: list[str], taken_ids: frozenset[str]) -> list[str]:
    """Unique node ids for the events (see the module docstring); `taken_ids` are the failure nodes' ids."""
    distinct = set(event_ids)
    if len(distinct) == len(event_ids) and taken_ids.isdisjoint(distinct):
        return event_ids
    taken = set(taken_ids)
    unique = []
    for event_id in event_ids:
        node_id, copy = event_id, 1
        while node_id in taken:
            copy += 1
            node_id = f"{event_id}#{copy}"
        taken.add(node_id)
        unique.append(node_id)
    return unique


def causal_graph(
    ids: Sequence[str], types: Sequence[str], labels: Sequence[str], causes: Sequence[Cause]
) -> dict[str, list[dict[str, str]]]:
    """Nodes and edges as dicts whose keys are already in sorted order, so the graph serializes canonically
    without sorting (see Diagnosis)."""
    nodes = [
        {"id": node_id, "label": label, "type": kind} for node_id, kind, label in zip(ids, types, labels, strict=True)
    ]
    failure_types = dict.fromkeys(cause.type for cause in causes)
    nodes += [{"id": failure_node_id(kind), "label": kind, "type": FAILURE_NODE_TYPE} for kind in failure_types]
    edges = [{"from": a, "to": b, "type": PRECEDES} for a, b in pairwise(ids)]
    links: dict[tuple[str, str, str], None] = {}  # ordered and without repeats
    for cause in causes:
        failure, evidence = failure_node_id(cause.type), cause.evidence
        links.update(dict.fromkeys((source, failure, CAUSES) for source in evidence))
        links.update(dict.fromkeys((a, b, REINFORCES) for a, b in pairwise(evidence)))
    edges += [{"from": a, "to": b, "type": kind} for a, b, kind in links]
    return {"edges": edges, "nodes": nodes}
