/* test_kube_watch.c - kubectl's words for an API server still starting, a file
 * read before kubectl, and a kubectl watch kept as a list, listed first or
 * from a version, against a stand-in docker that prints what kubectl would. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/json.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "kube/kubectl.h"
#include "kube/watch.h"
#include "tap.h"

/* The container the watches exec in (the fake docker ignores it). */
static const struct docker_ctr gateway_ctr = { NULL, "ctr" };

static void test_file_split(void)
{
	char *file;
	const char *rest;

	rest = kube_file_split("a = 1\n\n" KUBE_FILE_MARK "\n{\"kind\":\"List\"}\n", &file);
	is_str(file, "a = 1\n\n", "the file's text comes before the mark");
	is_str(rest, "{\"kind\":\"List\"}\n", "kubectl's output after it");
	free(file);
	rest = kube_file_split("\n" KUBE_FILE_MARK "\n{}", &file);
	ok(!file && strcmp(rest, "{}") == 0, "a missing file is not read");
	rest = kube_file_split("  \n\n" KUBE_FILE_MARK "\n{}", &file);
	ok(!file && strcmp(rest, "{}") == 0, "nor is an empty one");
	rest = kube_file_split("Error: No such container: c\n", &file);
	ok(!file && strcmp(rest, "Error: No such container: c\n") == 0, "without the mark, nothing ran");
}

/* kubectl's lines for k3s's API server not running yet, in a request of
 * its own and in discovery; not an aggregated API's warning. */
static void test_api_starting(void)
{
	os_error err = { 0 };

	ok(kube_said_api_starting("Error from server (ServiceUnavailable): apiserver not ready\n"),
	   "a get k3s answered 503 \"apiserver not ready\"");
	ok(kube_said_api_starting("E1207 02:05:22.907089     251 memcache.go:265] \"Unhandled Error\" err=\"couldn't get "
				  "current server API group list: the server is currently unable to handle the request\"\n"
				  "error: the server doesn't have a resource type \"nodes\"\n"),
	   "discovery answered 503, after which kubectl knows no types");
	ok(!kube_said_api_starting("E1207 memcache.go:287] couldn't get resource list for metrics.k8s.io/v1beta1: the server "
				   "is currently unable to handle the request\nError from server (NotFound): pods \"x\" not found\n"),
	   "metrics-server's API still starting is no such thing: the get's own error stands");
	ok(!kube_said_api_starting(NULL), "no text, no answer");
	os_error_set(&err, OS_EXIT_FAILURE, "kubectl get nodes failed (exit status 1): x");
	os_error_set_detail(&err, "Error from server (ServiceUnavailable): apiserver not ready\n");
	ok(kube_api_starting(&err), "an error says it in its detail");
	err.code = OS_EXIT_TIMEOUT;
	ok(!kube_api_starting(&err), "a call the deadline cut is not that, whatever it quotes");
	os_error_clear(&err);
}

/* docker as kubectl answers a watch: the file, the mark, events, an end. */
static char *fake_docker(const char *dir)
{
	char *path = xasprintf("%s/docker", dir);
	cleanup_free char *script = xasprintf(
		"#!/bin/sh\n"
		"printf '%%s\\n' \"$@\" >'%s/argv'\n"
		"if [ -e '%s/argv.1' ]; then printf '\\n%s\\n'; exit 0; fi\n"
		"cp '%s/argv' '%s/argv.1'\n"
		"printf '[x.runtimes.'\"'\"'nvidia'\"'\"']\\n\\n%s\\n'\n"
		"echo '{\"type\":\"ADDED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"}}}'\n"
		"echo '{\"type\":\"ADDED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"b\"}}}'\n"
		"echo 'not an event'\n"
		"echo '{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"n\":2}}}'\n"
		"echo '{\"type\":\"DELETED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"b\"}}}'\n"
		"echo 'Error from server (ServiceUnavailable): apiserver not ready' >&2\n"
		"exit 1\n",
		dir, dir, KUBE_FILE_MARK, dir, dir, KUBE_FILE_MARK);
	os_error err = { 0 };

	if (write_file_atomic(path, script, strlen(script), 0700, &err) < 0)
		printf("# %s\n", err.msg);
	os_error_clear(&err);
	return path;
}

