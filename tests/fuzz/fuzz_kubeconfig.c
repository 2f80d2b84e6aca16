/* fuzz_kubeconfig.c - kubeconfig_rewrite() and kubeconfig_server() on any YAML.
 *
 * The k3s.yaml comes out of the container, so it is untrusted. Whatever it
 * holds, the rewrite must either fail cleanly or produce YAML that reads
 * back (kubeconfig_server(), as `gateway start` checks the written file)
 * with exactly the server it was asked to set. The server and name vary
 * with the input so that quoting (IPv6, YAML-1.1 words) is exercised too.
 */
#include "config.h"

#include "base/error.h"
#include "fuzz.h"
#include "kube/kubeconfig.h"

static const char *const servers[] = {
	"https://127.0.0.1:18443", "https://[::1]:6443", "https://10.1.2.3:443",
	"yes", "", "https://h:1/# x: y", "- 'a\"b\\", "https://\xc3\xa9:1",
};
static const char *const names[] = { "fz", "openshell", "default", "a-1", "null", "0" };

/* A gateway kubeconfig as openshell writes it, for the merges. */
static const char gateway_config[] =
	"apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://127.0.0.1:6443\n"
	"  name: openshell-fz\ncontexts:\n- context:\n    cluster: openshell-fz\n    user: openshell-fz\n"
	"  name: openshell-fz\ncurrent-context: openshell-fz\nusers:\n- name: openshell-fz\n  user: {}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_bytes(data, size);
	const char *server = servers[size % (sizeof(servers) / sizeof(*servers))];
	const char *name = names[(size / 8) % (sizeof(names) / sizeof(*names))];
	char *out = NULL, *got = NULL, *first = NULL;
	size_t out_len = 0;
	os_error err = { 0 };

	if (kubeconfig_server(buf, size, &first, &err) == 0) {
		FUZZ_ASSERT(first != NULL && err.msg == NULL);
	} else {
		FUZZ_ASSERT(first == NULL && err.msg != NULL && fuzz_one_line(err.msg));
		os_error_clear(&err);
	}

	if (kubeconfig_rewrite(buf, size, server, name, &out, &out_len, &err) == 0) {
		FUZZ_ASSERT(out != NULL && err.msg == NULL);
		FUZZ_ASSERT(out_len == strlen(out));
		/* every input with a server reads as one, before and after */
		FUZZ_ASSERT(first != NULL);
		if (kubeconfig_server(out, out_len, &got, &err) != 0) {
			fprintf(stderr, "rewritten kubeconfig does not read back: %s\n%s\n", err.msg, out);
			abort();
		}
		if (strcmp(got, server) != 0) {
			fprintf(stderr, "rewritten server '%s' != requested '%s'\n%s\n", got, server, out);
			abort();
		}
	} else {
		FUZZ_ASSERT(out == NULL && err.msg != NULL && fuzz_one_line(err.msg));
	}
	os_error_clear(&err);

	/* --update-kubeconfig: the input as the user's file, and as the
	 * gateway's; a merge either succeeds whole or fails in one line. */
	for (int as_base = 0; as_base < 2; as_base++) {
		char *merged = NULL;
		size_t merged_len = 0;
		int rc = as_base ? kubeconfig_merge(buf, size, gateway_config, strlen(gateway_config),
						    &merged, &merged_len, &err)
				 : kubeconfig_merge(gateway_config, strlen(gateway_config), buf, size,
						    &merged, &merged_len, &err);
		if (rc == 0)
			FUZZ_ASSERT(merged != NULL && merged_len == strlen(merged) && err.msg == NULL);
		else
			FUZZ_ASSERT(merged == NULL && err.msg != NULL && fuzz_one_line(err.msg));
		os_error_clear(&err);
		free(merged);
	}
	free(got);
	free(out);
	free(first);
	free(buf);
	return 0;
}
