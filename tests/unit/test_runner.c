/* test_runner.c - the subprocess runner: statuses, capture, deadlines. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/command.h"
#include "base/deadline.h"
#include "base/exitcode.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "tap.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run(const char *const *argv, const char *input, int timeout_ms,
	       struct run_result *res, os_error *err)
{
	struct run_spec spec = {
		.argv = argv, .input = input, .input_len = input ? strlen(input) : 0,
		.timeout_ms = timeout_ms,
	};
	return run_command(&spec, res, err);
}

static void test_statuses(void)
{
	static const char *const t[] = { "true", NULL };
	static const char *const three[] = { "sh", "-c", "exit 3", NULL };
	static const char *const killed[] = { "sh", "-c", "kill -9 $$", NULL };
	struct run_result res;
	os_error err = { 0 };

	is_int(run(t, NULL, 5000, &res, &err), 0, "true runs");
	is_int(res.status, 0, "true exits 0");
	run_result_free(&res);

	is_int(run(three, NULL, 5000, &res, &err), 0, "a failing child still completes");
	is_int(res.status, 3, "exit status 3 is reported");
	run_result_free(&res);

	struct run_spec spec = { .argv = three, .timeout_ms = 5000 };
	is_int(run_command_ok(&spec, &res, &err), -1, "run_command_ok fails on exit 3");
	ok(err.msg && strstr(err.msg, "exit status 3"), "message names the status: %s", err.msg);
	run_result_free(&res);
	os_error_clear(&err);

	is_int(run(killed, NULL, 5000, &res, &err), 0, "a child killed by a signal completes");
	is_int(res.status, 128 + 9, "SIGKILL reads as 137");
	run_result_free(&res);
}

static void test_stderr(void)
{
	static const char *const argv[] = { "sh", "-c", "echo out; echo boom >&2; echo more >&2; exit 1", NULL };
	struct run_spec spec = { .argv = argv, .timeout_ms = 5000 };
	struct run_result res;
	os_error err = { 0 };

	is_int(run_command_ok(&spec, &res, &err), -1, "stderr child fails");
	is_str(res.out, "out\n", "stdout is captured apart from stderr");
	is_str(res.err, "boom\nmore\n", "stderr is captured");
	ok(err.msg && strstr(err.msg, "sh failed (exit status 1): boom"),
	   "the message quotes stderr's first line: %s", err.msg);
	ok(err.detail && strstr(err.detail, "more"), "the whole stderr is kept as detail");
	run_result_free(&res);
	os_error_clear(&err);
}

static void test_deadline(void)
{
	static const char *const sleeper[] = { "sleep", "30", NULL };
	static const char *const stubborn[] = { "sh", "-c", "trap '' TERM; exec sleep 30", NULL };
	struct run_result res;
	os_error err = { 0 };
	long long t0 = now_ms(), dt;

	is_int(run(sleeper, NULL, 500, &res, &err), -1, "sleep 30 with a 500ms deadline fails");
	dt = now_ms() - t0;
	ok(dt < 500 + 1000, "it is stopped within deadline + 1s (took %lld ms)", dt);
	is_int(err.code, OS_EXIT_TIMEOUT, "the error is a timeout");
	ok(err.msg && strstr(err.msg, "sleep 30 timed out after 500ms"),
	   "the message names the command and the deadline: %s", err.msg);
	run_result_free(&res);
	os_error_clear(&err);

	t0 = now_ms();
	is_int(run(stubborn, NULL, 300, &res, &err), -1, "a child ignoring SIGTERM times out");
	dt = now_ms() - t0;
	ok(dt < 300 + 1000, "SIGKILL follows the grace period (took %lld ms)", dt);
	is_int(res.status, 128 + 9, "it was killed by SIGKILL");
	run_result_free(&res);
	os_error_clear(&err);
}

/* A child stopped at the remainder of a deadline is the deadline's
 * doing; one stopped at its own cap, or failing otherwise, is not. */