/* Each state the watch says, as "name:fields" in a line of CTX's text. */
static void note_state(void *ctx, const cJSON *obj)
{
	char **states = ctx;
	char *was = *states;

	*states = xasprintf("%s%s:%d ", was ? was : "", json_str(json_get(obj, "metadata", NULL), "name"),
			    cJSON_GetArraySize(obj));
	free(was);
}

static void test_watch(const char *dir)
{
	cleanup_free char *docker = NULL, *argv_file = NULL, *argv = NULL, *states = NULL;
	struct kube_watch kw = { .resource = "nodes", .file = "/etc/f.toml", .seen = note_state, .ctx = &states };
	const cJSON *items, *a;
	os_error err = { 0 };
	size_t len = 0;
	int wakes = 0, i;

	docker = fake_docker(dir);
	setenv("OPENSHELL_DOCKER", docker, 1);
	is_int(kube_watch_start(&kw, &gateway_ctr, 10000, &err), 0, "a watch starts");
	while ((i = run_wait_any(&kw.c, 1)) == 0 && !run_ended(kw.c))
		wakes++;
	ok(wakes >= 1, "each change wakes the waiter (%d times)", wakes);
	ok(kw.file_read && kw.file_text && strstr(kw.file_text, "'nvidia'"), "the file came first: %s",
	   kw.file_text ? kw.file_text : "(none)");
	i = kube_watch_end(&kw, &err);
	ok(i < 0 && err.code == OS_EXIT_FAILURE &&
		   strstr(err.msg, "kubectl get nodes --watch failed (exit status 1): Error from server (ServiceUnavailable)"),
	   "its failure quotes kubectl: %s", err.msg ? err.msg : "(none)");
	os_error_clear(&err);
	items = json_get(kw.list, "items", NULL);
	a = cJSON_GetArrayItem(items, 0);
	is_int(cJSON_GetArraySize(items), 1, "ADDED puts in, DELETED takes out");
	is_str(json_str(json_get(a, "metadata", NULL), "name"), "a", "the one left");
	ok(json_get(a, "spec", "n", NULL) != NULL, "as MODIFIED left it");
	is_str(states, "a:2 b:2 a:3 ", "seen: each state ADDED and MODIFIED brought, in order, the list keeping only the last");
	argv_file = xasprintf("%s/argv", dir);
	read_file(argv_file, 1 << 16, &argv, &len, &err);
	ok(argv && strstr(argv, "\nsh\n-c\n") && strstr(argv, "\n/etc/f.toml\nkubectl\n--request-timeout=") &&
		   strstr(argv, "\nget\nnodes\n--all-namespaces\n--watch\n--output-watch-events\n--output=json\n"),
	   "one exec reads the file, then watches with one event a line");
	os_error_clear(&err);
	/* Started again: its kubectl ends well at once, having said nothing. */
	kw.file = NULL;
	is_int(kube_watch_start(&kw, &gateway_ctr, 10000, &err), 0, "a watch starts again");
	while (run_wait_any(&kw.c, 1) == 0 && !run_ended(kw.c))
		;
	is_int(kube_watch_end(&kw, &err), 0, "an end of kubectl's own is no failure");
	is_int(cJSON_GetArraySize(json_get(kw.list, "items", NULL)), 1, "the list is kept until a new one says more");
	ok(kw.file_text && strstr(kw.file_text, "'nvidia'"), "and so is the file read before");
	kube_watch_free(&kw);
	free(argv);
	argv = xasprintf("%s/argv.1", dir);
	unlink(argv);
	unlink(argv_file);
}

/* docker (at the same path: it is looked up once) that runs what it is
 * given, with the kubectl script K in DIR. */
