/* test_daemon.c - which Docker daemon docker talks to (docker/daemon.h),
 * and where clients then reach a gateway's API (gateway/start/reach.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "docker/container.h"
#include "docker/daemon.h"
#include "gateway/deploy/deploy.h"
#include "gateway/start/reach.h"
#include "kube/kubectl.h"
#include "tap.h"

static void endpoint(const char *e, int local, const char *host)
{
	struct docker_daemon d = { .at.endpoint = xstrdup(e) };
	os_error err = { 0 };
	int rc = docker_daemon_parse_endpoint(&d, &err);

	if (!host && !local)
		ok(rc < 0 && err.msg, "endpoint %s is refused: %s", e, err.msg ? err.msg : "(no error)");
	else
		ok(rc == 0 && d.local == local && (host ? d.host && strcmp(d.host, host) == 0 : d.host == NULL),
		   "endpoint %s: local %d, host %s (got %d, %s)", e, local, host ? host : "none", d.local,
		   d.host ? d.host : "none");
	os_error_clear(&err);
	docker_daemon_free(&d);
}

/* One reading of an endpoint gives its user and port too. */
static void parts(const char *e, const char *user, const char *host, const char *port)
{
	struct docker_daemon d = { .at.endpoint = xstrdup(e) };
	os_error err = { 0 };

	ok(docker_daemon_parse_endpoint(&d, &err) == 0 && (user ? d.user && !strcmp(d.user, user) : !d.user) &&
	   d.host && !strcmp(d.host, host) && (port ? d.port && !strcmp(d.port, port) : !d.port),
	   "endpoint %s: user %s, host %s, port %s", e, user ? user : "none", host, port ? port : "none");
	os_error_clear(&err);
	docker_daemon_free(&d);
}

static void test_endpoints(void)
{
	parts("ssh://me@gpu-box:2222", "me", "gpu-box", "2222");
	parts("ssh://gpu-box", NULL, "gpu-box", NULL);
	parts("ssh://me@[::1]:22/path", "me", "::1", "22");
	parts("tcp://10.0.0.5:2376", NULL, "10.0.0.5", "2376");
	endpoint("unix:///var/run/docker.sock", 1, NULL);
	endpoint("fd://", 1, NULL);
	endpoint("ssh://gpu-box", 0, "gpu-box");
	endpoint("ssh://root@gpu-box:2222", 0, "gpu-box");
	endpoint("ssh://root@127.0.0.2:2222/", 0, "127.0.0.2");
	endpoint("tcp://10.0.0.5:2376", 0, "10.0.0.5");
	endpoint("tcp://[fd00::5]:2376", 0, "fd00::5");
	endpoint("http://gpu-box", 0, NULL);
	endpoint("ssh://root@:22", 0, NULL);
}

