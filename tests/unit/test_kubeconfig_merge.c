/* test_kubeconfig_merge.c - merging a gateway into a user's kubeconfig. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "kube/kubeconfig.h"
#include "tap.h"

static const char *const user =
	"apiVersion: v1\n"
	"kind: Config\n"
	"clusters:\n"
	"- cluster:\n"
	"    server: https://prod.example:6443\n"
	"  name: prod\n"
	"- cluster:\n"
	"    server: https://old.example:6443\n"
	"  name: openshell-t1\n"
	"contexts:\n"
	"- context:\n"
	"    cluster: prod\n"
	"    user: prod-admin\n"
	"  name: prod\n"
	"current-context: prod\n"
	"users:\n"
	"- name: prod-admin\n"
	"  user:\n"
	"    token: s3cret\n";

static const char *const gateway =
	"apiVersion: v1\n"
	"kind: Config\n"
	"clusters:\n"
	"- cluster:\n"
	"    certificate-authority-data: Q0FDQUNB\n"
	"    server: https://127.0.0.1:16443\n"
	"  name: openshell-t1\n"
	"contexts:\n"
	"- context:\n"
	"    cluster: openshell-t1\n"
	"    user: openshell-t1\n"
	"  name: openshell-t1\n"
	"current-context: openshell-t1\n"
	"users:\n"
	"- name: openshell-t1\n"
	"  user:\n"
	"    client-key-data: S0VZS0VZ\n";

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

int main(void)
{
	char *out = NULL, *server = NULL;
	size_t len;
	os_error err = { 0 };

	xalloc_init();
	ok(kubeconfig_merge(user, strlen(user), gateway, strlen(gateway), &out, &len, &err) == 0,
	   "a gateway merges into a user's kubeconfig");
	ok(out && strstr(out, "server: https://prod.example:6443"), "other clusters are kept");
	ok(out && strstr(out, "token: s3cret"), "other users' credentials are kept");
	is_int(count(out, "name: openshell-t1"), 3, "one cluster, context and user of the gateway's name");
	ok(out && !strstr(out, "old.example"), "an entry of the same name is replaced, not duplicated");
	ok(out && strstr(out, "current-context: openshell-t1"), "the gateway becomes the current context");
	ok(out && strstr(out, "client-key-data: S0VZS0VZ"), "the gateway's credentials arrive intact");
	is_int(kubeconfig_server(out, len, &server, &err), 0, "the merged file parses back");
	is_str(server, "https://prod.example:6443", "and keeps the first cluster first");
	free(server);
	free(out);

	out = NULL;
	ok(kubeconfig_merge("", 0, gateway, strlen(gateway), &out, &len, &err) == 0,
	   "an empty user kubeconfig takes the gateway's whole");
	ok(out && strstr(out, "current-context: openshell-t1") && strstr(out, "server: https://127.0.0.1:16443"),
	   "with its server and context");
	free(out);

	static const char *const bare = "apiVersion: v1\nkind: Config\n";
	out = NULL;
	ok(kubeconfig_merge(bare, strlen(bare), gateway, strlen(gateway), &out, &len, &err) == 0,
	   "a kubeconfig without lists gets them added");
	is_int(count(out, "name: openshell-t1"), 3, "holding the gateway's entries");
	ok(out && strstr(out, "current-context: openshell-t1"), "and a current-context");
	free(out);

	/* kubectl leaves "clusters: null" after deleting the last cluster. */
	static const char *const nulls = "apiVersion: v1\nkind: Config\nclusters: null\ncontexts: ~\nusers:\ncurrent-context: \"\"\n";
	out = NULL;
	ok(kubeconfig_merge(nulls, strlen(nulls), gateway, strlen(gateway), &out, &len, &err) == 0,
	   "null lists are merged into, not refused: %s", err.msg ? err.msg : "");
	is_int(count(out, "name: openshell-t1"), 3, "the gateway's entries replace the nulls");
	ok(out && !strstr(out, "null"), "no null is left behind");
	free(out);
	os_error_clear(&err);

	/* An alias that contains itself loads as a cycle; copying must stop. */
	static const char *const cyclic =
		"apiVersion: v1\nclusters:\n- &a\n  name: loop\n  cluster: [*a]\ncurrent-context: loop\n";
	out = NULL;
	ok(kubeconfig_merge(user, strlen(user), cyclic, strlen(cyclic), &out, &len, &err) < 0,
	   "a self-referencing kubeconfig is refused, not followed forever");
	free(out);
	os_error_clear(&err);

	static const char *const odd = "clusters: 5\n";
	out = NULL;
	ok(kubeconfig_merge(odd, strlen(odd), gateway, strlen(gateway), &out, &len, &err) < 0,
	   "clusters that are not a list are refused");
	ok(err.msg && strstr(err.msg, "lists of named entries"), "with the reason: %s", err.msg);
	os_error_clear(&err);

	static const char *const broken = "clusters: [\n";
	ok(kubeconfig_merge(broken, strlen(broken), gateway, strlen(gateway), &out, &len, &err) < 0,
	   "a broken user kubeconfig is refused, not overwritten");
	ok(err.msg && strstr(err.msg, "existing kubeconfig"), "naming which file: %s", err.msg);
	os_error_clear(&err);

	/* destroy: exactly the gateway's entries go; the user's stay. */
	char *merged = NULL, *kept = NULL;
	size_t mlen, klen;
	int removed;
	kubeconfig_merge(user, strlen(user), gateway, strlen(gateway), &merged, &mlen, &err);
	ok(kubeconfig_remove(merged, mlen, "openshell-t1", &kept, &klen, &removed, &err) == 0 && removed,
	   "the gateway's entries are removed");
	is_int(count(kept, "openshell-t1"), 0, "none of its cluster, context and user is left");
	ok(kept && strstr(kept, "name: prod") && strstr(kept, "token: s3cret"), "the user's entries are kept");
	ok(kept && strstr(kept, "current-context: \"\""), "a current-context that was the gateway's is cleared");
	free(kept);
	kept = NULL;
	ok(kubeconfig_remove(user, strlen(user), "openshell-t1", &kept, &klen, &removed, &err) == 0 && removed,
	   "a cluster of the name alone is removed too");
	ok(kept && strstr(kept, "current-context: prod"), "another current-context is kept");
	free(kept);
	kept = NULL;
	ok(kubeconfig_remove(user, strlen(user), "openshell-none", &kept, &klen, &removed, &err) == 0 && !removed,
	   "nothing of the name: nothing removed, and it says so");
	free(kept);
	free(merged);
	os_error_clear(&err);
	return tap_done();
}