static char *runner_with(const char *dir, const char *k)
{
	char *path = xasprintf("%s/docker", dir);
	cleanup_free char *kubectl = xasprintf("%s/kubectl", dir);
	cleanup_free char *script = xasprintf(
		"#!/bin/sh\n"
		"shift; [ \"$1\" != --interactive ] || shift; shift\n"
		"PATH='%s':$PATH exec \"$@\"\n", dir);
	os_error err = { 0 };

	if (write_file_atomic(path, script, strlen(script), 0700, &err) < 0 ||
	    write_file_atomic(kubectl, k, strlen(k), 0700, &err) < 0)
		printf("# %s\n", err.msg);
	os_error_clear(&err);
	return path;
}

/* With a kubectl that lists one node. */
static char *runner_docker(const char *dir)
{
	return runner_with(dir, "#!/bin/sh\n"
				"echo '{\"type\":\"ADDED\",\"object\":{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"}}}'\n");
}

static void run_to_end(struct kube_watch *kw)
{
	while (run_wait_any(&kw->c, 1) == 0 && !run_ended(kw->c))
		;
}

/* THEN runs first in the watch's exec, with the input: the watch only
 * after it succeeded, its failure the exec's. */
static void test_then(const char *dir)
{
	cleanup_free char *docker = NULL, *then = NULL, *in = NULL, *got = NULL;
	struct kube_watch kw = { .resource = "nodes" };
	os_error err = { 0 };
	size_t len = 0;
	int i;

	docker = runner_docker(dir);
	then = xasprintf("cat >'%s/in'; echo looked; if [ -e '%s/fail' ]; then echo 'one' >&2; echo 'two' >&2; exit 3; fi",
			 dir, dir);
	kw.then = then;
	kw.input = "manifest\n";
	i = kube_watch_start(&kw, &gateway_ctr, 10000, &err);
	ok(i == 0, "a watch with THEN starts: %s", err.msg ? err.msg : "yes");
	run_to_end(&kw);
	is_int(kube_watch_end(&kw, &err), 0, "it ends well");
	ok(kw.then_done && !kw.then_error, "THEN succeeded");
	is_str(kw.then_text, "looked\n", "what it printed is kept, apart from the events");
	is_int(cJSON_GetArraySize(json_get(kw.list, "items", NULL)), 1, "the watch followed it");
	in = xasprintf("%s/in", dir);
	read_file(in, 1 << 16, &got, &len, &err);
	is_str(got, "manifest\n", "THEN's stdin was the input");
	kube_watch_free(&kw);

	cleanup_free char *fail = xasprintf("%s/fail", dir);
	write_file_atomic(fail, "", 0, 0600, &err);
	os_error_clear(&err);
	kw = (struct kube_watch){ .resource = "nodes", .then = then, .input = "m\n" };
	is_int(kube_watch_start(&kw, &gateway_ctr, 10000, &err), 0, "started again, THEN to fail");
	run_to_end(&kw);
	i = kube_watch_end(&kw, &err);
	ok(i < 0 && err.msg && strstr(err.msg, "the command before kubectl get nodes --watch failed (exit status 3): one"),
	   "its failure is the exec's: %s", err.msg ? err.msg : "(none)");
	is_str(kw.then_error, "one\ntwo\n", "then_error has all it said");
	ok(!kw.then_done && kw.then_text && strcmp(kw.then_text, "looked\n") == 0, "what it printed before is kept");
	is_int(cJSON_GetArraySize(json_get(kw.list, "items", NULL)), 0, "no watch followed");
	os_error_clear(&err);
	kube_watch_free(&kw);
	cleanup_free char *kubectl = xasprintf("%s/kubectl", dir);
	unlink(fail);
	unlink(in);
	unlink(kubectl);
	unlink(docker);
}

/* docker that runs what it is given with a kubectl answering a raw watch:
 * first two events, then 410 Expired; its argv kept, one file a call. */
