/* The live state of this process's scopes, as their cgroup files say it
 * (for jig run --display web): read-only, no decision rests on it. */
#ifndef JIG_SANDBOX_OBSERVE_H
#define JIG_SANDBOX_OBSERVE_H

#include <jansson.h>
#include <stddef.h>

/* At most max scopes of this process now, each {name, state "running",
 * memory_bytes, memory_max_bytes, tasks, tasks_max, cpu_usec, cpu_max,
 * deadline_left_ms (when left >= 0)}; numbers the kernel does not give
 * (or "max") are null. An empty array without cgroup v2. */
json_t *jig_sandbox_observe(size_t max, long long left);

#endif
