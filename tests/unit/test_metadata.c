/* test_metadata.c - metadata.json, and the files and directories it lives in. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/exitcode.h"
#include "base/files.h"
#include "base/xalloc.h"
#include "gateway/state/metadata.h"
#include "tap.h"

/* ---- metadata ----------------------------------------------------------- */

static void test_round_trip(void)
{
	struct gw_metadata in = {
		.name = "dev",
		.container = "openshell-cluster-dev",
		.image = "ghcr.io/openshell/cluster:0.1.0",
		.bind = "::1",
		.port = 16443,
		.gpu = 1,
		.server = "https://[::1]:16443",
		.kubeconfig = "/home/u/.config/openshell/gateways/dev/kubeconfig",
		.created = "2026-11-29T14:31:43Z",
	};
	struct gw_metadata out;
	os_error err = { 0 };
	char *json = metadata_to_json(&in);

	ok(json != NULL, "metadata_to_json returns text");
	is_int(metadata_parse(json, strlen(json), &out, &err), 0, "its output parses");
	is_str(out.name, in.name, "name round-trips");
	is_str(out.container, in.container, "container round-trips");
	is_str(out.image, in.image, "image round-trips");
	is_str(out.bind, in.bind, "bind round-trips");
	is_int(out.port, in.port, "port round-trips");
	is_int(out.gpu, 1, "gpu true round-trips");
	is_str(out.server, in.server, "server round-trips");
	is_str(out.kubeconfig, in.kubeconfig, "kubeconfig round-trips");
	is_str(out.created, in.created, "created round-trips");
	ok(json && strstr(json, "\"schema\":\t1") != NULL, "schema 1 is written");
	metadata_free(&out);
	ok(out.name == NULL && out.created == NULL, "metadata_free clears the struct");
	free(json);

	in.gpu = 0;
	in.port = 1;
	in.bind = "0.0.0.0";
	json = metadata_to_json(&in);
	is_int(metadata_parse(json, strlen(json), &out, &err), 0, "gpu false parses");
	is_int(out.gpu, 0, "gpu false round-trips");
	is_int(out.port, 1, "port 1 round-trips");
	metadata_free(&out);
	free(json);

	/* The GPU allocation: kept with GPUs, absent without or in older files. */
	in.gpu = 1;
	in.allocation = GPU_ALLOCATION_DRA;
	json = metadata_to_json(&in);
	is_int(metadata_parse(json, strlen(json), &out, &err), 0, "an allocation parses");
	is_int(out.allocation, GPU_ALLOCATION_DRA, "gpu_allocation dra round-trips");
	metadata_free(&out);
	free(json);
	in.gpu = 0;
	json = metadata_to_json(&in);
	ok(!strstr(json, "gpu_allocation"), "none written without GPUs");
	is_int(metadata_parse(json, strlen(json), &out, &err), 0, "nor read");
	is_int(out.allocation, GPU_ALLOCATION_UNSET, "unset");
	metadata_free(&out);
	free(json);
	{
		static const char bad[] = "{\"schema\":1,\"name\":\"a\",\"container\":\"c\",\"image\":\"i\",\"bind\":\"b\","
					  "\"port\":1,\"gpu\":true,\"server\":\"s\",\"kubeconfig\":\"k\","
					  "\"created\":\"t\",\"gpu_allocation\":\"plugins\"}";
		is_int(metadata_parse(bad, strlen(bad), &out, &err), 0, "an allocation of no known name is a hint lost, not a file lost");
		is_int(out.allocation, GPU_ALLOCATION_UNSET, "read as unset");
		metadata_free(&out);
	}

	in.port = 65535;
	in.name = "quote\"back\\slash";
	json = metadata_to_json(&in);
	is_int(metadata_parse(json, strlen(json), &out, &err), 0, "escaped strings parse");
	is_int(out.port, 65535, "port 65535 round-trips");
	is_str(out.name, "quote\"back\\slash", "quotes and backslashes round-trip");
	metadata_free(&out);
	free(json);
	os_error_clear(&err);
}

/* The daemon a gateway lives on: a named context alone, or the default
 * context's endpoint with the environment's TLS settings (a path, no key). */
