"""Portable reputation (SPEC §15): a reputation statement anyone can verify offline. Pure: no I/O, no clock.

- `merkle`: the evidence, an RFC 6962 Merkle tree over the canonical rows of the events that count.
- `envelope`: DSSE envelopes (in-toto's signing envelope) signed with Ed25519 (the `cryptography` package).
- `statement`: the payload's canonical JSON, and what a verifier checks (`verify`).
"""
