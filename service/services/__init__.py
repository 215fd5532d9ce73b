"""Services: the use cases of Repute, and the only callers of the store. Pure cores (diagnosis, judge,
outcome, reputation model) below, the store's repositories below them; the API and the CLI above."""
