/* base/exitcode.h - the exit statuses of openshell, in one place.
 *
 * Scripts depend on these numbers; the man page (doc/openshell.1.in) lists them.
 * Change neither without the other.
 */
#ifndef OPENSHELL_BASE_EXITCODE_H
#define OPENSHELL_BASE_EXITCODE_H

enum os_exit {
	OS_EXIT_OK = 0,        /* success */
	OS_EXIT_FAILURE = 1,   /* the operation failed; the message says why */
	OS_EXIT_USAGE = 2,     /* bad command line: unknown command, option or value */
	OS_EXIT_DOCKER = 3,    /* docker missing, or its daemon unreachable */
	OS_EXIT_TIMEOUT = 4,   /* a deadline passed (a call, or a wait for readiness) */
	OS_EXIT_NOTFOUND = 5,  /* the named gateway does not exist */
	OS_EXIT_CONFLICT = 6,  /* a gateway exists with another configuration */
	OS_EXIT_NOGPU = 7,     /* the host cannot give Docker GPUs (toolkit missing) */
	OS_EXIT_CHECKS = 8,    /* verify: at least one check failed */
	OS_EXIT_NOTAPPLICABLE = 9, /* verify: the gateway has no GPU request */
	OS_EXIT_SIGHUP = 129,  /* its terminal went away: SIGHUP (128 + 1) */
	OS_EXIT_SIGINT = 130,  /* interrupted by SIGINT (128 + 2) */
	OS_EXIT_SIGQUIT = 131, /* SIGQUIT (128 + 3) */
	OS_EXIT_SIGTERM = 143, /* interrupted by SIGTERM (128 + 15) */
};

#endif