/* DOCKER_HOST, then DOCKER_CONTEXT, then the config's currentContext. */
static void test_resolve(void)
{
	char dir[] = "/tmp/test_daemon.XXXXXX";
	struct docker_daemon d;
	os_error err = { 0 };
	char *path;
	FILE *f;
	int rc;

	if (!mkdtemp(dir))
		abort();
	path = xasprintf("%s/config.json", dir);
	setenv("DOCKER_CONFIG", dir, 1);
	unsetenv("DOCKER_HOST");
	unsetenv("DOCKER_CONTEXT");
	ok(docker_daemon_resolve(&d, &err) == 0 && strcmp(d.at.context, "default") == 0 &&
	   strcmp(d.at.endpoint, DOCKER_DEFAULT_ENDPOINT) == 0 && d.local, "no config: the default context, local");
	docker_daemon_free(&d);
	f = fopen(path, "w");
	fputs("{\"auths\": {}, \"currentContext\": \"default\"}", f);
	fclose(f);
	ok(docker_daemon_resolve(&d, &err) == 0 && d.local, "currentContext default: local");
	docker_daemon_free(&d);
	setenv("DOCKER_HOST", "ssh://me@gpu-box", 1);
	setenv("DOCKER_CONTEXT", "other", 1);
	ok(docker_daemon_resolve(&d, &err) == 0 && strcmp(d.at.context, "default") == 0 && !d.local &&
	   strcmp(d.host, "gpu-box") == 0, "DOCKER_HOST wins over DOCKER_CONTEXT, as docker has it");
	docker_daemon_free(&d);
	unsetenv("DOCKER_HOST");
	setenv("DOCKER_CONTEXT", "default", 1);
	ok(docker_daemon_resolve(&d, &err) == 0 && d.local, "DOCKER_CONTEXT=default: local, no docker call");
	docker_daemon_free(&d);
	/* the default context's TLS, as docker reads it: set to anything is on */
	unsetenv("DOCKER_CONTEXT");
	setenv("DOCKER_HOST", "tcp://10.0.0.5:2376", 1);
	setenv("DOCKER_TLS_VERIFY", "0", 1);
	setenv("DOCKER_CERT_PATH", "certs/box", 1);
	rc = docker_daemon_resolve(&d, &err);
	ok(rc == 0 && d.at.tls_verify && !d.at.tls && d.at.cert_path && d.at.cert_path[0] == '/' && strstr(d.at.cert_path, "/certs/box"),
	   "DOCKER_TLS_VERIFY and DOCKER_CERT_PATH, made absolute (%s)", d.at.cert_path ? d.at.cert_path : "none");
	docker_daemon_free(&d);
	unsetenv("DOCKER_HOST");
	unsetenv("DOCKER_TLS_VERIFY");
	unsetenv("DOCKER_CERT_PATH");
	os_error_clear(&err);
	unlink(path);
	rmdir(dir);
	free(path);
	unsetenv("DOCKER_CONTEXT");
	unsetenv("DOCKER_CONFIG");
}

/* A scratch directory with stand-ins for ssh and docker (on PATH and
 * OPENSHELL_DOCKER): ssh -G prints what fake-ssh.out holds; docker context
 * inspect the endpoint in context.endpoint, or fails when it is absent. */
static char bin[] = "/tmp/test_daemon_bin.XXXXXX";

static void write_text(const char *name, const char *text, int mode)
{
	cleanup_free char *path = xasprintf("%s/%s", bin, name);
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
	chmod(path, (mode_t)mode);
}

static void stand_ins(void)
{
	cleanup_free char *ssh = NULL, *docker = NULL, *path = NULL, *exe = NULL;

	if (!mkdtemp(bin))
		abort();
	ssh = xasprintf("#!/bin/sh\necho \"$*\" >%s/ssh.args\ncat %s/fake-ssh.out\n", bin, bin);
	docker = xasprintf("#!/bin/sh\necho \"${DOCKER_HOST-unset} ${DOCKER_CONTEXT-unset} ${DOCKER_TLS_VERIFY-unset} ${DOCKER_CERT_PATH-unset}\" >%s/docker.env\n"
			   "[ -f %s/context.endpoint ] || { echo 'context \"box\": context not found' >&2; exit 1; }\n"
			   "printf '\"%%s\"\\n' \"$(cat %s/context.endpoint)\"\n", bin, bin, bin);
	write_text("ssh", ssh, 0755);
	write_text("docker", docker, 0755);
	path = xasprintf("%s:%s", bin, getenv("PATH"));
	setenv("PATH", path, 1);
	exe = xasprintf("%s/docker", bin);
	setenv("OPENSHELL_DOCKER", exe, 1);
}

/* docker_daemon_ssh_hostname() of an endpoint, parsed as resolve does. */
static char *ssh_hostname(const char *endpoint)
{
	struct docker_daemon d = { .at.endpoint = xstrdup(endpoint) };
	os_error err = { 0 };
	char *name = docker_daemon_parse_endpoint(&d, &err) == 0 ? docker_daemon_ssh_hostname(&d) : NULL;

	os_error_clear(&err);
	docker_daemon_free(&d);
	return name;
}