static void test_docker_record(void)
{
	struct gw_metadata in = {
		.name = "r", .container = "openshell-cluster-r", .image = "i", .bind = "0.0.0.0", .port = 6443,
		.server = "https://10.0.0.5:6443", .kubeconfig = "/k", .created = "2026-11-29T14:31:43Z",
		.docker = { .context = "default", .endpoint = "tcp://10.0.0.5:2376", .tls_recorded = 1, .tls_verify = 1,
			    .cert_path = "/home/u/.docker/box" },
	};
	struct gw_metadata out;
	const struct docker_target *w = &out.docker;
	os_error err = { 0 };
	char *json = metadata_to_json(&in);

	is_int(metadata_parse(json, strlen(json), &out, &err), 0, "a TLS record parses");
	ok(w->tls_recorded && w->tls_verify && !w->tls && strcmp(w->cert_path, "/home/u/.docker/box") == 0 &&
	   strcmp(w->endpoint, "tcp://10.0.0.5:2376") == 0 && strcmp(w->context, "default") == 0,
	   "endpoint, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH round-trip");
	metadata_free(&out);
	free(json);

	in.docker.context = "box";
	in.docker.tls_recorded = 0;
	in.docker.cert_path = NULL;
	json = metadata_to_json(&in);
	ok(strstr(json, "\"docker_tls_verify\":\tnull") != NULL, "a named context records no TLS: null");
	is_int(metadata_parse(json, strlen(json), &out, &err), 0, "and parses");
	ok(!w->tls_recorded && strcmp(w->context, "box") == 0 && !w->cert_path, "nothing of TLS to set when following it");
	metadata_free(&out);
	free(json);
	os_error_clear(&err);
}

static int digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static void test_now(void)
{
	char *s = metadata_now();
	int ok_fmt = s && strlen(s) == 20 && digits(s, 4) && s[4] == '-' && digits(s + 5, 2) &&
		     s[7] == '-' && digits(s + 8, 2) && s[10] == 'T' && digits(s + 11, 2) && s[13] == ':' &&
		     digits(s + 14, 2) && s[16] == ':' && digits(s + 17, 2) && s[19] == 'Z';

	ok(ok_fmt, "metadata_now is YYYY-MM-DDTHH:MM:SSZ (%s)", s ? s : "(null)");
	ok(s && strncmp(s, "20", 2) == 0 && atoi(s + 5) >= 1 && atoi(s + 5) <= 12 && atoi(s + 8) >= 1 &&
	   atoi(s + 8) <= 31 && atoi(s + 11) <= 23 && atoi(s + 14) <= 59 && atoi(s + 17) <= 60,
	   "metadata_now fields are in range");
	free(s);
}

#define GOOD_FIELDS                                                                  \
	"\"name\":\"dev\",\"container\":\"openshell-cluster-dev\",\"image\":\"i:1\","   \
	"\"bind\":\"127.0.0.1\",\"server\":\"https://127.0.0.1:6443\","                \
	"\"kubeconfig\":\"/k\",\"created\":\"2026-01-01T00:00:00Z\""

static void corrupt(const char *json, const char *want_in, const char *what)
{
	struct gw_metadata md;
	os_error err = { 0 };
	int rc;

	memset(&md, 0x5a, sizeof(md));
	rc = metadata_parse(json, strlen(json), &md, &err);
	is_int(rc, -1, what);
	ok(err.msg && strstr(err.msg, "metadata.json"), "%s: message names metadata.json", what);
	if (want_in)
		ok(err.msg && strstr(err.msg, want_in), "%s: message has '%s'", what, want_in);
	if (err.msg && (!strstr(err.msg, "metadata.json") || (want_in && !strstr(err.msg, want_in))))
		printf("#   message: %s\n", err.msg);
	ok(md.name == NULL && md.container == NULL && md.created == NULL, "%s: nothing half-filled", what);
	os_error_clear(&err);
	metadata_free(&md);
}

