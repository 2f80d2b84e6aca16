/* base/signals.h - SIGINT, SIGTERM, SIGHUP and SIGQUIT, turned into an orderly stop.
 *
 * The handlers only record the signal. The runner notices it: it stops the
 * child it is waiting for (children run in their own process group, so a
 * terminal's ^C reaches openshell alone, which then stops them) and refuses
 * to start new ones, so the error climbs to the command, which decides what
 * to keep and what to undo, says which, and exits 128 + the signal number.
 * Cleanup that must run after an interrupt shields itself, so a second ^C
 * cannot cut a rollback short.
 */
#ifndef OPENSHELL_BASE_SIGNALS_H
#define OPENSHELL_BASE_SIGNALS_H

void signals_install(void);

/* A descriptor that becomes readable once a stop is asked for (and stays
 * so), for poll(); -1 while shielded or without one. */
int signals_wake_fd(void);

/* The first SIGINT, SIGTERM, SIGHUP (a closed terminal or SSH session) or
 * SIGQUIT received, or 0. */
int signals_pending(void);

/* Nesting shield: while raised, pending signals do not stop children. */
void signals_shield(void);
void signals_unshield(void);

/* Should the runner give up now? (pending and not shielded) */
int signals_stop_requested(void);

#endif
