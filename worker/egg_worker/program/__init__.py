"""egg_worker.program: whole programs: cut into subgraph tasks (egg split), and the runtime that composes them."""