static void test_corrupt(void)
{
	static const char good[] = "{\"schema\":1," GOOD_FIELDS ",\"port\":6443,\"gpu\":true}";
	struct gw_metadata md;
	os_error err = { 0 };

	is_int(metadata_parse(good, strlen(good), &md, &err), 0, "the hand-written good file parses");
	is_int(md.port, 6443, "and its port is read");
	metadata_free(&md);

	corrupt("not json", "not valid JSON", "not JSON");
	corrupt("", NULL, "empty file");
	corrupt("{\"schema\":1,", NULL, "truncated JSON");
	corrupt("[1,2]", "schema", "a JSON array");
	corrupt("{\"schema\":2," GOOD_FIELDS ",\"port\":6443,\"gpu\":true}", "schema", "schema 2");
	corrupt("{\"schema\":\"1\"," GOOD_FIELDS ",\"port\":6443,\"gpu\":true}", "schema", "schema as a string");
	corrupt("{" GOOD_FIELDS ",\"port\":6443,\"gpu\":true}", "schema", "no schema");
	corrupt("{\"schema\":1,\"container\":\"c\",\"image\":\"i\",\"bind\":\"b\",\"server\":\"s\","
		"\"kubeconfig\":\"k\",\"created\":\"c\",\"port\":6443,\"gpu\":true}",
		"'name'", "missing name");
	corrupt("{\"schema\":1,\"name\":5,\"container\":\"c\",\"image\":\"i\",\"bind\":\"b\",\"server\":\"s\","
		"\"kubeconfig\":\"k\",\"created\":\"c\",\"port\":6443,\"gpu\":true}",
		"'name'", "name as a number");
	corrupt("{\"schema\":1,\"name\":\"n\",\"container\":\"c\",\"image\":\"i\",\"bind\":\"b\",\"server\":\"s\","
		"\"kubeconfig\":\"k\",\"port\":6443,\"gpu\":true}",
		"'created'", "missing created (the last string)");
	corrupt("{\"schema\":1," GOOD_FIELDS ",\"port\":0,\"gpu\":true}", "port", "port 0");
	corrupt("{\"schema\":1," GOOD_FIELDS ",\"port\":70000,\"gpu\":true}", "port", "port 70000");
	corrupt("{\"schema\":1," GOOD_FIELDS ",\"port\":1.5,\"gpu\":true}", "port", "port 1.5");
	corrupt("{\"schema\":1," GOOD_FIELDS ",\"port\":-1,\"gpu\":true}", "port", "port -1");
	corrupt("{\"schema\":1," GOOD_FIELDS ",\"port\":\"6443\",\"gpu\":true}", "port", "port as a string");
	corrupt("{\"schema\":1," GOOD_FIELDS ",\"gpu\":true}", "port", "missing port");
	corrupt("{\"schema\":1," GOOD_FIELDS ",\"port\":6443,\"gpu\":\"true\"}", "gpu", "gpu as a string");
	corrupt("{\"schema\":1," GOOD_FIELDS ",\"port\":6443,\"gpu\":1}", "gpu", "gpu as a number");
	corrupt("{\"schema\":1," GOOD_FIELDS ",\"port\":6443}", "gpu", "missing gpu");
	os_error_clear(&err);
}

/* ---- fsutil ----------------------------------------------------------- */

static char *tmpdir;

static mode_t mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

static int leftover_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strstr(e->d_name, ".tmp.") != NULL;
	closedir(d);
	return n;
}