static char *since_docker(const char *dir)
{
	cleanup_free char *k = xasprintf(
		"#!/bin/sh\n"
		"n=$(cat '%s/n' 2>/dev/null || echo 0); echo $((n + 1)) >'%s/n'; printf '%%s\\n' \"$@\" >'%s/argv.'$n\n"
		"case $n in\n"
		"0) echo '{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"5\"}}}'\n"
		"   echo '{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"7\"}}}' ;;\n"
		"1) echo '{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"message\":\"too old resource version: 7 (9)\",\"reason\":\"Expired\",\"code\":410}}' ;;\n"
		"esac\n", dir, dir, dir);

	return runner_with(dir, k);
}

static char *argv_of(const char *dir, int n)
{
	cleanup_free char *path = xasprintf("%s/argv.%d", dir, n);
	char *text = NULL;
	size_t len = 0;
	os_error err = { 0 };

	read_file(path, 1 << 16, &text, &len, &err);
	os_error_clear(&err);
	unlink(path);
	return text ? text : xstrdup("");
}

/* From a version: kubectl get --raw of the watch URL, moved on by each
 * event; too old a version is an error, and the next start lists. */
static void test_since(const char *dir)
{
	cleanup_free char *docker = since_docker(dir), *a0 = NULL, *a1 = NULL, *a2 = NULL;
	struct kube_watch kw = { .resource = "things.g.io", .ns = "ns", .selector = "a.io/b=c d", .api = "/apis/g.io/v1" };
	os_error err = { 0 };

	kube_watch_since(&kw, "3");
	is_int(kube_watch_start(&kw, &gateway_ctr, 20000, &err), 0, "a watch from a version starts");
	run_to_end(&kw);
	is_int(kube_watch_end(&kw, &err), 0, "its stream's end is no failure");
	a0 = argv_of(dir, 0);
	ok(strstr(a0, "\nget\n--raw\n/apis/g.io/v1/namespaces/ns/things?watch=true&resourceVersion=3&timeoutSeconds=14"
		      "&labelSelector=a.io%2Fb%3Dc%20d\n"),
	   "it asks the API for the changes after it, the selector escaped, ending before kubectl's timeout");
	ok(strstr(a0, "--request-timeout=15s\n"), "which is a second later");
	is_int(cJSON_GetArraySize(json_get(kw.list, "items", NULL)), 0, "an object made and deleted after it came and went");
	is_str(kw.since, "7", "each event moved the version on");
	is_int(kube_watch_start(&kw, &gateway_ctr, 20000, &err), 0, "started again");
	run_to_end(&kw);
	ok(kube_watch_end(&kw, &err) < 0 && err.msg &&
		   strcmp(err.msg, "the API ended the watch of things.g.io: too old resource version: 7 (9)") == 0,
	   "an ERROR event ends it with the API's words: %s", err.msg ? err.msg : "(none)");
	os_error_clear(&err);
	a1 = argv_of(dir, 1);
	ok(strstr(a1, "resourceVersion=7&"), "from where the last left off");
	ok(!kw.since, "410 Expired: no version to resume after");
	is_int(kube_watch_start(&kw, &gateway_ctr, 20000, &err), 0, "started a third time");
	run_to_end(&kw);
	is_int(kube_watch_end(&kw, &err), 0, "and ended well");
	a2 = argv_of(dir, 2);
	ok(strstr(a2, "\nget\nthings.g.io\n--namespace\nns\n--selector=a.io/b=c d\n--watch\n"), "it lists first");
	kube_watch_free(&kw);
	cleanup_free char *kubectl = xasprintf("%s/kubectl", dir), *n = xasprintf("%s/n", dir);
	unlink(kubectl);
	unlink(n);
	unlink(docker);
}

int main(void)
{
	xalloc_init();
	test_file_split();
	test_api_starting();
	char dir[] = "/tmp/test_kube_watch.XXXXXX";

	if (!mkdtemp(dir)) {
		ok(0, "a temporary directory");
		return tap_done();
	}
	test_watch(dir);
	test_then(dir);
	test_since(dir);
	rmdir(dir);
	return tap_done();
}
