/* fault.h: named fault points for the tests (SQLite's habit): EGG_FAULT makes chosen writes fail. */
#ifndef EGG_FAULT_H
#define EGG_FAULT_H

/*
 * EGG_FAULT="NAME[:N],NAME[:N],..." makes the first N passes through the
 * fault point NAME fail (N defaults to 1; 0 makes every pass fail);
 * "NAME@K" makes only the K-th pass fail. Points today: "task_finish" and
 * "run_status" (the store's final writes of a task and of a run: its status
 * once it ran), "commit" (a transaction's COMMIT), "program_json" (the
 * record of a whole program), "record" (a record a run's recorder gives the
 * store: a call, candidate, profile, decision or step). Unset, every call returns 0 at the cost of one
 * getenv per process. Thread-safe.
 */
int fault_hit(const char *name);
/* The unit tests' way in: the fault points as if EGG_FAULT were `spec` (NULL: none). */
void fault_arm(const char *spec);

#endif