static void test_ssh_hostname(void)
{
	cleanup_free char *args_path = xasprintf("%s/ssh.args", bin), *args = NULL;
	char *name;
	size_t len;
	os_error err = { 0 };

	write_text("fake-ssh.out", "user root\nhostname 10.9.8.7\nport 2222\n", 0644);
	name = ssh_hostname("ssh://root@gpu-box:2222");
	ok(name && strcmp(name, "10.9.8.7") == 0, "an ssh alias is what ssh -G says its hostname is (%s)",
	   name ? name : "none");
	free(name);
	if (read_file(args_path, 4096, &args, &len, &err) < 0)
		args = xstrdup("none");
	ok(strcmp(args, "-G -l root -p 2222 -- gpu-box\n") == 0, "ssh -G is asked with docker's user and port: %s", args);
	ok(ssh_hostname("tcp://gpu-box:2376") == NULL, "a tcp:// host is taken as written");
	write_text("fake-ssh.out", "user root\n", 0644);
	ok(ssh_hostname("ssh://gpu-box") == NULL, "no hostname from ssh: the host as written");
	os_error_clear(&err);
}

/* The daemon the last docker call was given, as the fake docker wrote
 * it: DOCKER_HOST, DOCKER_CONTEXT, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH. */
static char *last_saw(void)
{
	cleanup_free char *path = xasprintf("%s/docker.env", bin);
	char *text = NULL;
	size_t len;
	os_error err = { 0 };

	if (read_file(path, 4096, &text, &len, &err) < 0)
		text = xstrdup("none");
	unlink(path);
	os_error_clear(&err);
	return text;
}

/* The daemon a docker call was given: ON's (NULL: the process's). */
static char *docker_saw(const struct docker_target *on)
{
	const char *args[] = { "context", "inspect", "--", "any", NULL };
	os_error err = { 0 };

	docker_ok(on, args, 0, &err);
	os_error_clear(&err);
	return last_saw();
}

/* The call on ON went to the daemon WANT says (docker_saw's line). */
static void saw_is(const struct docker_target *on, const char *want, const char *name)
{
	char *saw = docker_saw(on);

	is_str(saw, want, name);
	free(saw);
}

/* A gateway's recorded daemon, followed: its calls name it, TLS as
 * recorded; a context that names another daemon now refused; neither
 * the process's target nor its environment moves. */
static void test_follow(void)
{
	struct docker_target tls = { .context = "default", .endpoint = "tcp://10.0.0.5:2376", .tls_recorded = 1,
				    .tls_verify = 1, .cert_path = "/certs/box" };
	struct docker_target box = { .context = "box", .endpoint = "ssh://root@gpu-box" };
	struct docker_target old = { 0 };
	const struct docker_target *on = NULL;
	cleanup_free char *ep = xasprintf("%s/context.endpoint", bin);
	os_error err = { 0 };

	setenv("DOCKER_HOST", "unix:///elsewhere.sock", 1);
	setenv("DOCKER_CERT_PATH", "/other", 1);
	setenv("DOCKER_TLS", "1", 1);
	ok(docker_daemon_follow("t", &tls, &on, &err) == 0 && on == &tls, "the default context: its calls name it");
	saw_is(on, "tcp://10.0.0.5:2376 unset 1 /certs/box\n", "a call that names it: endpoint and TLS as recorded");
	saw_is(NULL, "unix:///elsewhere.sock unset unset /other\n", "one that names none: the process's target, unmoved");
	ok(strcmp(docker_env("DOCKER_HOST"), "unix:///elsewhere.sock") == 0 && !docker_env("DOCKER_TLS_VERIFY") &&
	   strcmp(getenv("DOCKER_CERT_PATH"), "/other") == 0 && getenv("DOCKER_TLS"),
	   "the process's environment and target are left as they were");
	write_text("context.endpoint", "ssh://root@gpu-box", 0644);
	ok(docker_daemon_follow("r", &box, &on, &err) == 0 && on == &box, "a named context that still names the daemon");
	saw_is(on, "unset box unset /other\n", "its calls: the context, DOCKER_HOST dropped, the user's TLS, not another's");
	on = &tls;
	ok(docker_daemon_follow("o", &old, &on, &err) == 0 && on == NULL,
	   "metadata older than the record: the process's target serves");
	write_text("context.endpoint", "tcp://10.0.0.9:2376", 0644);
	docker_daemon_follow("r", &box, &on, &err);
	ok(err.code == OS_EXIT_CONFLICT && strstr(err.msg, "ssh://root@gpu-box") && strstr(err.msg, "tcp://10.0.0.9:2376") &&
	   strstr(err.msg, "docker context update box --docker host=ssh://root@gpu-box"),
	   "re-pointed at another daemon: refused, naming both and the fix: %s", err.msg ? err.msg : "(none)");
	os_error_clear(&err);
	unlink(ep);
	docker_daemon_follow("r", &box, &on, &err);
	ok(err.code == OS_EXIT_DOCKER && strstr(err.msg, "docker context create box --docker host=ssh://root@gpu-box"),
	   "a context that is gone: a Docker error naming how to make it again: %s", err.msg ? err.msg : "(none)");
	os_error_clear(&err);
	unsetenv("DOCKER_HOST");
	unsetenv("DOCKER_CERT_PATH");
	unsetenv("DOCKER_TLS");
}

