/* base/run_child.h - a started child, as runner.c and run_wait.c share it.
 *
 * Private to the runner: runner.c starts and reaps children, run_wait.c
 * serves them while they run (base/runner.h promises both to callers).
 */
#ifndef OPENSHELL_BASE_RUN_CHILD_H
#define OPENSHELL_BASE_RUN_CHILD_H

#include <sys/types.h>

#include <pipeline.h>

#include "base/runner.h"
#include "base/strv.h"

/* Why a child was ended before it exited by itself. */
enum run_end {
	RUN_END_NONE,        /* it was not, or for too much output (too_big says so) */
	RUN_END_DEADLINE,
	RUN_END_INTERRUPT,
	RUN_END_STOPPED,     /* a callback asked for it */
	RUN_END_UNWATCHED,   /* poll() failed: it could not be waited for */
};

/* A started child: its pipeline, what it has printed, and how it ends. */
struct run_child {
	struct run_spec spec;     /* argv and input are not used after the start */
	struct strv env;          /* the child's own copy of spec.env (run_env()) */
	char *name;               /* "docker exec", for messages */
	pipeline *p;
	int infd;                 /* stdin, until libpipeline takes it at the start */
	int errfd;                /* the stderr capture file; -1: none */
	int outfd;                /* the stdout capture pipe, until EOF; -1: none */
	int pidfd;
	pid_t pid;
	int exited;               /* the child has exited (maybe not yet reaped) */
	struct run_result res;
	size_t cap;
	size_t line_start;        /* where the line on_line has not seen yet begins */
	int too_big;
	int stop;                 /* a callback asked to end the child */
	int woke;                 /* on_line said RUN_WAKE */
	int ended;                /* exited with its output read, or stopped */
	int reported;             /* run_wait_any() has returned it, ended */
	enum run_end why;         /* why it was ended early, if it was */
	int poll_errno;           /* RUN_END_UNWATCHED: poll()'s errno */
	long long deadline;       /* 0: none */
	long long next_tick;      /* 0: no ticks */
	long long grace_end;      /* once interrupted, with interrupt_grace_ms */
	long long stopped_at;     /* when run_stop() killed it, or 0 */
	int backoff;              /* without a pidfd: the next poll's delay */
};

/* End the child early, for WHY: SIGTERM to its process group, SIGKILL
 * RUN_KILL_GRACE_MS later if it lives. */
void run_child_end(struct run_child *c, enum run_end why);

#endif
