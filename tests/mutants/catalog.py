"""catalog.py: the mutations scripts/mutants.py applies, one at a time.

Each entry:
  name     short, unique
  point    what it breaks, in a few words (a threat class, an issue point)
  file     the product file it changes (relative to the repository root)
  find     text that occurs exactly once in that file
  replace  what the mutation puts there instead
  tests    the tests that must notice: "unit:SUITE", "cli:tNN-name",
           "worker:test_name [ARGS]", "adv:PREFIX[,PREFIX]" (adversarial
           candidates whose names start so), "layers"
  ci       true for the small fixed subset `make test` runs on every change
  gpu      true when its tests need a GPU (scripts/mutants.py --gpu runs them there)
"""
from threats import THREAT_MUTANTS

OWN_MUTANTS = [
    # Secrets: each layer that keeps keys from candidates, tested with keys present.
    dict(name="worker-keeps-secret-env", point="secrets: worker scrub",
         file="worker/egg_worker/sandbox.py", find="            del os.environ[name]", replace="            pass",
         tests=["worker:test_worker"]),
    dict(name="launch-passes-secret-env", point="secrets: egg's child env",
         file="src/eval/launch.c", find="if (!config_env_is_secret(name))", replace="if (name)",
         tests=["cli:t25-secrets"], ci=True),
    dict(name="egg-environ-keeps-key", point="secrets: egg's own env",
         file="src/config/config.c", find="		memset(v, 0, strlen(v));\n", replace="",
         tests=["cli:t25-secrets"]),
]

MUTANTS = OWN_MUTANTS + THREAT_MUTANTS