/* Two daemons in one process, side by side (a node's and its gateway's):
 * each call names its own, in any order, and the process's target and
 * environment never change. */
static void test_two_daemons(void)
{
	struct docker_target node = { .context = "default", .endpoint = "ssh://root@node-b", .tls_recorded = 1 };
	struct docker_target server = { .context = "default", .endpoint = "tcp://10.0.0.5:2376", .tls_recorded = 1,
				       .tls_verify = 1, .cert_path = "/certs/box" };
	write_text("context.endpoint", "ssh://root@gpu-box", 0644);
	setenv("DOCKER_HOST", "unix:///here.sock", 1);
	saw_is(&node, "ssh://root@node-b unset unset unset\n", "a call on the node: docker talks to its daemon");
	saw_is(&server, "tcp://10.0.0.5:2376 unset 1 /certs/box\n", "the next on the server: its daemon, with its TLS");
	saw_is(NULL, "unix:///here.sock unset unset unset\n", "one that names none: the process's, as it started");
	ok(strcmp(getenv("DOCKER_HOST"), "unix:///here.sock") == 0 && !getenv("DOCKER_TLS_VERIFY"),
	   "the process's environment never changed");
	/* A daemon recorded without TLS: the environment's TLS settings, as
	 * docker itself would take them. */
	node.tls_recorded = 0;
	setenv("DOCKER_TLS_VERIFY", "1", 1);
	saw_is(&node, "ssh://root@node-b unset 1 unset\n", "recorded without TLS: the environment's TLS settings, as docker takes them");
	unsetenv("DOCKER_TLS_VERIFY");
	{
		const struct docker_target *followed = NULL;
		os_error err = { 0 };

		/* node add: the server followed for its calls, the node's naming
		 * the node, each with its own TLS. */
		ok(docker_daemon_follow("g", &server, &followed, &err) == 0 && followed == &server,
		   "the server followed for its calls");
		saw_is(followed, "tcp://10.0.0.5:2376 unset 1 /certs/box\n", "a call that names it: the server, with its TLS");
		node.tls_recorded = 1;
		saw_is(&node, "ssh://root@node-b unset unset unset\n", "the next on the node: nothing of the server's TLS");
		saw_is(NULL, "unix:///here.sock unset unset unset\n", "the process's target did not move");
	}
	unsetenv("DOCKER_HOST");
}

/* A container's calls go to its daemon (struct docker_ctr): kube/'s exec,
 * one beside others, its inspect and its healthcheck. */
static void test_container_calls(void)
{
	struct docker_target server = { .context = "default", .endpoint = "tcp://10.0.0.5:2376", .tls_recorded = 1,
				       .tls_verify = 1, .cert_path = "/certs/box" };
	struct docker_ctr gw = { &server, "openshell-cluster-g" };
	struct gw_container c = { .running = 1 };
	struct run_result res = { 0 };
	struct run_child *call;
	char *line = NULL, *saw;
	os_error err = { 0 };

	setenv("DOCKER_HOST", "unix:///here.sock", 1);
	kube_exec(&gw, (const char *const[]){ "get", "nodes", NULL }, NULL, 0, &res, &err);
	run_result_free(&res);
	is_str(saw = last_saw(), "tcp://10.0.0.5:2376 unset 1 /certs/box\n", "kubectl through the container's daemon");
	free(saw);
	os_error_clear(&err);
	if ((call = kube_start(&gw, (const char *const[]){ "get", "pods", NULL }, &(struct run_spec){ 0 }, &err)))
		docker_await(call, &res, &err);
	run_result_free(&res);
	is_str(saw = last_saw(), "tcp://10.0.0.5:2376 unset 1 /certs/box\n", "one beside others there too");
	free(saw);
	os_error_clear(&err);
	container_inspect(&gw, &c, &err);
	container_free(&c);
	is_str(saw = last_saw(), "tcp://10.0.0.5:2376 unset 1 /certs/box\n", "its inspect there too");
	free(saw);
	os_error_clear(&err);
	c = (struct gw_container){ .running = 1 };
	strv_push(&c.health_test, "true");
	gw.on = NULL;
	container_probe_health(&gw, &c, &line, &err);
	is_str(saw = last_saw(), "unix:///here.sock unset unset unset\n", "one that names none: the user's daemon");
	free(saw);
	free(line);
	container_free(&c);
	os_error_clear(&err);
	unsetenv("DOCKER_HOST");
}

