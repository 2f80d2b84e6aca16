/* test_kubeconfig.c - the rewrite of k3s.yaml for the host. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/xalloc.h"
#include "kube/kubeconfig.h"
#include "tap.h"

/* ---- fixtures -------------------------------------------------------- */

/* Base64 of n pseudo-random bytes: the shape of k3s's PEM-in-base64 data,
 * with '+' and '/' in it, on one line as k3s writes it. */
static char *fake_b64(size_t n, unsigned seed)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char *raw = xmalloc(n);
	char *out = xmalloc(4 * ((n + 2) / 3) + 1), *o = out;

	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		raw[i] = (unsigned char)(seed >> 16);
	}
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)raw[i] << 16 | (i + 1 < n ? (unsigned)raw[i + 1] << 8 : 0) |
			     (i + 2 < n ? raw[i + 2] : 0);
		*o++ = tbl[v >> 18 & 63];
		*o++ = tbl[v >> 12 & 63];
		*o++ = i + 1 < n ? tbl[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tbl[v & 63] : '=';
	}
	*o = '\0';
	free(raw);
	return out;
}

static char *ca, *cert, *key, *k3s_yaml;

static void fixtures(void)
{
	ca = fake_b64(1125, 1);      /* 1500 characters */
	cert = fake_b64(860, 2);
	key = fake_b64(170, 3);
	/* What k3s writes to /etc/rancher/k3s/k3s.yaml. */
	k3s_yaml = xasprintf("apiVersion: v1\n"
			     "clusters:\n"
			     "- cluster:\n"
			     "    certificate-authority-data: %s\n"
			     "    server: https://127.0.0.1:6443\n"
			     "  name: default\n"
			     "contexts:\n"
			     "- context:\n"
			     "    cluster: default\n"
			     "    user: default\n"
			     "  name: default\n"
			     "current-context: default\n"
			     "kind: Config\n"
			     "preferences: {}\n"
			     "users:\n"
			     "- name: default\n"
			     "  user:\n"
			     "    client-certificate-data: %s\n"
			     "    client-key-data: %s\n",
			     ca, cert, key);
}

/* ---- reading the output back with libyaml ----------------------------- */

struct ydoc {
	yaml_document_t doc;
	int loaded;
};

static void yfree(struct ydoc *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	y->loaded = 0;
}

static int yload(struct ydoc *y, const char *text, size_t len)
{
	yaml_parser_t p;

	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	/* A failed load has deleted the document already. */
	y->loaded = yaml_parser_load(&p, &y->doc);
	if (y->loaded && !yaml_document_get_root_node(&y->doc))
		yfree(y);
	yaml_parser_delete(&p);
	return y->loaded;
}

/* The node at a dotted path: "clusters.0.cluster.server". */
static yaml_node_t *ynode(struct ydoc *y, const char *path)
{
	yaml_node_t *n = y->loaded ? yaml_document_get_root_node(&y->doc) : NULL;
	char *copy = xstrdup(path), *save = NULL;

	for (char *k = strtok_r(copy, ".", &save); n && k; k = strtok_r(NULL, ".", &save)) {
		if (n->type == YAML_SEQUENCE_NODE) {
			long i = strtol(k, NULL, 10);
			long len = n->data.sequence.items.top - n->data.sequence.items.start;
			n = i >= 0 && i < len ? yaml_document_get_node(&y->doc, n->data.sequence.items.start[i]) : NULL;
		} else if (n->type == YAML_MAPPING_NODE) {
			yaml_node_t *found = NULL;
			for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
				yaml_node_t *kn = yaml_document_get_node(&y->doc, pr->key);
				if (kn && kn->type == YAML_SCALAR_NODE && strcmp((char *)kn->data.scalar.value, k) == 0)
					found = yaml_document_get_node(&y->doc, pr->value);
			}
			n = found;
		} else {
			n = NULL;
		}
	}
	free(copy);
	return n;
}