static void test_write_read(void)
{
	char *path = xasprintf("%s/kubeconfig", tmpdir);
	char *path2 = xasprintf("%s/metadata.json", tmpdir);
	char *missing = xasprintf("%s/no/such/dir/file", tmpdir);
	char *nofile = xasprintf("%s/absent", tmpdir);
	char *data = NULL;
	size_t len = 0;
	os_error err = { 0 };

	is_int(write_file_atomic(path, "secret\n", 7, 0600, &err), 0, "write_file_atomic writes a new file");
	is_int(mode_of(path), 0600, "it has mode 0600");
	is_int(read_file(path, 1024, &data, &len, &err), 0, "read_file reads it back");
	ok(data && len == 7 && memcmp(data, "secret\n", 7) == 0 && data[7] == '\0',
	   "the same bytes, NUL-terminated");
	free(data);

	is_int(write_file_atomic(path, "new", 3, 0600, &err), 0, "write_file_atomic replaces a file");
	is_int(read_file(path, 1024, &data, &len, &err), 0, "the replacement reads back");
	ok(data && len == 3 && strcmp(data, "new") == 0, "it has the new content only");
	free(data);

	/* Replacing a file that had looser permissions tightens them. */
	chmod(path, 0666);
	is_int(write_file_atomic(path, "x", 1, 0600, &err), 0, "rewrite of a 0666 file");
	is_int(mode_of(path), 0600, "the replacement is 0600 again");

	is_int(write_file_atomic(path2, "{}", 2, 0644, &err), 0, "write with mode 0644");
	is_int(mode_of(path2), 0644, "it has mode 0644 (umask does not narrow it)");

	is_int(write_file_atomic(path2, "", 0, 0600, &err), 0, "an empty file can be written");
	is_int(read_file(path2, 10, &data, &len, &err), 0, "an empty file reads back");
	ok(data && len == 0 && data[0] == '\0', "as empty text");
	free(data);
	is_int(leftover_tmp(tmpdir), 0, "no *.tmp.* file is left behind");

	is_int(write_file_atomic(missing, "x", 1, 0600, &err), -1, "write into a missing directory fails");
	ok(err.msg && strstr(err.msg, missing), "the message names the path");
	ok(err.msg && strstr(err.msg, "No such file or directory"), "and says why");
	os_error_clear(&err);

	data = (char *)"untouched";
	is_int(read_file(nofile, 10, &data, &len, &err), -1, "reading a missing file fails");
	is_int(err.code, OS_EXIT_NOTFOUND, "with OS_EXIT_NOTFOUND");
	ok(err.msg && strstr(err.msg, nofile), "naming the path");
	ok(data == NULL, "*data is NULL on failure");
	os_error_clear(&err);

	is_int(read_file(tmpdir, 10, &data, &len, &err), -1, "reading a directory fails");
	ok(err.code != OS_EXIT_NOTFOUND && err.code != 0, "not as not-found");
	os_error_clear(&err);

	free(path);
	free(path2);
	free(missing);
	free(nofile);
}

/* A file of `size` bytes read with `max`: accepted iff size <= max. */
static void read_sized(size_t size, size_t max)
{
	char *path = xasprintf("%s/sized", tmpdir);
	char *buf = xmalloc(size + 1), *data = NULL;
	size_t len = 0;
	os_error err = { 0 };
	int rc;

	for (size_t i = 0; i < size; i++)
		buf[i] = (char)('a' + i % 26);
	write_file_atomic(path, buf, size, 0600, &err);
	rc = read_file(path, max, &data, &len, &err);
	if (size <= max) {
		ok(rc == 0 && len == size && data && memcmp(data, buf, size) == 0,
		   "a %zu-byte file is read with max %zu", size, max);
		if (rc)
			printf("#   message: %s\n", err.msg ? err.msg : "(none)");
	} else {
		ok(rc == -1 && data == NULL && err.msg && strstr(err.msg, "larger than"),
		   "a %zu-byte file is refused with max %zu", size, max);
	}
	free(data);
	free(buf);
	free(path);
	os_error_clear(&err);
}

static void test_read_bounds(void)
{
	read_sized(10, 10);
	read_sized(11, 10);
	read_sized(100, 10);
	read_sized(4094, 4095);
	read_sized(4095, 4095);
	read_sized(4096, 4095);
	read_sized(4096, 4096);
	read_sized(4097, 4096);
	read_sized(8191, 8191);
	read_sized(20000, 65536);
	read_sized(70000, 65536);
}

