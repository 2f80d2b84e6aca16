/* base/parse.h - strict parsers of the values users and environments give.
 *
 * Every number or duration openshell takes from a command line or an
 * environment variable goes through one of these, so "10x", "-1" or
 * "99999999999" is refused, never read as a prefix or wrapped around.
 * Each returns 0 with *out set, or -1 and leaves *out alone.
 */
#ifndef OPENSHELL_BASE_PARSE_H
#define OPENSHELL_BASE_PARSE_H

#include "base/error.h"

/* Durations as Docker and Go write them: "90s", "5m", "1m30s", "1h",
 * "500ms"; a bare number means seconds. Must be > 0 and fit in an int of
 * milliseconds. Returns 0, or -1 for a malformed or out-of-range value. */
int parse_duration_ms(const char *s, int *ms);

/* A TCP port, 1..65535, decimal only. */
int parse_port(const char *s, int *port);

/* A non-negative decimal integer no larger than max. */
int parse_uint(const char *s, int max, int *out);

/* One of the N words in NAMES, exactly: its index in *out. */
int parse_keyword(const char *s, const char *const *names, int n, int *out);

/* The same for the value of command-line option OPTION ("--mig-strategy"),
 * refused otherwise as every such option's is: a usage error quoting the
 * value and naming the words, "invalid --mig-strategy 'x': give none,
 * single or mixed". */
int parse_option_word(const char *option, const char *s, const char *const *names, int n, int *out, os_error *err);

#endif
