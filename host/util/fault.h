/* Test-only fault points (issue 18; docs/reliability.md, "Fault
 * injection"). Compiled in only with -DJIG_FAULT_POINTS=ON, which the test
 * build sets and a release build never does; otherwise every point is
 * nothing. Compiled in, JIG_FAULT_POINT("stage") in a process whose
 * environment has JIG_FAULT_STOP=stage appends "stage pid\n" to the file
 * $JIG_FAULT_LOG and stops the process (SIGSTOP; once a process; JIG_FAULT_STOP
 * may list several stages separated by commas, each stopping once), so the harness can
 * SIGKILL whichever owner it chooses at exactly that moment from outside,
 * then SIGCONT what it spared. Nothing else changes.
 * JIG_FAULT_FAILS("what") is true in a process whose environment has
 * JIG_FAULT_FAIL=what: the caller then takes the path it takes when that
 * call fails (an error path no test could reach otherwise).
 * JIG_FAULT_DELAY("stage") sleeps JIG_FAULT_DELAY_MS milliseconds in a
 * process whose environment has JIG_FAULT_DELAY=stage: a slow step (a
 * slow input capture, say) without changing what it does. */
#ifndef JIG_UTIL_FAULT_H
#define JIG_UTIL_FAULT_H

#include <stdbool.h>

#ifdef JIG_FAULT_POINTS
void jig_fault_point(const char *stage);
bool jig_fault_fails(const char *what);
void jig_fault_delay(const char *stage);
#define JIG_FAULT_POINT(stage) jig_fault_point(stage)
#define JIG_FAULT_FAILS(what) jig_fault_fails(what)
#define JIG_FAULT_DELAY(stage) jig_fault_delay(stage)
#else
#define JIG_FAULT_POINT(stage) ((void)0)
#define JIG_FAULT_FAILS(what) false
#define JIG_FAULT_DELAY(stage) ((void)0)
#endif

#endif