static void test_mkdir_p(void)
{
	char *deep = xasprintf("%s/a/b/c", tmpdir);
	char *a = xasprintf("%s/a", tmpdir);
	char *ab = xasprintf("%s/a/b", tmpdir);
	char *slash = xasprintf("%s/d/e/", tmpdir);
	char *file = xasprintf("%s/plain", tmpdir);
	char *under = xasprintf("%s/plain/sub", tmpdir);
	os_error err = { 0 };
	struct stat st;

	is_int(mkdir_p(deep, 0700, &err), 0, "mkdir_p creates nested directories");
	ok(stat(deep, &st) == 0 && S_ISDIR(st.st_mode), "the deepest one is a directory");
	is_int(mode_of(a), 0700, "the first new one has mode 0700");
	is_int(mode_of(ab), 0700, "the middle one has mode 0700");
	is_int(mode_of(deep), 0700, "the last one has mode 0700");
	is_int(mode_of(tmpdir), 0700, "the existing parent is left as it was");
	is_int(mkdir_p(deep, 0700, &err), 0, "mkdir_p of an existing path succeeds");
	is_int(mkdir_p(slash, 0700, &err), 0, "a trailing slash is fine");
	is_int(mode_of(slash), 0700, "and the directory is 0700");

	write_file_atomic(file, "x", 1, 0600, &err);
	is_int(mkdir_p(under, 0700, &err), -1, "mkdir_p under a regular file fails");
	ok(err.msg && strstr(err.msg, "cannot create directory"), "with a message saying so");
	os_error_clear(&err);
	/* As `mkdir -p FILE` does: an existing non-directory is an error. */
	is_int(mkdir_p(file, 0700, &err), -1, "mkdir_p of a path that is a regular file fails");
	os_error_clear(&err);
	/* Nothing to make, and nothing read past the path's end. */
	ok(mkdir_p("", 0700, &err) == -1 && err.msg && strstr(err.msg, "empty path"), "mkdir_p of \"\" is an error");
	os_error_clear(&err);

	free(deep);
	free(a);
	free(ab);
	free(slash);
	free(file);
	free(under);
}

static void test_state_dir(void)
{
	char *dir = NULL;
	os_error err = { 0 };

	setenv("XDG_CONFIG_HOME", "/xdg/conf", 1);
	setenv("HOME", "/home/u", 1);
	is_int(gateway_state_dir("dev", &dir, &err), 0, "state dir with XDG_CONFIG_HOME");
	is_str(dir, "/xdg/conf/openshell/gateways/dev", "XDG_CONFIG_HOME is honoured");
	free(dir);
	dir = NULL;

	setenv("XDG_CONFIG_HOME", "relative/conf", 1);
	is_int(gateway_state_dir("dev", &dir, &err), 0, "state dir with a relative XDG_CONFIG_HOME");
	is_str(dir, "/home/u/.config/openshell/gateways/dev", "a relative XDG_CONFIG_HOME is ignored");
	free(dir);
	dir = NULL;

	setenv("XDG_CONFIG_HOME", "", 1);
	is_int(gateway_state_dir("x", &dir, &err), 0, "state dir with an empty XDG_CONFIG_HOME");
	is_str(dir, "/home/u/.config/openshell/gateways/x", "an empty XDG_CONFIG_HOME is ignored");
	free(dir);
	dir = NULL;

	unsetenv("XDG_CONFIG_HOME");
	is_int(gateway_state_dir("dev", &dir, &err), 0, "state dir with HOME only");
	is_str(dir, "/home/u/.config/openshell/gateways/dev", "HOME/.config is the fallback");
	free(dir);
	dir = NULL;

	unsetenv("HOME");
	is_int(gateway_state_dir("dev", &dir, &err), -1, "neither HOME nor XDG_CONFIG_HOME: error");
	ok(err.msg && strstr(err.msg, "HOME") && strstr(err.msg, "XDG_CONFIG_HOME"),
	   "the message names both variables");
	os_error_clear(&err);

	setenv("HOME", "rel", 1);
	setenv("XDG_CONFIG_HOME", "also-rel", 1);
	is_int(gateway_state_dir("dev", &dir, &err), -1, "relative HOME and XDG_CONFIG_HOME: error");
	os_error_clear(&err);
	unsetenv("HOME");
	unsetenv("XDG_CONFIG_HOME");
}

static void rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			char *sub = xasprintf("%s/%s", path, e->d_name);
			rm_rf(sub);
			free(sub);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

int main(void)
{
	char tmpl[] = "/tmp/openshell-test-metadata.XXXXXX";

	umask(022);
	test_round_trip();
	test_docker_record();
	test_now();
	test_corrupt();

	tmpdir = mkdtemp(tmpl);
	ok(tmpdir != NULL, "a scratch directory");
	if (tmpdir) {
		test_write_read();
		test_read_bounds();
		test_mkdir_p();
		rm_rf(tmpdir);
		ok(access(tmpdir, F_OK) < 0 && errno == ENOENT, "the scratch directory is removed");
	}
	test_state_dir();
	return tap_done();
}
