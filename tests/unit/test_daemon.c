/* test_daemon.c - which Docker daemon docker talks to (docker/daemon.h),
 * and where clients then reach a gateway's API (gateway/reach.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/exitcode.h"
#include "base/xalloc.h"
#include "docker/daemon.h"
#include "gateway/deploy.h"
#include "gateway/reach.h"
#include "tap.h"

static void endpoint(const char *e, int local, const char *host)
{
	struct docker_daemon d = { .endpoint = xstrdup(e) };
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

static void test_endpoints(void)
{
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

	if (!mkdtemp(dir))
		abort();
	path = xasprintf("%s/config.json", dir);
	setenv("DOCKER_CONFIG", dir, 1);
	unsetenv("DOCKER_HOST");
	unsetenv("DOCKER_CONTEXT");
	ok(docker_daemon_resolve(&d, &err) == 0 && strcmp(d.context, "default") == 0 &&
	   strcmp(d.endpoint, DOCKER_DEFAULT_ENDPOINT) == 0 && d.local, "no config: the default context, local");
	docker_daemon_free(&d);
	f = fopen(path, "w");
	fputs("{\"auths\": {}, \"currentContext\": \"default\"}", f);
	fclose(f);
	ok(docker_daemon_resolve(&d, &err) == 0 && d.local, "currentContext default: local");
	docker_daemon_free(&d);
	setenv("DOCKER_HOST", "ssh://me@gpu-box", 1);
	setenv("DOCKER_CONTEXT", "other", 1);
	ok(docker_daemon_resolve(&d, &err) == 0 && strcmp(d.context, "default") == 0 && !d.local &&
	   strcmp(d.host, "gpu-box") == 0, "DOCKER_HOST wins over DOCKER_CONTEXT, as docker has it");
	docker_daemon_free(&d);
	unsetenv("DOCKER_HOST");
	setenv("DOCKER_CONTEXT", "default", 1);
	ok(docker_daemon_resolve(&d, &err) == 0 && d.local, "DOCKER_CONTEXT=default: local, no docker call");
	docker_daemon_free(&d);
	os_error_clear(&err);
	unlink(path);
	rmdir(dir);
	free(path);
	unsetenv("DOCKER_CONTEXT");
	unsetenv("DOCKER_CONFIG");
}

static void test_reach(void)
{
	struct docker_daemon here = { .context = "default", .endpoint = "unix:///var/run/docker.sock", .local = 1 };
	struct docker_daemon box = { .context = "box", .endpoint = "ssh://root@gpu-box", .host = "gpu-box" };
	struct docker_daemon lo = { .context = "default", .endpoint = "ssh://root@127.0.0.1:22", .host = "127.0.0.1" };
	struct deploy_opts o;
	struct strv sans = { 0 };
	os_error err = { 0 };
	char *addr;

	deploy_opts_init(&o);
	o.name = "r";
	ok(reach_check(&o, &here, &err) == 0, "a local daemon: the default loopback bind is fine");
	ok(reach_check(&o, &lo, &err) == 0, "ssh to this machine's loopback: fine too");
	ok(reach_check(&o, &box, &err) < 0 && err.code == OS_EXIT_USAGE && strstr(err.msg, "give --bind"),
	   "another machine's daemon: its loopback is refused, naming --bind");
	os_error_clear(&err);
	o.bind_set = 1;
	ok(reach_check(&o, &box, &err) == 0, "asked for, its loopback is kept (the user's tunnel)");
	o.bind = "0.0.0.0";
	o.port = 16443;
	reach_sans(&o, &box, &sans);
	addr = deploy_api_address(&o);
	ok(sans.n == 1 && strcmp(sans.v[0], "gpu-box") == 0 && o.host_sans == &sans && strcmp(addr, "gpu-box:16443") == 0,
	   "a wildcard bind on another machine: certified and reached by its name (%s)", addr);
	free(addr);
	strv_free(&sans);
	o.tls_san[o.n_tls_san++] = "gw.example.test";
	reach_sans(&o, &box, &sans);
	addr = deploy_api_address(&o);
	ok(strcmp(addr, "gw.example.test:16443") == 0, "--tls-san's first name is the server before the host's");
	free(addr);
	strv_free(&sans);
}

int main(void)
{
	test_endpoints();
	test_resolve();
	test_reach();
	return tap_done();
}
