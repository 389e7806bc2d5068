"""egg_worker: the eval worker that checks and times LLM-written Triton kernels for egg."""
