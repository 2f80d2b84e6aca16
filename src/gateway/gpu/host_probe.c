/* gateway/gpu/host_probe.c - the GPU host's own facts, read on the daemon's host
 * (see gateway/gpu/host_probe.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/exitcode.h"
#include "base/parse.h"
#include "base/runner.h"
#include "base/xalloc.h"
#include "docker/client.h"
#include "gateway/gpu/gpu_driver.h"
#include "gateway/gpu/host_probe.h"

/* The host's directories the probe reads, each bound read-only under /host
 * without its submounts: / for /etc and /usr, /dev for the device nodes
 * (devtmpfs), /sys for the SoC, /run for /var/run/cdi (on most hosts
 * /var/run is a link to /run, which would resolve in the container). */
#define HOST_MOUNT(dir, at) \
	"--mount=type=bind,src=" dir ",dst=/host" at ",readonly,bind-nonrecursive"

/* One line a fact; the host's paths as the host names them. Kept to what
 * busybox and coreutils both do, as the image's base may be either. */
static const char probe_script[] =
	"h=/host\n"
	"v=/proc/driver/nvidia/version\n"
	"[ -r $v ] && echo \"version $(head -n 1 $v)\"\n"
	"for g in /proc/driver/nvidia/gpus/*/information; do\n"
	"  [ -r \"$g\" ] && echo \"gpu $(sed -n 's/^Model:[[:space:]]*//p' \"$g\" | head -n 1)\"\n"
	"done\n"
	"if [ -c $h/dev/nvidia0 ]; then\n"
	"  set -- $(stat -L -c '%t %T' $h/dev/nvidia0)\n"
	"  ma=$((0x$1)) mi=$((0x$2)) l=0\n"
	"  { [ -e $h/dev/char/$ma:$mi ] || [ -L $h/dev/char/$ma:$mi ]; } && l=1\n"
	"  echo \"nvidia0 $ma $mi $l\"\n"
	"fi\n"
	"[ -e $h/dev/dxg ] && echo dxg\n"
	"[ -e $h/etc/nv_tegra_release ] && echo tegra-release\n"
	"[ -r $h/sys/devices/soc0/family ] && echo \"soc-family $(head -n 1 $h/sys/devices/soc0/family)\"\n"
	"for t in nvidia-container-runtime-hook nvidia-ctk; do\n"
	"  for d in /usr/bin /usr/local/bin /usr/sbin /usr/local/sbin /bin /sbin; do\n"
	"    if [ -f $h$d/$t ] || [ -L $h$d/$t ]; then echo \"tool $t $d/$t\"; break; fi\n"
	"  done\n"
	"done\n"
	"b=$(cat /proc/sys/net/core/bpf_jit_harden 2>/dev/null) && [ -n \"$b\" ] && echo \"bpf-jit-harden $b\"\n"
	"for d in etc/cdi run/cdi; do\n"
	"  for f in $h/$d/*nvidia*.yaml $h/$d/*nvidia*.json; do\n"
	"    [ -f \"$f\" ] || continue\n"
	"    lib=$(grep -oE 'lib(cuda|nvidia-ml)[.]so[.][0-9][0-9.]+' \"$f\" | head -n 1)\n"
	"    n=${f#$h/}; [ $d = run/cdi ] && n=var/$n\n"
	"    echo \"cdi ${lib:--} /$n\"\n"
	"  done\n"
	"done\n"
	"echo end\n";

int host_probe(const struct docker_target *on, const char *image, int timeout_ms, struct host_facts *f, os_error *err)
{
	const char *args[] = { "run", "--rm", "--pull=never", "--network=host", "--read-only", "--cap-drop=ALL",
			       "--security-opt=no-new-privileges", "--log-driver=none",
			       "--label=org.openshell.managed-by=openshell-host-probe",
			       HOST_MOUNT("/", ""), HOST_MOUNT("/dev", "/dev"), HOST_MOUNT("/sys", "/sys"),
			       HOST_MOUNT("/run", "/run"), "--entrypoint=sh", "--", image, "-c", probe_script, NULL };
	struct run_result res = { 0 };
	int rc = -1;

	if (docker_run_ok(on, args, NULL, 0, timeout_ms, &res, err) == 0)
		rc = host_facts_parse(res.out, f, err);
	run_result_free(&res);
	if (rc < 0)
		os_error_wrap(err, "cannot read the Docker host's facts in a container of %s", image);
	return rc;
}

