/* The session's terminal (issue 34): jig allocates a pseudo-terminal pair
 * and relays it; a scope gets only the slave ("@terminal"), never the
 * operator's terminal, so TIOCSTI and terminal-reading tricks reach only
 * jig's pty. The operator's terminal is put in raw mode while the relay
 * runs (when stdin is a terminal) and restored on every exit path;
 * window-size changes (SIGWINCH on jig) are forwarded to the pty.
 *
 *   open → (slave at descriptor 0/1/2 of the scope) → start → launch → stop
 */
#ifndef JIG_RUN_TERMINAL_H
#define JIG_RUN_TERMINAL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <termios.h>

#include "util/error.h"

/* Each direction's buffer (bounded: a slow side blocks the other's reads). */
#define JIG_TERMINAL_BUF 4096

struct jig_terminal {
	int master, slave; /* the pty pair; slave is what a scope gets */
	int in, out;	   /* the operator's side: descriptors 0 and 1 */
	bool in_tty;	   /* stdin is a terminal: it is put in raw mode */
	bool raw;	   /* the operator's mode was changed (saved holds it) */
	struct termios saved;
	bool running;
	pthread_t thread;
	int wake[2];	 /* the stop request to the relay thread */
	int winch;	 /* signalfd for SIGWINCH, or -1 */
	sigset_t mask;	 /* the caller's mask before SIGWINCH was blocked */
	bool masked;
};

/* Opens a pty pair (posix_openpt; the slave opened O_NOCTTY, never jig's
 * own controlling terminal) with the operator's window size and, when
 * stdin is a terminal, its modes. Nothing is changed on the operator's
 * side yet. */
int jig_terminal_open(struct jig_terminal *t, struct jig_error *e);
/* Puts the operator's terminal in raw mode (when stdin is one), blocks
 * SIGWINCH in the calling thread (a signalfd takes it) and starts the
 * relay thread. Call it with SIGINT, SIGTERM and SIGHUP blocked (jig_launch's
 * ready) so the thread never takes them. On failure nothing is left changed. */
int jig_terminal_start(struct jig_terminal *t, struct jig_error *e);
/* Idempotent, also after a failed or skipped start: stops the relay after
 * copying what the pty still holds to the operator, restores the
 * operator's mode and the signal mask, closes the pair. */
void jig_terminal_stop(struct jig_terminal *t);

#endif