static void test_deadline_cut(void)
{
	static const char *const sleeper[] = { "sleep", "30", NULL };
	struct deadline soon = deadline_in(300, 60000), capped = deadline_in(60000, 200), whole, near;
	struct run_result res;
	os_error err = { 0 };
	int t = deadline_call_ms(&soon);

	ok(t > 0 && t <= 300, "the limit of a call is what is left when that is below the cap (%d ms)", t);
	is_int(deadline_call_ms(&capped), 200, "and the cap when less");
	is_int(run(sleeper, NULL, t, &res, &err), -1, "a child under the remainder times out");
	is_int(err.limit_ms, t, "the runner records the limit it applied");
	ok(deadline_cut(&soon, &err), "the deadline cut it short");
	run_result_free(&res);
	os_error_clear(&err);
	is_int(err.limit_ms, 0, "a cleared error has no limit");

	is_int(run(sleeper, NULL, deadline_call_ms(&capped), &res, &err), -1, "a child under the cap times out");
	ok(!deadline_cut(&capped, &err), "its own cap stopped it, not the deadline");
	run_result_free(&res);
	os_error_clear(&err);

	whole = deadline_in(250, 0);
	t = deadline_call_ms(&whole);
	ok(t > 100 && t <= 250, "a deadline without a cap gives what is left (%d ms)", t);
	is_int(run(sleeper, NULL, t, &res, &err), -1, "a stream under an uncapped deadline times out");
	ok(deadline_cut(&whole, &err), "and that is the deadline");
	os_error_wrap(&err, "context");
	ok(deadline_cut(&whole, &err), "context added on the way up keeps the limit");
	os_error_set(&err, OS_EXIT_TIMEOUT, "a wait's own timeout");
	ok(!deadline_cut(&whole, &err), "an error set afresh is no call's limit");
	run_result_free(&res);
	os_error_clear(&err);

	/* What a look at the clock afterwards would get wrong: */
	near = deadline_in(300, 200);
	is_int(run(sleeper, NULL, deadline_call_ms(&near), &res, &err), -1, "a child under a cap just short of the deadline times out");
	usleep(150 * 1000);
	ok(deadline_passed(&near) && !deadline_cut(&near, &err), "its cap's doing, though the deadline has passed since");
	run_result_free(&res);
	os_error_clear(&err);
}

static void test_missing(void)
{
	static const char *const abs[] = { "/nonexistent/openshell-x", NULL };
	static const char *const rel[] = { "openshell-no-such-program", "arg", NULL };
	struct run_result res;
	os_error err = { 0 };

	is_int(run(abs, NULL, 1000, &res, &err), -1, "a missing absolute path fails before fork");
	ok(err.msg && strstr(err.msg, "not found"), "and says so: %s", err.msg);
	run_result_free(&res);
	os_error_clear(&err);
	is_int(run(rel, NULL, 1000, &res, &err), -1, "a name missing on PATH fails");
	ok(err.msg && strstr(err.msg, "'openshell-no-such-program' not found on PATH"),
	   "and names it: %s", err.msg);
	run_result_free(&res);
	os_error_clear(&err);
}

static void test_io(void)
{
	static const char *const big[] = { "head", "-c", "8388608", "/dev/zero", NULL };
	static const char *const cat[] = { "cat", NULL };
	static const char *const wc[] = { "wc", "-c", NULL };
	struct run_result res;
	os_error err = { 0 };
	char *input;

	is_int(run(big, NULL, 10000, &res, &err), 0, "8 MiB of output");
	is_int((long long)res.out_len, 8388608, "is captured completely");
	run_result_free(&res);

	is_int(run(cat, "hello\n", 5000, &res, &err), 0, "stdin can be fed");
	is_str(res.out, "hello\n", "and reaches the child");
	run_result_free(&res);

	is_int(run(cat, NULL, 5000, &res, &err), 0, "without input the child reads /dev/null");
	is_int((long long)res.out_len, 0, "and sees end of file at once");
	run_result_free(&res);

	input = xmalloc(4u << 20);
	memset(input, 'x', 4u << 20);
	input[(4u << 20) - 1] = '\0';
	struct run_spec spec = { .argv = cat, .input = input, .input_len = (4u << 20) - 1, .timeout_ms = 10000 };
	is_int(run_command(&spec, &res, &err), 0, "4 MiB in and out does not deadlock");
	is_int((long long)res.out_len, (4 << 20) - 1, "all of it comes back");
	run_result_free(&res);
	spec.argv = wc;
	is_int(run_command(&spec, &res, &err), 0, "wc reads fed input");
	is_int(atoll(res.out), (4 << 20) - 1, "every byte of it");
	run_result_free(&res);
	free(input);
}