/* "libcuda.so.550.54.15" -> "550.54.15"; "-" (none found) -> NULL. */
static char *library_version(const char *lib)
{
	const char *p = strstr(lib, ".so.");

	return p && strspn(p + 4, "0123456789.") > 2 ? xstrndup(p + 4, strspn(p + 4, "0123456789.")) : NULL;
}

static int parse_nvidia0(const char *v, struct host_facts *f)
{
	char ma[12], mi[12], l[2];
	int major, minor, link;

	if (sscanf(v, "%11s %11s %1s", ma, mi, l) != 3 || parse_uint(ma, 4095, &major) < 0 ||
	    parse_uint(mi, 1048575, &minor) < 0 || parse_uint(l, 1, &link) < 0)
		return -1;
	f->nvidia0 = 1;
	f->major = (unsigned)major;
	f->minor = (unsigned)minor;
	f->nvidia0_char_link = link;
	return 0;
}

static int parse_cdi(const char *v, struct host_facts *f)
{
	const char *path = strchr(v, ' ');
	struct host_cdi_spec *s;

	if (!path || path[1] != '/')
		return -1;
	f->specs = xrealloc(f->specs, (f->n_specs + 1) * sizeof(*f->specs));
	s = &f->specs[f->n_specs++];
	s->path = xstrdup(path + 1);
	s->driver = library_version(v);
	return 0;
}

static int parse_tool(const char *v, struct host_facts *f)
{
	size_t n = strcspn(v, " ");
	char **slot;

	if (v[n] != ' ' || v[n + 1] != '/')
		return -1;
	if (n == strlen("nvidia-ctk") && strncmp(v, "nvidia-ctk", n) == 0)
		slot = &f->ctk;
	else if (n == strlen("nvidia-container-runtime-hook") && strncmp(v, "nvidia-container-runtime-hook", n) == 0)
		slot = &f->hook;
	else
		return 0;
	free(*slot);
	*slot = xstrdup(v + n + 1);
	return 0;
}

/* One "KEY VALUE" line into f; an unknown key is skipped, so that a newer
 * image's probe may say more. */
static int parse_line(const char *key, const char *v, struct host_facts *f)
{
	if (strcmp(key, "version") == 0) {
		free(f->driver);
		f->driver = gpu_driver_module_version(v);
	} else if (strcmp(key, "gpu") == 0) {
		strv_push(&f->gpus, *v ? v : "unknown model");
	} else if (strcmp(key, "nvidia0") == 0) {
		return parse_nvidia0(v, f);
	} else if (strcmp(key, "dxg") == 0) {
		f->dxg = 1;
	} else if (strcmp(key, "tegra-release") == 0) {
		f->tegra = 1;
	} else if (strcmp(key, "soc-family") == 0) {
		f->tegra |= strstr(v, "Tegra") != NULL;
	} else if (strcmp(key, "tool") == 0) {
		return parse_tool(v, f);
	} else if (strcmp(key, "bpf-jit-harden") == 0) {
		return parse_uint(v, 2, &f->bpf_jit_harden);
	} else if (strcmp(key, "cdi") == 0) {
		return parse_cdi(v, f);
	}
	return 0;
}

int host_facts_parse(const char *text, struct host_facts *f, os_error *err)
{
	int ended = 0;

	memset(f, 0, sizeof(*f));
	f->bpf_jit_harden = -1;
	for (const char *p = text; *p && !ended;) {
		size_t n = strcspn(p, "\n");
		cleanup_free char *line = xstrndup(p, n);
		char *v = line + strcspn(line, " ");

		p += n + (p[n] == '\n');
		if (*v)
			*v++ = '\0';
		if (strcmp(line, "end") == 0)
			ended = 1;
		else if (parse_line(line, v, f) < 0) {
			os_error_set(err, OS_EXIT_FAILURE, "the host probe said '%s %s', which is not a fact it states", line, v);
			goto fail;
		}
	}
	if (ended)
		return 0;
	os_error_set(err, OS_EXIT_FAILURE, "the host probe stopped before its end");
fail:
	host_facts_free(f);
	return -1;
}

int host_facts_wsl2(const struct host_facts *f)
{
	return f && f->dxg && !f->nvidia0;
}

void host_facts_free(struct host_facts *f)
{
	free(f->driver);
	strv_free(&f->gpus);
	free(f->hook);
	free(f->ctk);
	for (size_t i = 0; i < f->n_specs; i++) {
		free(f->specs[i].path);
		free(f->specs[i].driver);
	}
	free(f->specs);
	memset(f, 0, sizeof(*f));
	f->bpf_jit_harden = -1;
}
