"""What the two OTLP receivers share (SPEC §3.2, §3.4): telling an OTLP/JSON request from another
format sent to the wrong place."""