static void test_quoting(void)
{
	static const char *const argv[] = { "docker", "run", "--label", "a=b c", "it's", "", NULL };
	char *s = command_string(argv);

	is_str(s, "docker run --label 'a=b c' 'it'\\''s' ''", "argv renders as a pasteable line");
	free(s);
	s = clock_format_ms(1500);
	is_str(s, "1.5s", "1500 ms formats as 1.5s");
	free(s);
	s = clock_format_ms(250);
	is_str(s, "250ms", "250 ms formats as 250ms");
	free(s);
	s = clock_format_ms(60000);
	is_str(s, "60s", "60000 ms formats as 60s");
	free(s);
}

struct lines {
	int seen;
	int stop_at;      /* stop after this line; 0: never */
	char first[32];
	int ticks;
	int stop_tick;    /* stop at this tick; 0: never */
};

static int on_line(void *ctx, const char *line)
{
	struct lines *l = ctx;

	if (l->seen++ == 0)
		snprintf(l->first, sizeof(l->first), "%s", line);
	return l->stop_at && l->seen >= l->stop_at;
}

static int on_tick(void *ctx)
{
	struct lines *l = ctx;

	return ++l->ticks == l->stop_tick ? 0 : 20;
}

static void test_streams(void)
{
	/* Lines come as they are written, split where the writes were not. */
	static const char *const chatty[] = { "sh", "-c", "printf 'one\\ntw'; sleep 0.1; printf 'o\\nthree\\n'; exec sleep 30", NULL };
	static const char *const quiet[] = { "sleep", "30", NULL };
	struct lines l = { .stop_at = 2 };
	struct run_spec spec = { .argv = chatty, .timeout_ms = 10000, .on_line = on_line, .ctx = &l };
	struct run_result res;
	os_error err = { 0 };
	long long t0 = now_ms();

	is_int(run_command(&spec, &res, &err), 0, "a stream stopped by its reader succeeds");
	ok(res.stopped, "and says it was stopped");
	is_int(l.seen, 2, "no line is handed on after the stop");
	is_str(l.first, "one", "lines come without their newline");
	ok(now_ms() - t0 < 5000, "the child was ended, not waited for");
	run_result_free(&res);

	l = (struct lines){ .stop_tick = 3 };
	spec = (struct run_spec){ .argv = quiet, .timeout_ms = 10000, .tick_ms = 10, .on_tick = on_tick, .ctx = &l };
	is_int(run_command(&spec, &res, &err), 0, "a tick may stop a silent child");
	ok(res.stopped && l.ticks == 3, "at the third tick (%d)", l.ticks);
	run_result_free(&res);

	l = (struct lines){ 0 };
	spec = (struct run_spec){ .argv = chatty, .timeout_ms = 300, .on_line = on_line, .discard_lines = 1,
				  .ctx = &l };
	is_int(run_command(&spec, &res, &err), -1, "the deadline still ends a stream nobody stops");
	is_int(err.code, OS_EXIT_TIMEOUT, "as a timeout");
	is_int(l.seen, 3, "every line was seen");
	is_int((int)res.out_len, 0, "and none kept, with discard_lines");
	run_result_free(&res);
	os_error_clear(&err);
}

static int wake_on_ready(void *ctx, const char *line)
{
	int *seen = ctx;

	return strcmp(line, "ready") == 0 ? (++*seen, RUN_WAKE) : 0;
}

