"""The receivers: each input converted once into the run model (service.model) and stored.

- `whole`: runs posted whole (POST /v1/sessions, its batch, `repute ingest`): judged at once.
- `stream`: runs opened and fed through /v1/runs: events stored as they come, judged at their finalize.
- `otlp_logs`: OTLP log records (SPEC §3.2), stored by session; a session is judged when it goes idle.
- `otlp_traces`: OTLP spans (SPEC §3.4), stored by trace; a trace's runs are judged once it settles.

What a run finalized later is judged from is gathered by service/services/assembly.py; the finalize itself
is service/services/finalize.py, the same for every input.
"""
