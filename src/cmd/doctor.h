/* cmd/doctor.h - what doctor's checks share: the report and the verdicts.
 *
 * cmd/doctor.c runs the checks of the host, Docker and the image;
 * cmd/doctor_pitfalls.c those of the known GPU pitfalls. Each check reports
 * one line (or one --json object) with a stable name, and a fix for
 * anything short of ok.
 */
#ifndef OPENSHELL_CMD_DOCTOR_H
#define OPENSHELL_CMD_DOCTOR_H

#include <cjson/cJSON.h>

enum verdict { OK, WARN, FAIL };

struct doctor {
	int failed;
	int warned;
	cJSON *checks;   /* --json: the checks so far; NULL: print lines */
	int pitfalls_done;
};

void report(struct doctor *d, enum verdict v, const char *name, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* The pitfalls users hit, from `docker info` (INFO, may be NULL) and the
 * host's own files: the systemd cgroup driver losing GPUs on a daemon
 * reload, WSL2, Jetson/Tegra, rootless Docker, a CDI spec older than the
 * driver, and a daemon with neither the nvidia runtime nor CDI. The host's
 * files are read under $OPENSHELL_HOST_ROOT (default /), which the test
 * bed points at a made-up host. */
void doctor_pitfalls(struct doctor *d, const cJSON *info);

#endif