static const char *yscalar(struct ydoc *y, const char *path)
{
	yaml_node_t *n = ynode(y, path);

	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* ---- tests -------------------------------------------------------------- */

/* The line of the output holding `value` is exactly "INDENTkey: value". */
static int on_one_line(const char *out, const char *field, const char *value)
{
	const char *at = strstr(out, value), *bol;
	size_t klen = strlen(field);

	if (!at || at[strlen(value)] != '\n')
		return 0;
	for (bol = at; bol > out && bol[-1] != '\n'; bol--)
		;
	while (*bol == ' ')
		bol++;
	return at - bol == (long)klen + 2 && strncmp(bol, field, klen) == 0 && bol[klen] == ':';
}

static void test_k3s(void)
{
	char *out = NULL, *server = NULL;
	size_t out_len = 0;
	os_error err = { 0 };
	struct ydoc y;
	int rc;

	rc = kubeconfig_rewrite(k3s_yaml, strlen(k3s_yaml), "https://127.0.0.1:16443", "dev", &out,
				&out_len, &err);
	is_int(rc, 0, "k3s.yaml is rewritten");
	ok(err.msg == NULL, "no error message on success");
	if (rc != 0 || !out) {
		printf("# error: %s\n", err.msg ? err.msg : "(none)");
		os_error_clear(&err);
		return;
	}
	is_int(out_len, strlen(out), "out_len is the length of the NUL-terminated text");

	rc = kubeconfig_server(out, out_len, &server, &err);
	is_int(rc, 0, "the output parses back");
	is_str(server, "https://127.0.0.1:16443", "kubeconfig_server reads the new server");
	free(server);

	ok(strstr(out, ca) != NULL, "certificate-authority-data is in the output byte for byte");
	ok(strstr(out, cert) != NULL, "client-certificate-data is in the output byte for byte");
	ok(strstr(out, key) != NULL, "client-key-data is in the output byte for byte");
	ok(on_one_line(out, "certificate-authority-data", ca),
	   "the 1500-character CA data stays on one line, unfolded and unquoted");
	ok(on_one_line(out, "client-certificate-data", cert), "client-certificate-data stays on one line");
	ok(on_one_line(out, "client-key-data", key), "client-key-data stays on one line");
	is_int(count(out, "default"), 0, "no 'default' is left");
	ok(on_one_line(out, "server", "https://127.0.0.1:16443"), "server is a plain one-line value");
	ok(strstr(out, "127.0.0.1:6443") == NULL, "the old server is gone");

	ok(yload(&y, out, out_len), "the output loads with libyaml");
	is_str(yscalar(&y, "apiVersion"), "v1", "apiVersion kept");
	is_str(yscalar(&y, "kind"), "Config", "kind kept");
	ok(ynode(&y, "preferences") && ynode(&y, "preferences")->type == YAML_MAPPING_NODE &&
	   ynode(&y, "preferences")->data.mapping.pairs.top == ynode(&y, "preferences")->data.mapping.pairs.start,
	   "preferences stays an empty mapping");
	is_str(yscalar(&y, "clusters.0.name"), "dev", "cluster renamed");
	is_str(yscalar(&y, "clusters.0.cluster.server"), "https://127.0.0.1:16443", "cluster server set");
	is_str(yscalar(&y, "clusters.0.cluster.certificate-authority-data"), ca, "CA data identical after parsing");
	is_str(yscalar(&y, "contexts.0.name"), "dev", "context renamed");
	is_str(yscalar(&y, "contexts.0.context.cluster"), "dev", "context's cluster renamed");
	is_str(yscalar(&y, "contexts.0.context.user"), "dev", "context's user renamed");
	is_str(yscalar(&y, "current-context"), "dev", "current-context renamed");
	is_str(yscalar(&y, "users.0.name"), "dev", "user renamed");
	is_str(yscalar(&y, "users.0.user.client-certificate-data"), cert, "client cert identical after parsing");
	is_str(yscalar(&y, "users.0.user.client-key-data"), key, "client key identical after parsing");
	ok(ynode(&y, "clusters.1") == NULL && ynode(&y, "contexts.1") == NULL && ynode(&y, "users.1") == NULL,
	   "no entries added");
	yfree(&y);

	/* Rewriting the output again changes only the server. */
	{
		char *out2 = NULL;
		size_t len2 = 0;

		rc = kubeconfig_rewrite(out, out_len, "https://[::1]:6443", "other", &out2, &len2, &err);
		is_int(rc, 0, "the output can be rewritten again");
		if (rc == 0) {
			ok(yload(&y, out2, len2), "second output loads");
			is_str(yscalar(&y, "clusters.0.cluster.server"), "https://[::1]:6443", "IPv6 server set");
			is_str(yscalar(&y, "clusters.0.name"), "dev", "names not 'default' are left alone");
			is_str(yscalar(&y, "current-context"), "dev", "current-context not 'default' is left alone");
			yfree(&y);
		}
		free(out2);
	}
	free(out);
	os_error_clear(&err);
}

static void test_other_names(void)
{
	const char *in =
		"apiVersion: v1\n"
		"clusters:\n"
		"- cluster:\n"
		"    server: https://10.0.0.1:6443\n"
		"  name: prod\n"
		"- cluster:\n"
		"    server: https://127.0.0.1:6443\n"
		"  name: default\n"
		"- cluster:\n"
		"    server: https://10.9.9.9:443\n"
		"  name: staging\n"
		"contexts:\n"
		"- context:\n"
		"    cluster: prod\n"
		"    user: admin\n"
		"  name: prod-admin\n"
		"- context:\n"
		"    cluster: default\n"
		"    user: default\n"
		"  name: default\n"
		"current-context: prod-admin\n"
		"kind: Config\n"
		"users:\n"
		"- name: admin\n"
		"  user:\n"
		"    token: abc\n"
		"- name: default\n"
		"  user:\n"
		"    token: def\n";
	char *out = NULL;
	size_t len = 0;
	os_error err = { 0 };
	struct ydoc y;

	is_int(kubeconfig_rewrite(in, strlen(in), "https://127.0.0.1:7443", "gw", &out, &len, &err), 0,
	       "kubeconfig with three clusters is rewritten");
	if (!out) {
		os_error_clear(&err);
		return;
	}
	ok(yload(&y, out, len), "it loads");
	is_str(yscalar(&y, "clusters.0.cluster.server"), "https://127.0.0.1:7443", "cluster 0 gets the server");
	is_str(yscalar(&y, "clusters.1.cluster.server"), "https://127.0.0.1:7443", "cluster 1 gets the server");
	is_str(yscalar(&y, "clusters.2.cluster.server"), "https://127.0.0.1:7443", "cluster 2 gets the server");
	is_str(yscalar(&y, "clusters.0.name"), "prod", "cluster 'prod' keeps its name");
	is_str(yscalar(&y, "clusters.1.name"), "gw", "cluster 'default' renamed");
	is_str(yscalar(&y, "clusters.2.name"), "staging", "cluster 'staging' keeps its name");
	is_str(yscalar(&y, "contexts.0.name"), "prod-admin", "context 'prod-admin' keeps its name");
	is_str(yscalar(&y, "contexts.0.context.cluster"), "prod", "its cluster untouched");
	is_str(yscalar(&y, "contexts.0.context.user"), "admin", "its user untouched");
	is_str(yscalar(&y, "contexts.1.name"), "gw", "context 'default' renamed");
	is_str(yscalar(&y, "contexts.1.context.cluster"), "gw", "its cluster renamed");
	is_str(yscalar(&y, "contexts.1.context.user"), "gw", "its user renamed");
	is_str(yscalar(&y, "current-context"), "prod-admin", "current-context 'prod-admin' untouched");
	is_str(yscalar(&y, "users.0.name"), "admin", "user 'admin' keeps its name");
	is_str(yscalar(&y, "users.0.user.token"), "abc", "its token untouched");
	is_str(yscalar(&y, "users.1.name"), "gw", "user 'default' renamed");
	is_str(yscalar(&y, "users.1.user.token"), "def", "its token untouched");
	yfree(&y);
	free(out);
	os_error_clear(&err);
}

/* A valid gateway name may look like a number, a boolean or null to a
 * YAML 1.1 reader (kubectl's go-yaml); written plain it would no longer
 * be a string there, so it must come out quoted. */
static void test_name_stays_string(const char *name)
{
	char *out = NULL, *plain = xasprintf("current-context: %s\n", name);
	size_t len = 0;
	os_error err = { 0 };
	struct ydoc y;
	yaml_node_t *n;

	is_int(kubeconfig_rewrite(k3s_yaml, strlen(k3s_yaml), "https://127.0.0.1:6443", name, &out, &len, &err),
	       0, "rewrite with a name that YAML 1.1 would resolve");
	if (out && yload(&y, out, len)) {
		n = ynode(&y, "current-context");
		is_str(n && n->type == YAML_SCALAR_NODE ? (char *)n->data.scalar.value : NULL, name,
		       "current-context has the name's text");
		ok(n && n->type == YAML_SCALAR_NODE && n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE,
		   "name '%s' is written quoted, so YAML 1.1 readers see a string", name);
		n = ynode(&y, "clusters.0.name");
		ok(n && n->type == YAML_SCALAR_NODE && n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE,
		   "cluster name '%s' is written quoted", name);
		yfree(&y);
	} else {
		ok(0, "output of name '%s' loads", name);
	}
	ok(!out || !strstr(out, plain), "no plain 'current-context: %s'", name);
	free(plain);
	free(out);
	os_error_clear(&err);
}

static void refused(const char *in, size_t len, const char *want_in, const char *what)
{
	char *out = (char *)"untouched", *server = (char *)"untouched";
	size_t out_len = 12345;
	os_error err = { 0 };
	int rc = kubeconfig_rewrite(in, len, "https://127.0.0.1:6443", "gw", &out, &out_len, &err);

	is_int(rc, -1, what);
	ok(err.msg && strstr(err.msg, want_in), "%s: message has '%s'", what, want_in);
	if (!err.msg || !strstr(err.msg, want_in))
		printf("#   message: %s\n", err.msg ? err.msg : "(none)");
	ok(err.msg && !strchr(err.msg, '\n'), "%s: one-line message", what);
	ok(strcmp(out, "untouched") == 0, "%s: *out not set", what);
	os_error_clear(&err);

	rc = kubeconfig_server(in, len, &server, &err);
	ok(rc == -1 && server == NULL && err.msg, "%s: kubeconfig_server refuses it too", what);
	os_error_clear(&err);
}

static void test_refused(void)
{
	static const char tab[] = "apiVersion: v1\nkind: Config\n\tclusters: []\n";
	static const char unclosed[] = "apiVersion: v1\nclusters:\n- cluster: {server: x\nkind: Config\nusers: []\n";
	static const char seq[] = "- apiVersion: v1\n- kind: Config\n";
	static const char noclusters[] = "apiVersion: v1\nkind: Config\ncontexts: []\nusers: []\n";
	static const char noserver[] = "apiVersion: v1\nclusters:\n- cluster:\n    insecure-skip-tls-verify: true\n  name: default\n";
	static const char notseq[] = "apiVersion: v1\nclusters:\n  cluster:\n    server: https://127.0.0.1:6443\n";
	static const char scalar[] = "just text\n";

	refused(tab, strlen(tab), "line 3", "a tab at line 3 is invalid YAML");
	refused(tab, strlen(tab), "not valid YAML", "invalid YAML says so");
	refused(unclosed, strlen(unclosed), "line ", "an unclosed flow mapping is invalid YAML");
	refused(seq, strlen(seq), "not a YAML mapping", "a sequence at the root");
	refused(scalar, strlen(scalar), "not a YAML mapping", "a scalar at the root");
	refused(noclusters, strlen(noclusters), "clusters", "a kubeconfig without clusters");
	refused(noserver, strlen(noserver), "server", "a cluster without a server");
	refused(notseq, strlen(notseq), "server", "clusters as a mapping, not a sequence");
	refused("", 0, "kubeconfig", "empty input");
	refused("\n\n", 2, "kubeconfig", "blank input");
	/* len bounds the input: a valid text cut short is refused. */
	refused(k3s_yaml, 40, "clusters", "k3s.yaml cut after 40 bytes");
}

int main(void)
{
	fixtures();
	is_int(strlen(ca), 1500, "the CA fixture is 1500 base64 characters");
	test_k3s();
	test_other_names();
	test_name_stays_string("123");
	test_name_stays_string("no");
	test_name_stays_string("null");
	test_name_stays_string("0x1f");
	test_refused();
	free(ca);
	free(cert);
	free(key);
	free(k3s_yaml);
	return tap_done();
}