/* The daemon a gateway's target names, as start describes it: its
 * endpoint read, its strings its own, and the user's TLS settings where
 * older metadata recorded none. */
static void test_daemon_of(void)
{
	struct docker_target box = { .context = "box", .endpoint = "ssh://root@gpu-box:2222" };
	struct docker_target old = { .context = "default", .endpoint = "tcp://10.0.0.5:2376" };
	struct docker_daemon d;
	os_error err = { 0 };

	ok(docker_daemon_of(&box, &d, &err) == 0 && d.at.context != box.context && strcmp(d.at.context, "box") == 0 &&
	   strcmp(d.host, "gpu-box") == 0 && strcmp(d.user, "root") == 0 && strcmp(d.port, "2222") == 0 && !d.local,
	   "a named context's: its endpoint read, the strings its own");
	docker_daemon_free(&d);
	setenv("DOCKER_TLS_VERIFY", "1", 1);
	setenv("DOCKER_CERT_PATH", "/certs/mine", 1);
	ok(docker_daemon_of(&old, &d, &err) == 0 && d.at.tls_recorded && d.at.tls_verify && !d.at.tls &&
	   strcmp(d.at.cert_path, "/certs/mine") == 0 && strcmp(d.at.endpoint, "tcp://10.0.0.5:2376") == 0,
	   "recorded without TLS: the user's settings, to be recorded");
	docker_daemon_free(&d);
	unsetenv("DOCKER_TLS_VERIFY");
	unsetenv("DOCKER_CERT_PATH");
	setenv("DOCKER_HOST", "tcp://10.0.0.7:2375", 1);
	ok(docker_daemon_of(NULL, &d, &err) == 0 && strcmp(d.at.endpoint, "tcp://10.0.0.7:2375") == 0,
	   "none named: the process's target, resolved");
	docker_daemon_free(&d);
	saw_is(&(struct docker_target){ .context = "default" }, "tcp://10.0.0.7:2375 default unset unset\n",
	       "'default' as typed: docker's default context, DOCKER_HOST kept");
	saw_is(&(struct docker_target){ .context = "gpu-lab" }, "unset gpu-lab unset unset\n",
	       "another as typed: that context, DOCKER_HOST dropped");
	unsetenv("DOCKER_HOST");
	os_error_clear(&err);
}

