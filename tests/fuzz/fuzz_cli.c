/* fuzz_cli.c - the checks between what the user types and any docker call.
 *
 * The input is up to five newline-separated fields, used as
 *     NAME \n BIND \n IMAGE \n PORT \n DURATION
 * by gateway_request_check() and the argv deploy_run_argv() builds from
 * their plan;
 * every field also goes through every single-value parser, so each parser
 * sees all the shapes the mutator makes. Invariants are the promises the
 * headers make: an accepted name is a DNS label, an accepted port is
 * 1..65535, printable() output has no control bytes, a rejection is one
 * line with the rule in it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>

#include "base/error.h"
#include "base/exitcode.h"
#include "base/names.h"
#include "base/parse.h"
#include "base/strv.h"
#include "cmd/cli.h"
#include "fuzz.h"
#include "gateway/deploy/deploy.h"

#define FIELDS 5

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static void check_printable(const char *s, size_t max)
{
	char *p = printable(s, max);
	size_t len = strlen(s), shown = len < max ? len : max;

	FUZZ_ASSERT(strlen(p) <= 4 * shown + 3);
	for (const char *q = p; *q; q++)
		FUZZ_ASSERT((unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f);
	free(p);
}

static void check_name(const char *s)
{
	os_error err = { 0 };
	size_t n = strlen(s);

	if (gateway_name_check(s, &err) == 0) {
		FUZZ_ASSERT(n >= 1 && n <= GATEWAY_NAME_MAX && err.msg == NULL);
		FUZZ_ASSERT(strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n);
		FUZZ_ASSERT(s[0] != '-' && s[n - 1] != '-');
		char *host = gateway_hostname(s), *res = gateway_resource_name(s);
		FUZZ_ASSERT(strlen(host) <= 63);   /* a hostname label */
		free(host);
		free(res);
	} else {
		FUZZ_ASSERT(err.code == OS_EXIT_USAGE && fuzz_one_line(err.msg));
		FUZZ_ASSERT(strstr(err.msg, "lowercase letters, digits and '-'"));
	}
	os_error_clear(&err);
}

static void check_image(const char *s)
{
	os_error err = { 0 };
	size_t n = strlen(s);

	if (image_ref_check(s, &err) == 0) {
		FUZZ_ASSERT(n >= 1 && n <= 255 && s[0] != '-' && err.msg == NULL);
		FUZZ_ASSERT(strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789._/:@-") == n);
	} else {
		FUZZ_ASSERT(err.code == OS_EXIT_USAGE && fuzz_one_line(err.msg));
	}
	os_error_clear(&err);
}

static void check_numbers(const char *s)
{
	int v = -1;

	if (parse_port(s, &v) == 0) {
		FUZZ_ASSERT(all_digits(s) && v >= 1 && v <= 65535);
		FUZZ_ASSERT(strtol(s, NULL, 10) == v);
	}
	if (parse_uint(s, INT_MAX, &v) == 0)
		FUZZ_ASSERT(all_digits(s) && v >= 0 && strtoll(s, NULL, 10) == v);
	if (parse_duration_ms(s, &v) == 0) {
		FUZZ_ASSERT(v > 0);
		if (all_digits(s))
			FUZZ_ASSERT(strtoll(s, NULL, 10) * 1000 == v);
	}
}

static void check_field(const char *s)
{
	unsigned char a[sizeof(struct in6_addr)];

	check_printable(s, 64);
	check_printable(s, 0);
	check_printable(s, 3);
	check_name(s);
	check_image(s);
	check_numbers(s);
	if (bind_is_loopback(s))
		FUZZ_ASSERT(inet_pton(AF_INET, s, a) == 1 || strcmp(s, "::1") == 0);
}

/* An accepted request becomes argv elements, never a shell string: the
 * image is one element of its own and no element can be taken apart. */
static void check_argv(const struct gateway_request *rq)
{
	struct deploy_plan p;
	struct strv argv = { 0 };
	char *addr;
	const char *const *v;
	int images = 0;

	deploy_plan_init(&p, rq);
	addr = deploy_api_address(&p);
	deploy_run_argv(&p, &argv);
	for (v = strv_argv(&argv); *v; v++) {
		FUZZ_ASSERT(fuzz_one_line(*v));
		images += strcmp(*v, rq->image) == 0;
	}
	FUZZ_ASSERT(images >= 1);
	FUZZ_ASSERT(fuzz_one_line(addr));
	free(addr);
	strv_free(&argv);
	deploy_plan_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *field[FIELDS] = { 0 };
	struct gateway_request o;
	os_error err = { 0 };
	const uint8_t *p = data, *end = data + size;
	size_t i, f;
	int port;

	for (f = 0; f < FIELDS; f++) {
		const uint8_t *nl = f < FIELDS - 1 && p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		field[f] = fuzz_str(p, n);
		p += nl ? n + 1 : n;
	}
	for (i = 0; i < FIELDS; i++)
		check_field(field[i]);

	gateway_request_init(&o);
	o.name = field[0];
	o.bind = field[1];
	o.image = field[2];
	if (parse_port(field[3], &port) == 0)
		o.port = port;
	o.gpu = size & 1;
	if (gateway_request_check(&o, &err) == 0) {
		unsigned char a[sizeof(struct in6_addr)];
		FUZZ_ASSERT(inet_pton(AF_INET, o.bind, a) == 1 || inet_pton(AF_INET6, o.bind, a) == 1);
		check_argv(&o);
	} else {
		FUZZ_ASSERT(err.code == OS_EXIT_USAGE && fuzz_one_line(err.msg));
	}
	os_error_clear(&err);
	for (i = 0; i < FIELDS; i++)
		free(field[i]);
	return 0;
}
