/* scripts/lib/spawn.c - run a command through posix_spawn, exit as it did.
 *
 *   spawn COMMAND [ARG...]
 *
 * For scripts/bench, which reads a command's own CPU time and peak RSS
 * from its getrusage(RUSAGE_SELF). A shell starts a command by fork: until
 * the exec, the child runs in a copy of the shell's memory, faulting in
 * the pages it writes, and its exec then tears that copy down; all of it
 * is charged to the process that becomes the command, since exec keeps a
 * process's usage. posix_spawn (glibc: clone with CLONE_VM and
 * CLONE_VFORK) borrows this small process's memory instead, so what the
 * command reports starts at its exec. Not part of openshell, which runs
 * every child through libpipeline (src/base/runner.c). */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv)
{
	pid_t pid;
	int status, rc;

	if (argc < 2) {
		fprintf(stderr, "usage: spawn COMMAND [ARG...]\n");
		return 2;
	}
	rc = posix_spawnp(&pid, argv[1], NULL, NULL, argv + 1, environ);
	if (rc != 0) {
		fprintf(stderr, "spawn: cannot run %s: %s\n", argv[1], strerror(rc));
		return 127;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "spawn: cannot wait for %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