static void test_side_by_side(void)
{
	static const char *const slow[] = { "sh", "-c", "sleep 0.4; echo slow", NULL };
	static const char *const fast[] = { "sh", "-c", "echo fast; exit 4", NULL };
	static const char *const stream[] = { "sh", "-c", "echo ready; echo more; exec sleep 30", NULL };
	struct run_spec s1 = { .argv = slow, .timeout_ms = 10000 }, s2 = { .argv = fast, .timeout_ms = 10000 };
	struct run_child *kids[2];
	struct run_result res;
	os_error err = { 0 };
	long long t0 = now_ms();
	int seen = 0;

	kids[0] = run_start(&s1, &err);
	kids[1] = run_start(&s2, &err);
	ok(kids[0] && kids[1], "two children start side by side");
	is_int(run_wait_any(kids, 2), 1, "the one that ends first is returned first");
	is_int(run_finish(kids[1], &res, &err), 0, "and reaped with its result");
	ok(res.status == 4 && strcmp(res.out, "fast\n") == 0, "its status and output (%d)", res.status);
	run_result_free(&res);
	kids[1] = NULL;
	is_int(run_wait_any(kids, 2), 0, "then the other");
	is_int(run_wait_any(kids, 2), -1, "and then none is left");
	is_int(run_finish(kids[0], &res, &err), 0, "reaped too");
	ok(strcmp(res.out, "slow\n") == 0 && !res.stopped, "its own end, not a stop");
	ok(now_ms() - t0 < 400 + 1000, "both ran at once (%lld ms)", now_ms() - t0);
	run_result_free(&res);

	/* RUN_WAKE wakes the waiter; the child goes on until finished. */
	s1 = (struct run_spec){ .argv = stream, .timeout_ms = 10000, .on_line = wake_on_ready, .ctx = &seen };
	kids[0] = run_start(&s1, &err);
	is_int(run_wait_any(kids, 1), 0, "a line that wakes returns the child");
	is_int(seen, 1, "at its line");
	t0 = now_ms();
	is_int(run_finish(kids[0], &res, &err), 0, "finishing a running child stops it");
	ok(res.stopped && now_ms() - t0 < 2000, "as its callback would (stopped %d, %lld ms)", res.stopped, now_ms() - t0);
	run_result_free(&res);
	os_error_clear(&err);
}

static int wake_tick(void *ctx)
{
	int *ticks = ctx;

	return ++*ticks, RUN_WAKE;
}

/* A waiter's own tick beside its children, a tick that wakes it, and
 * whether a child was returned ended. */
static void test_due_and_wake(void)
{
	static const char *const quiet[] = { "sleep", "30", NULL };
	static const char *const brief[] = { "true", NULL };
	int ticks = 0;
	struct run_spec s1 = { .argv = quiet, .timeout_ms = 10000, .tick_ms = 10, .on_tick = wake_tick, .ctx = &ticks };
	struct run_spec s2 = { .argv = brief, .timeout_ms = 10000 };
	struct run_child *kids[2];
	struct run_result res;
	os_error err = { 0 };

	kids[0] = run_start(&s1, &err);
	kids[1] = NULL;
	is_int(run_wait_until(kids, 1, now_ms() + 60000), 0, "a tick that says RUN_WAKE returns its child");
	ok(!run_ended(kids[0]), "running still");
	is_int(run_wait_until(kids, 1, now_ms() + 50), RUN_WAIT_DUE, "with nothing to tell, the waiter's due time returns");
	is_int(ticks, 1, "and the tick that woke it was the last");
	kids[1] = run_start(&s2, &err);
	is_int(run_wait_until(kids, 2, now_ms() + 60000), 1, "a child that ends is returned before the due time");
	ok(run_ended(kids[1]), "ended");
	is_int(run_finish(kids[1], &res, &err), 0, "and reaped");
	run_result_free(&res);
	is_int(run_finish(kids[0], &res, &err), 0, "the other is stopped");
	ok(res.stopped, "as asked");
	run_result_free(&res);

	/* Told to stop without a wait: it is killed, then reaped; one that
	 * would take its time over SIGTERM gets none. */
	s1 = (struct run_spec){ .argv = quiet, .timeout_ms = 10000 };
	kids[0] = run_start(&s1, &err);
	run_stop(kids[0]);
	is_int(run_wait_any(kids, 1), 0, "a child told to stop is returned");
	ok(run_ended(kids[0]), "ended");
	is_int(run_finish(kids[0], &res, &err), 0, "and reaped");
	is_int(res.status, 128 + SIGKILL, "killed: its answer is not wanted");
	run_result_free(&res);
	{
		const char *deaf[] = { "sh", "-c", "trap '' TERM; sleep 30", NULL };
		s1 = (struct run_spec){ .argv = deaf, .timeout_ms = 10000 };
		kids[0] = run_start(&s1, &err);
		run_stop(kids[0]);
		is_int(run_finish(kids[0], &res, &err), 0, "a child deaf to SIGTERM is reaped all the same");
		is_int(res.status, 128 + SIGKILL, "killed");
		run_result_free(&res);
	}
	os_error_clear(&err);
}

