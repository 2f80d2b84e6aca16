/* base/parse.h - strict parsers of the values users and environments give.
 *
 * Every number or duration openshell takes from a command line or an
 * environment variable goes through one of these, so "10x", "-1" or
 * "99999999999" is refused, never read as a prefix or wrapped around.
 * Each returns 0 with *out set, or -1 and leaves *out alone.
 */
#ifndef OPENSHELL_BASE_PARSE_H
#define OPENSHELL_BASE_PARSE_H

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

#endif
