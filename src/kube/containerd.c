/* kube/containerd.c - the nvidia runtime in k3s's containerd config (see
 * kube/containerd.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/runner.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "kube/containerd.h"

/* k3s writes one table per runtime, in the v3 config (containerd 2.x)
 *     [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia']
 * or the v2 one (containerd 1.7)
 *     [plugins."io.containerd.grpc.v1.cri".containerd.runtimes."nvidia"]
 * and BinaryName in its .options table. Only these lines of a file k3s
 * generates are looked at, a table header and a key, so a line scan is
 * enough; nothing else of the TOML is read. */
static int is_nvidia_table(const char *line, size_t n, int *options)
{
	static const char *const heads[] = { ".runtimes.'nvidia']", ".runtimes.\"nvidia\"]",
					     ".runtimes.'nvidia'.options]", ".runtimes.\"nvidia\".options]", NULL };

	if (n == 0 || line[0] != '[')
		return 0;
	for (int i = 0; heads[i]; i++) {
		size_t h = strlen(heads[i]);
		if (n >= h && strncmp(line + n - h, heads[i], h) == 0) {
			*options = i >= 2;
			return 1;
		}
	}
	return 0;
}

void containerd_parse_nvidia(const char *toml, struct runtime_fact *f)
{
	int in_options = 0;

	f->config_read = 1;
	for (const char *p = toml; *p;) {
		const char *line = p + strspn(p, " \t");
		size_t n = strcspn(line, "\n");
		int options;

		while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\r'))
			n--;
		if (line[0] == '[') {
			in_options = 0;
			if (is_nvidia_table(line, n, &options)) {
				f->nvidia = 1;
				in_options = options;
			}
		} else if (in_options && strncmp(line, "BinaryName", 10) == 0 && !f->binary) {
			const char *q = memchr(line, '"', n), *e = q ? memchr(q + 1, '"', n - (size_t)(q + 1 - line)) : NULL;
			if (q && e)
				f->binary = xstrndup(q + 1, (size_t)(e - q - 1));
		}
		p += strcspn(p, "\n");
		if (*p)
			p++;
	}
}

struct run_child *containerd_nvidia_runtime_start(const struct docker_ctr *ctr, int timeout_ms, os_error *err)
{
	const char *args[] = { "exec", ctr->name, "cat", K3S_CONTAINERD_CONFIG, NULL };
	struct run_spec spec = { .timeout_ms = timeout_ms };

	return docker_start(ctr->on, args, &spec, err);
}

int containerd_nvidia_runtime(const struct docker_ctr *ctr, int timeout_ms, struct runtime_fact *f, os_error *err)
{
	struct run_child *c = containerd_nvidia_runtime_start(ctr, timeout_ms, err);

	if (!c) {
		memset(f, 0, sizeof(*f));
		return -1;
	}
	return containerd_nvidia_runtime_finish(c, f, err);
}

int containerd_nvidia_runtime_finish(struct run_child *c, struct runtime_fact *f, os_error *err)
{
	struct run_result res = { 0 };
	int rc;

	memset(f, 0, sizeof(*f));
	rc = docker_await(c, &res, err);
	/* cat fails while k3s has not written the file: not read yet. Nor is
	 * an empty one: k3s rewrites it at every start with os.WriteFile
	 * (pkg/agent/util/file.go), which truncates before it writes. */
	if (rc == 0 && res.status == 0 && *res.out)
		containerd_parse_nvidia(res.out, f);
	run_result_free(&res);
	return rc;
}

void runtime_fact_free(struct runtime_fact *f)
{
	free(f->binary);
	f->binary = NULL;
}
