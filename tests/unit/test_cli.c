/* test_cli.c - the option loop every command shares, and parsing of
 * option values: durations, ports, counts. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "base/exitcode.h"
#include "base/parse.h"
#include "cmd/cli.h"
#include "tap.h"

enum { OPT_NAME = 256, OPT_JSON };

static const struct cli_opt opts[] = {
	{ .name = "name", .key = OPT_NAME, .arg = "NAME", .help = "the name" },
	{ .name = "follow", .key = 'f', .help = "keep going" },
	{ .name = "json", .key = OPT_JSON,
	  .help = "a help text long enough to need wrapping: it goes on and on past the eightieth column of "
		  "the terminal, and on again past a second line, so that the wrap is seen twice over" },
	{ .name = "a-very-long-option-name", .key = OPT_JSON + 1, .arg = "VALUE", .help = "after two spaces" },
	{ NULL },
};

static const struct cli_spec spec = {
	.name = "test", .operands = "[OP]", .about = "About.\n", .opts = opts, .after = "After.\n",
};

static struct cli_parser parser(void)
{
	struct cli_parser p = { .spec = &spec };

	optind = 0;   /* as cli_dispatch() does before each command */
	return p;
}

/* What f() writes on stdout, which carries the TAP stream otherwise. */
static char *capture_stdout(int (*f)(void *), void *arg, int *rc)
{
	static char buf[8192];
	FILE *tmp = tmpfile();
	int saved = dup(STDOUT_FILENO);
	size_t n;

	fflush(stdout);
	dup2(fileno(tmp), STDOUT_FILENO);
	*rc = f(arg);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return buf;
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
	is_int(cli_no_operands("test", 8, argv), OS_EXIT_USAGE, "an operand is refused");
	optind = 8;
	is_int(cli_no_operands("test", 8, argv), -1, "no operand: go on");
}

static int parse_help(void *arg)
{
	struct cli_parser *p = arg;
	char *help[] = { "test", "--json", "-h", "--bogus", NULL };
	int first = cli_next_option(p, 4, help);

	return first == OPT_JSON && cli_next_option(p, 4, help) == -1 ? p->done : -99;
}

static void test_option_ends(void)
{
	char *bogus[] = { "test", "--bogus", NULL };
	char *novalue[] = { "test", "--name", NULL };
	struct cli_parser p = parser();
	const char *out;
	int rc;

	out = capture_stdout(parse_help, &p, &rc);
	is_int(rc, OS_EXIT_OK, "--json comes back, then -h ends the parse with exit 0");
	ok(strncmp(out, "Usage: openshell test [OPTIONS] [OP]\n", 37) == 0, "-h: the usage on stdout");
	p = parser();
	is_int(cli_next_option(&p, 2, bogus), -1, "an unknown option ends the parse");
	is_int(p.done, OS_EXIT_USAGE, "unknown option: usage error");
	p = parser();
	is_int(cli_next_option(&p, 2, novalue), -1, "a missing value ends the parse");
	is_int(p.done, OS_EXIT_USAGE, "missing value: usage error");
}

static int usage_of_spec(void *arg)
{
	cli_usage(stdout, arg);
	return 0;
}

/* The help is made from the table: every option, wrapped at 80 columns,
 * continuation lines under the help column. */
static void test_usage(void)
{
	int rc, longest = 0;
	const char *out = capture_stdout(usage_of_spec, (void *)&spec, &rc);

	ok(strstr(out, "      --name NAME       the name\n") != NULL, "an option with a value, help at column 24");
	ok(strstr(out, "  -f, --follow          keep going\n") != NULL, "a letter option shows both forms");
	ok(strstr(out, "      --a-very-long-option-name VALUE  after two spaces\n") != NULL,
	   "a label past the column: two spaces, then the help");
	ok(strstr(out, "wrapping: it goes on and\n                        on past the") != NULL,
	   "a long help wraps before column 80, indented to column 24");
	ok(strstr(out, "  -h, --help            show this help\n") != NULL, "the common options follow");
	ok(strstr(out, "\nAbout.\n") && strstr(out, "\nAfter.\n"), "the paragraphs around the options");
	for (const char *line = out; *line;) {
		size_t len = strcspn(line, "\n");

		if ((int)len > longest)
			longest = (int)len;
		line += len + (line[len] == '\n');
	}
	ok(longest <= 80, "no line passes 80 columns (longest %d)", longest);
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

/* An option's word, or the one message every such option gives. */
static void test_option_word(void)
{
	static const char *const three[] = { "none", "single", "mixed" };
	os_error err = { 0 };
	int v = -1;

	ok(parse_option_word("--x", "mixed", three, 3, &v, &err) == 0 && v == 2 && !err.msg, "a word: its index");
	ok(parse_option_word("--x", "Mixed\n", three, 3, &v, &err) < 0 && v == 2 && err.code == OS_EXIT_USAGE,
	   "another: a usage error, *out left alone");
	is_str(err.msg, "invalid --x 'Mixed\\x0a': give none, single or mixed", "quoting it, printable, and naming the words");
	os_error_clear(&err);
	ok(parse_option_word("--y", "", three + 1, 2, &v, &err) < 0, "an empty value is refused");
	is_str(err.msg, "invalid --y '': give single or mixed", "two words: 'or' alone");
	os_error_clear(&err);
}

int main(void)
{
	int v;

	test_options();
	test_option_ends();
	test_usage();

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
	test_option_word();
	return tap_done();
}
