/* The session's terminal (issue 34): jig allocates a pseudo-terminal pair
 * and relays it; a scope gets only the slave ("@terminal"), never the
 * operator's terminal, so TIOCSTI and terminal-reading tricks reach only
 * jig's pty. The operator's terminal is put in raw mode while the relay
 * runs (when stdin is a terminal) and restored on every exit path;
 * window-size changes (SIGWINCH on jig) are forwarded to the pty.
 *
 *   open → (slave at descriptor 0/1/2 of the scope) → start → launch → stop
 */
#ifndef JIG_PROC_TERMINAL_H
#define JIG_PROC_TERMINAL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <termios.h>

#include "util/error.h"

/* Each direction's buffer (bounded: a slow side blocks the other's reads). */
#define JIG_TERMINAL_BUF 4096
/* The longest control sequence (or string head) held until it is decided. */
#define JIG_TERM_SEQ_MAX 64

/* What goes down to the operator's terminal is filtered (decision 218):
 * sequences that write the operator's clipboard or make the terminal
 * answer into its own input are dropped, whole, across reads:
 *   - OSC strings other than 0, 1, 2 (titles), 7 (cwd), 8 (hyperlinks) and
 *     133 (prompt marks): OSC 52 (clipboard), colour queries (OSC 4/10/11
 *     ;?), OSC 1337 and every other;
 *   - DCS, SOS, PM and APC strings (DECRQSS, XTGETTCAP, tmux passthrough,
 *     kitty graphics);
 *   - report requests: CSI ... c (DA), n (DSR, CPR), x (DECREQTPARM), t
 *     (window operations and reports), $p (DECRQM), $w, ?u, ?m, ?S, >q
 *     (XTVERSION); ESC Z (DECID); ENQ.
 * Everything else passes byte for byte. 8-bit C1 controls are not
 * interpreted (UTF-8 terminals do not either). */
struct jig_term_filter {
	int st;
	bool pass;     /* in a string: it is emitted */
	bool osc_head; /* in an OSC: still reading its number */
	unsigned osc;
	bool overflow;
	size_t n;
	char seq[JIG_TERM_SEQ_MAX];
};
/* Filters in[0..n) into out (room for n + JIG_TERM_SEQ_MAX bytes); what
 * is held across calls stays in f (zeroed to start). Returns the bytes out. */
size_t jig_term_filter(struct jig_term_filter *f, const char *in, size_t n, char *out);

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
	struct jig_term_filter down; /* what the pty sends the operator */
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
 * operator's mode, discards input the operator's terminal still holds
 * (tcflush TCIFLUSH: nothing typed or answered during the session reaches
 * the operator's shell), restores the signal mask, closes the pair. */
void jig_terminal_stop(struct jig_terminal *t);

#endif
