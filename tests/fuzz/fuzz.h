/* fuzz.h - shared by the libFuzzer targets in tests/fuzz/.
 *
 * Each target feeds untrusted bytes to one family of parsers. Inputs are
 * copied into heap blocks of exactly their size, so ASan sees any read past
 * the end; a broken invariant aborts with the reason, which libFuzzer
 * reports as a crash and saves the input.
 */
#ifndef OPENSHELL_FUZZ_H
#define OPENSHELL_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

#define FUZZ_ASSERT(cond)                                                              \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond,  \
				__FILE__, __LINE__);                                   \
			abort();                                                       \
		}                                                                      \
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* xalloc_init() installs the cJSON hooks once, as main() does. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	xalloc_init();
	return 0;
}

/* A private copy of exactly n bytes (not NUL-terminated). */
static inline char *fuzz_bytes(const uint8_t *data, size_t n)
{
	char *p = xmalloc(n ? n : 1);

	if (n)
		memcpy(p, data, n);
	return p;
}

/* A NUL-terminated copy; C strings end at the first NUL, as argv does. */
static inline char *fuzz_str(const uint8_t *data, size_t n)
{
	char *p = xmalloc(n + 1);

	if (n)
		memcpy(p, data, n);
	p[n] = '\0';
	return p;
}

/* One line, no control bytes: what every error message must be. */
static inline int fuzz_one_line(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20)
			return 0;
	return 1;
}

#endif
