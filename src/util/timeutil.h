/* timeutil.h: clocks: monotonic milliseconds, wall-clock ISO-8601 stamps. */
#ifndef EGG_TIMEUTIL_H
#define EGG_TIMEUTIL_H

#include <stddef.h>

/* Milliseconds on the monotonic clock (for deadlines and latencies). */
double time_mono_ms(void);
/* Seconds since the epoch on the wall clock. */
double time_wall_s(void);
/* UTC time as "YYYY-MM-DDTHH:MM:SSZ" into `out` (at least 21 bytes). */
void time_iso8601(char *out, size_t n);
/* Sleep for `ms` milliseconds (restarted on signals). */
void time_sleep_ms(double ms);

#endif