static void test_detached(void)
{
	char dir[] = "/tmp/test_runner.XXXXXX";
	cleanup_free char *mark = NULL, *script = NULL;
	const char *argv[] = { "sh", "-c", NULL, NULL };
	struct run_spec spec = { .argv = argv, .timeout_ms = 10000 };
	os_error err = { 0 };
	long long t0;
	int i;

	ok(mkdtemp(dir) != NULL, "a scratch directory");
	mark = xasprintf("%s/done", dir);
	script = xasprintf("sleep 0.5; echo hi >%s", mark);
	argv[2] = script;
	t0 = now_ms();
	is_int(run_detached(&spec, &err), 0, "a detached run starts");
	ok(now_ms() - t0 < 400, "and is not waited for (%lld ms)", now_ms() - t0);
	ok(access(mark, F_OK) != 0, "it has not finished yet");
	for (i = 0; i < 100 && access(mark, F_OK) != 0; i++)
		usleep(50000);
	ok(access(mark, F_OK) == 0, "it finishes on its own");
	unlink(mark);

	/* Its deadline holds without openshell: timeout(1) stops it. */
	spec.timeout_ms = 1000;
	free(script);
	script = xasprintf("sleep 3; echo late >%s", mark);
	argv[2] = script;
	is_int(run_detached(&spec, &err), 0, "a detached run with a deadline starts");
	sleep(4);
	ok(access(mark, F_OK) != 0, "and is stopped at its deadline");
	rmdir(dir);
	os_error_clear(&err);
}

/* PATH's empty element is the current directory ("./name"), not "/name". */
static void test_command_find(void)
{
	char *cwd = getcwd(NULL, 0), *dir = xasprintf("/tmp/openshell-find-%d", (int)getpid()), *found;
	const char *saved = getenv("PATH");
	char *keep = saved ? xstrdup(saved) : NULL;
	FILE *f;

	ok(mkdir(dir, 0700) == 0 && chdir(dir) == 0, "a directory of our own");
	f = fopen("only-here", "w");
	fputs("#!/bin/sh\n", f);
	fclose(f);
	chmod("only-here", 0755);
	setenv("PATH", "/nonexistent::/also-not", 1);
	found = command_find("only-here");
	ok(found && strcmp(found, "./only-here") == 0, "an empty PATH element finds ./only-here (%s)", found ? found : "none");
	free(found);
	setenv("PATH", "/nonexistent", 1);
	found = command_find("only-here");
	ok(found == NULL, "not without one");
	free(found);
	if (keep)
		setenv("PATH", keep, 1);
	unlink("only-here");
	ok(chdir(cwd) == 0 && rmdir(dir) == 0, "cleaned up");
	free(keep);
	free(cwd);
	free(dir);
}

/* WRITER's stdout into READER's stdin through FDS, the caller's copies
 * closed at once; 0 when both were reaped without an error (a deadline:
 * the reader never saw EOF). */
static int run_joined(const char *const *writer, const char *const *reader, int fds[2], struct run_result *wres,
		      struct run_result *rres, struct lines *l)
{
	struct run_spec ws = { .argv = writer, .timeout_ms = 10000, .stdout_fd = fds[1], .on_line = on_line, .ctx = l };
	struct run_spec rs = { .argv = reader, .timeout_ms = 10000, .stdin_fd = fds[0] };
	os_error err = { 0 };
	struct run_child *kids[2] = { run_start(&ws, &err), run_start(&rs, &err) };
	int rc;

	if (!kids[0] || !kids[1])
		abort();
	close(fds[0]);
	close(fds[1]);
	while (run_wait_any(kids, 2) >= 0)
		;
	rc = run_finish(kids[0], wres, &err) | run_finish(kids[1], rres, &err);
	os_error_clear(&err);
	return rc;
}

/* Two children joined by a pipe: the bytes pass between them, the writer's
 * stdout is not captured, its stderr and status are. A plain pipe() end,
 * not close-on-exec, reaches only the child it was given to, or the reader
 * would wait for an EOF that never comes. */
