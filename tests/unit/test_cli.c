/* test_cli.c - the option loop every command shares, and parsing of
 * option values: durations, ports, counts. */
#include "config.h"

#include "base/exitcode.h"
#include "base/parse.h"
#include "cmd/cli.h"
#include "tap.h"

enum { OPT_NAME = 256, OPT_JSON };

static const struct option longopts[] = {
	CLI_COMMON_LONG,
	{ "name", required_argument, NULL, OPT_NAME },
	{ "json", no_argument, NULL, OPT_JSON },
	{ NULL, 0, NULL, 0 },
};

static int usage_calls;

/* Counts instead of printing: stdout carries the TAP stream. */
static void count_usage(FILE *out)
{
	usage_calls++;
}

static struct cli_parser parser(void)
{
	struct cli_parser p = { .cmd = "test", .shortopts = "f", .longopts = longopts,
				.usage = count_usage };

	optind = 0;   /* as cli_dispatch() does before each command */
	return p;
}

static void test_options(void)
{
	char *argv[] = { "test", "-v", "--name", "n1", "-q", "-f", "--json", "op", NULL };
	struct cli_parser p = parser();

	is_int(cli_next_option(&p, 8, argv), OPT_NAME, "--name comes back, -v handled");
	is_str(optarg, "n1", "with its value");
	is_int(cli_next_option(&p, 8, argv), 'f', "-q handled, -f comes back");
	is_int(cli_next_option(&p, 8, argv), OPT_JSON, "--json comes back");
	is_int(cli_next_option(&p, 8, argv), -1, "the operand ends the options");
	is_int(p.done, -1, "and parsing goes on");
	is_int(optind, 7, "optind at the operand");
	is_int(cli_no_operands(p.cmd, 8, argv), OS_EXIT_USAGE, "an operand is refused");
	optind = 8;
	is_int(cli_no_operands(p.cmd, 8, argv), -1, "no operand: go on");
}

static void test_option_ends(void)
{
	char *help[] = { "test", "--json", "-h", "--bogus", NULL };
	char *bogus[] = { "test", "--bogus", NULL };
	char *novalue[] = { "test", "--name", NULL };
	struct cli_parser p = parser();

	is_int(cli_next_option(&p, 4, help), OPT_JSON, "--json before -h");
	is_int(cli_next_option(&p, 4, help), -1, "-h ends the parse");
	is_int(p.done, OS_EXIT_OK, "-h: exit 0");
	is_int(usage_calls, 1, "-h: usage shown once");
	p = parser();
	is_int(cli_next_option(&p, 2, bogus), -1, "an unknown option ends the parse");
	is_int(p.done, OS_EXIT_USAGE, "unknown option: usage error");
	p = parser();
	is_int(cli_next_option(&p, 2, novalue), -1, "a missing value ends the parse");
	is_int(p.done, OS_EXIT_USAGE, "missing value: usage error");
	is_int(usage_calls, 1, "usage only for -h");
}

static void duration(const char *s, int want)
{
	int ms = -7;
	int rc = parse_duration_ms(s, &ms);

	if (want < 0)
		ok(rc < 0, "duration '%s' is refused", s);
	else
		ok(rc == 0 && ms == want, "duration '%s' is %d ms (got %d)", s, want, ms);
}

int main(void)
{
	int v;

	test_options();
	test_option_ends();

	duration("90", 90000);
	duration("90s", 90000);
	duration("5m", 300000);
	duration("1m30s", 90000);
	duration("1h", 3600000);
	duration("500ms", 500);
	duration("1.5s", 1500);
	duration("2m0.5s", 120500);
	duration("0", -1);
	duration("0s", -1);
	duration("", -1);
	duration("-5s", -1);
	duration("5", 5000);
	duration("5x", -1);
	duration("s", -1);
	duration("10 s", -1);
	duration("99999999h", -1);
	duration("1.s", -1);

	ok(parse_port("6443", &v) == 0 && v == 6443, "port 6443");
	ok(parse_port("65535", &v) == 0 && v == 65535, "port 65535");
	ok(parse_port("0", &v) < 0, "port 0 is refused");
	ok(parse_port("65536", &v) < 0, "port 65536 is refused");
	ok(parse_port("64x", &v) < 0, "port with junk is refused");
	ok(parse_port("+80", &v) < 0, "signed port is refused");
	ok(parse_port("", &v) < 0, "empty port is refused");
	ok(parse_uint("12", 100, &v) == 0 && v == 12, "uint 12");
	ok(parse_uint("101", 100, &v) < 0, "uint over max is refused");
	ok(parse_uint("99999999999", 2147483647, &v) < 0, "uint overflow is refused");
	return tap_done();
}
