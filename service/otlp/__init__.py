"""What the two OTLP receivers share (SPEC §3.2 logs, §3.4 traces): attribute values and their coercion
(attributes, json_values, proto_values, values), gzip bodies, telling an OTLP/JSON request from another
format sent to the wrong place (shapes), and the redaction of personal attributes (redaction)."""
