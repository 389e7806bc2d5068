"""threats.py: one mutation (at least) per exploit class of
docs/threat-model.md: each removes or weakens the defence that stops that
class, and the adversarial candidates of the class (tests/adversarial/cNN_*)
must then no longer be rejected as expected. Entries as in catalog.py."""

THREAT_MUTANTS: list = []
