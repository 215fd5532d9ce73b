"""A stand-in agent for `repute record`: it prints its events as JSON lines (the way Critiqor's runtime
observer reads an agent) and a line of plain output, and exits 0. `repute record -- python3
examples/travel_agent.py` runs it and records the run as `travel_agent`'s."""

import json

EVENTS = [
    {"event": "tool_call", "tool": "search_flights", "args": {"from": "LIS", "to": "OSL", "date": "2026-12-01"}},
    {"event": "tool_output", "tool": "search_flights", "status": "ok", "used": True},
    {"event": "decision", "choice": "TP1234", "reason": "cheapest direct flight"},
    {"event": "tool_call", "tool": "book_flight", "args": {"flight": "TP1234"}},
    {"event": "tool_output", "tool": "book_flight", "status": "ok", "used": True},
]

print("travel agent: booking LIS -> OSL", flush=True)
for event in EVENTS:
    print(json.dumps(event), flush=True)
