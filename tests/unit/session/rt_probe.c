/* jig-rt-probe: the session runtime API from a shell, for the
 * supported-host cases (tests/session/runtime.sh), as the unprivileged user
 * with the real /run/user/<uid> and cgroup v2.
 *   jig-rt-probe hold [CGROUP]  opens a session (its cgroup recorded), prints
 *                               "ID TMPDIR", then waits: EOF on stdin closes
 *                               it and exits 0; a signal ends it as it ends
 *   jig-rt-probe sweep          prints how many directories the sweep removed
 *   jig-rt-probe runtime        prints the checked $XDG_RUNTIME_DIR */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "session/runtime.h"
#include "util/note.h"

int main(int argc, char **argv)
{
	struct jig_error e = {0};
	char buf[4096];
	int r = -1;
	jig_note_to(stderr); /* the sweep's notes, as host/cli sends them */
	if (argc >= 2 && strcmp(argv[1], "hold") == 0) {
		struct jig_session_rt rt;
		if ((r = jig_session_rt_open(&rt, &e)) == 0 && argc > 2)
			r = jig_session_rt_set_cgroup(&rt, argv[2], &e);
		if (r == 0) {
			printf("%s %s\n", rt.id, rt.tmpdir);
			fflush(stdout);
			while (read(0, buf, sizeof(buf)) > 0) {
			}
			jig_session_rt_close(&rt);
		}
	} else if (argc == 2 && strcmp(argv[1], "sweep") == 0) {
		int n = jig_session_rt_sweep(&e);
		if (n >= 0)
			printf("%d\n", n);
		r = n < 0 ? n : 0;
	} else if (argc == 2 && strcmp(argv[1], "runtime") == 0) {
		if ((r = jig_runtime_dir(buf, sizeof(buf), &e)) == 0)
			printf("%s\n", buf);
	} else {
		fprintf(stderr, "usage: jig-rt-probe hold [CGROUP] | sweep | runtime\n");
		return 2;
	}
	if (r < 0)
		fprintf(stderr, "jig-rt-probe: %s\n", e.msg);
	return r < 0 ? -r : 0;
}