static void test_joined(void)
{
	static const char *const big[] = { "sh", "-c", "head -c 8388608 /dev/zero; echo note >&2; exit 5", NULL };
	static const char *const hello[] = { "printf", "hello\\nworld\\n", NULL };
	static const char *const cat[] = { "cat", NULL }, *const wc[] = { "wc", "-c", NULL };
	struct run_result w, r;
	struct lines l = { 0 };
	int fds[2], first = -1;
	os_error err = { 0 };

	ok(pipe(fds) == 0 && (first = fds[0]) > 2, "a plain pipe");
	is_int(run_joined(big, wc, fds, &w, &r, &l), 0, "a writer and a reader joined by it both end");
	is_int(atoll(r.out), 8388608, "the reader got every byte, streamed past the pipe's buffer");
	is_int(w.status, 5, "the writer's failure shows in its status");
	ok(strcmp(w.out, "") == 0 && l.seen == 0, "its stdout is neither captured nor handed to on_line");
	is_str(w.err, "note\n", "its stderr is captured");
	run_result_free(&w);
	run_result_free(&r);

	ok(run_pipe(fds, &err) == 0 && run_joined(hello, cat, fds, &w, &r, &l) == 0, "two joined by run_pipe()");
	is_str(r.out, "hello\nworld\n", "the reader got the writer's bytes");
	run_result_free(&w);
	run_result_free(&r);
	ok(pipe(fds) == 0 && fds[0] == first, "no descriptor was left open (%d)", fds[0]);
	close(fds[0]);
	close(fds[1]);
}

/* A bare NAME in env unsets it, for the child alone. */
static void test_env_unset(void)
{
	static const char *const show[] = { "sh", "-c", "echo \"${OPENSHELL_TEST_VAR-unset}\"", NULL };
	static const char *const env[] = { "OPENSHELL_TEST_VAR=", "OPENSHELL_TEST_VAR", NULL };
	struct run_spec spec = { .argv = show, .timeout_ms = 5000, .env = env };
	struct run_result res;
	os_error err = { 0 };

	setenv("OPENSHELL_TEST_VAR", "x", 1);
	run_command(&spec, &res, &err);
	is_str(res.out, "unset\n", "a bare name in env unsets what openshell and an earlier entry set");
	is_str(getenv("OPENSHELL_TEST_VAR"), "x", "for the child alone");
	run_result_free(&res);
	os_error_clear(&err);
	unsetenv("OPENSHELL_TEST_VAR");
}

/* A poll() that fails leaves the child unwatched: it is stopped, and the
 * error says why, not that a deadline passed that never did. */
static void test_unwatched(void)
{
	static const char *const argv[] = { "sleep", "30", NULL };
	struct run_spec spec = { .argv = argv, .timeout_ms = 60000 };
	struct run_child *kids[1];
	struct run_result res;
	struct rlimit old, one;
	os_error err = { 0 };

	/* valgrind keeps a program's RLIMIT_NOFILE to itself (the kernel's
	 * stays as it was), so that no poll() fails for it. */
	if (getenv("OPENSHELL_VALGRIND") && !strcmp(getenv("OPENSHELL_VALGRIND"), "1")) {
		tap_skip(4, "under valgrind, which does not pass RLIMIT_NOFILE to the kernel");
		return;
	}
	kids[0] = run_start(&spec, &err);
	ok(kids[0] != NULL, "a child starts");
	getrlimit(RLIMIT_NOFILE, &old);
	one = (struct rlimit){ .rlim_cur = 1, .rlim_max = old.rlim_max };
	setrlimit(RLIMIT_NOFILE, &one);   /* poll(): EINVAL for more fds than that */
	is_int(run_wait_any(kids, 1), 0, "a failed poll returns the child, ended");
	setrlimit(RLIMIT_NOFILE, &old);
	ok(run_finish(kids[0], &res, &err) != 0, "finishing it is an error");
	ok(err.msg && strstr(err.msg, "cannot wait for sleep 30 (poll: ") && strstr(err.msg, "it was stopped")
	   && !strstr(err.msg, "timed out"), "naming poll, not a deadline: %s", err.msg ? err.msg : "(none)");
	run_result_free(&res);
	os_error_clear(&err);
}

int main(void)
{
	xalloc_init();
	test_statuses();
	test_stderr();
	test_deadline();
	test_deadline_cut();
	test_missing();
	test_io();
	test_quoting();
	test_streams();
	test_side_by_side();
	test_due_and_wake();
	test_detached();
	test_command_find();
	test_joined();
	test_env_unset();
	test_unwatched();
	return tap_done();
}
