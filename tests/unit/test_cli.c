/* test_cli.c - parsing of option values: durations, ports, counts. */
#include "config.h"

#include "../../src/cli.h"
#include "tap.h"

static void duration(const char *s, int want)
{
	int ms = -7;
	int rc = cli_parse_duration_ms(s, &ms);

	if (want < 0)
		ok(rc < 0, "duration '%s' is refused", s);
	else
		ok(rc == 0 && ms == want, "duration '%s' is %d ms (got %d)", s, want, ms);
}

int main(void)
{
	int v;

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

	ok(cli_parse_port("6443", &v) == 0 && v == 6443, "port 6443");
	ok(cli_parse_port("65535", &v) == 0 && v == 65535, "port 65535");
	ok(cli_parse_port("0", &v) < 0, "port 0 is refused");
	ok(cli_parse_port("65536", &v) < 0, "port 65536 is refused");
	ok(cli_parse_port("64x", &v) < 0, "port with junk is refused");
	ok(cli_parse_port("+80", &v) < 0, "signed port is refused");
	ok(cli_parse_port("", &v) < 0, "empty port is refused");
	ok(cli_parse_uint("12", 100, &v) == 0 && v == 12, "uint 12");
	ok(cli_parse_uint("101", 100, &v) < 0, "uint over max is refused");
	ok(cli_parse_uint("99999999999", 2147483647, &v) < 0, "uint overflow is refused");
	return tap_done();
}