static void test_reach(void)
{
	struct docker_daemon here = { .at = { .context = "default", .endpoint = "unix:///var/run/docker.sock" }, .local = 1 };
	struct docker_daemon box = { .at = { .context = "box", .endpoint = "ssh://root@gpu-box" }, .host = "gpu-box" };
	struct docker_daemon lo = { .at = { .context = "default", .endpoint = "ssh://root@127.0.0.1:22" }, .host = "127.0.0.1" };
	struct gateway_request rq;
	struct deploy_plan o;
	struct strv sans = { 0 };
	os_error err = { 0 };
	char *addr;

	gateway_request_init(&rq);
	rq.name = "r";
	deploy_plan_init(&o, &rq);
	ok(reach_check(&o, &here, &err) == 0, "a local daemon: the default loopback bind is fine");
	ok(reach_check(&o, &lo, &err) == 0, "ssh to this machine's loopback: fine too");
	write_text("fake-ssh.out", "hostname 10.9.8.7\n", 0644);
	ok(reach_check(&o, &box, &err) < 0 && err.code == OS_EXIT_USAGE && strstr(err.msg, "give --bind") &&
	   strstr(err.msg, "(the kubeconfig then names 10.9.8.7)"),
	   "another machine's daemon: its loopback is refused, naming --bind and the address ssh reaches");
	os_error_clear(&err);
	rq.bind = "127.0.0.1";
	ok(reach_check(&o, &box, &err) == 0, "asked for, its loopback is kept (the user's tunnel)");
	o.bind = "0.0.0.0";
	o.port = 16443;
	reach_sans(&o, &box, &sans);
	addr = deploy_api_address(&o);
	ok(sans.n == 2 && strcmp(sans.v[0], "10.9.8.7") == 0 && strcmp(sans.v[1], "gpu-box") == 0 &&
	   o.host_sans == &sans && strcmp(addr, "10.9.8.7:16443") == 0,
	   "a wildcard bind behind an ssh alias: reached at its HostName, both certified (%s)", addr);
	free(addr);
	strv_free(&sans);
	write_text("fake-ssh.out", "hostname gpu-box\n", 0644);
	reach_sans(&o, &box, &sans);
	addr = deploy_api_address(&o);
	ok(sans.n == 1 && strcmp(sans.v[0], "gpu-box") == 0 && strcmp(addr, "gpu-box:16443") == 0,
	   "a name that is no alias: certified and reached by it (%s)", addr);
	free(addr);
	strv_free(&sans);
	rq.tls_san[rq.n_tls_san++] = "gw.example.test";
	reach_sans(&o, &box, &sans);
	addr = deploy_api_address(&o);
	ok(strcmp(addr, "gw.example.test:16443") == 0, "--tls-san's first name is the server before the host's");
	free(addr);
	strv_free(&sans);
	deploy_plan_free(&o);
	gateway_request_free(&rq);
}

/* A flow sets its deadline's per-call cap before its first docker call:
 * OPENSHELL_CALL_TIMEOUT must be read by then. */
static void test_call_timeout(void)
{
	setenv("OPENSHELL_CALL_TIMEOUT", "7s", 1);
	is_int(docker_call_timeout_ms(), 7000, "OPENSHELL_CALL_TIMEOUT is the per-call cap before any docker call");
	unsetenv("OPENSHELL_CALL_TIMEOUT");
}

/* --context chose the daemon (once, before any call): a gateway made in
 * that context is reached through the process's target; one made
 * elsewhere is refused, naming the flag to drop. Last: the choice stays. */
static void test_chosen(void)
{
	struct docker_target box = { .context = "box", .endpoint = "ssh://root@gpu-box" };
	struct docker_target tls = { .context = "default", .endpoint = "tcp://10.0.0.5:2376", .tls_recorded = 1 };
	const struct docker_target *on = &tls;
	os_error err = { 0 };

	setenv("DOCKER_HOST", "unix:///here.sock", 1);
	write_text("context.endpoint", "ssh://root@gpu-box", 0644);
	ok(docker_daemon_choose("box", &err) == 0, "--context box");
	saw_is(NULL, "unset box unset unset\n", "the process's target: the context, DOCKER_HOST dropped");
	ok(docker_daemon_follow("g", &box, &on, &err) == 0 && on == NULL,
	   "a gateway made in the chosen context: its calls are the process's");
	docker_daemon_follow("t", &tls, &on, &err);
	ok(err.code == OS_EXIT_CONFLICT && strstr(err.msg, "drop --context") && strstr(err.msg, "tcp://10.0.0.5:2376"),
	   "one made on another daemon: refused, naming it and the fix: %s", err.msg ? err.msg : "(none)");
	os_error_clear(&err);
	unsetenv("DOCKER_HOST");
}

int main(void)
{
	test_call_timeout();
	test_endpoints();
	test_resolve();
	stand_ins();
	test_ssh_hostname();
	test_follow();
	test_two_daemons();
	test_reach();
	test_container_calls();
	test_daemon_of();
	test_chosen();
	for (const char *const *f = (const char *const[]){ "ssh", "docker", "ssh.args", "fake-ssh.out", "docker.env",
								"context.endpoint", NULL }; *f; f++) {
		cleanup_free char *path = xasprintf("%s/%s", bin, *f);
		unlink(path);
	}
	rmdir(bin);
	return tap_done();
}
