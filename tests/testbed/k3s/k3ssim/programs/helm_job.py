"""The Helm job's image, rancher/klipper-helm: its entry script runs helm
install, upgrade or uninstall for the HelmChart (SIMULATION: helm's work is
done here in Python; its output lines are helm's and the script's).

- The chart (klipper-helm `entry`): a URL has %{KUBERNETES_API}% replaced
  by the API's in-cluster address and skips `helm repo update`; a URL under
  https://10.43.0.1:443/static/ is the file k3s serves from server/static
  (404 when missing, SIM_CHART_INSTALL_FAIL: a 500); any other URL or a
  repository needs network, which offline fails as helm does.
- The values: the files of the chart-values Secret mounted at /config,
  in name order, over the chart's values.yaml.
- install when the release does not exist, upgrade when it does (a failed
  one is uninstalled first under FAILURE_POLICY=reinstall); the objects the
  chart renders are created or updated, those of the last revision it no
  longer renders are deleted, and the release is kept as helm's storage
  driver keeps it: a Secret sh.helm.release.v1.NAME.vN (type
  helm.sh/release.v1, labels name, owner=helm, status, version; data the
  gzip of the release's JSON), so `helm list` reads it.
- delete uninstalls: the release's objects and Secrets go.
Each attempt takes SIM_HELM_DELAY seconds; an error ends it with exit 1 and
helm's "Error: …" line, and the kubelet restarts the container.
"""

import base64
import gzip
import json
import os
import tarfile

import yaml

from .. import charts, clock, config, status

API = "10.43.0.1:443"


class HelmError(Exception):
    pass


def _fetch(chart, repo, version):
    """(Chart.yaml, values.yaml) of the chart, or HelmError."""
    if chart.startswith(("http://", "https://")):
        url = chart.replace("%{KUBERNETES_API}%", API)
        prefix = "https://%s/static/" % API
        if url.startswith(prefix):
            if config.switch_on("SIM_CHART_INSTALL_FAIL"):
                raise HelmError("INSTALLATION FAILED: failed to fetch %s : 500 Internal Server Error" % url)
            path = os.path.join(config.STATIC_DIR, url[len(prefix):])
            if not os.path.isfile(path):
                raise HelmError("INSTALLATION FAILED: failed to fetch %s : 404 Not Found" % url)
            try:
                with tarfile.open(path, "r:gz") as tf:
                    top = tf.getnames()[0].split("/")[0]
                    meta = yaml.safe_load(tf.extractfile(top + "/Chart.yaml").read()) or {}
                    try:
                        vals = yaml.safe_load(tf.extractfile(top + "/values.yaml").read()) or {}
                    except KeyError:
                        vals = {}
            except (tarfile.TarError, OSError, KeyError, IndexError, yaml.YAMLError):
                raise HelmError("INSTALLATION FAILED: file '%s' does not appear to be a gzipped archive; got "
                                "'application/octet-stream'" % url)
            return meta, vals
        host = url.split("://", 1)[1].split("/", 1)[0]
        if config.switch("SIM_NETWORK") != "online":
            raise HelmError('INSTALLATION FAILED: Get "%s": dial tcp: lookup %s on 10.43.0.10:53: server misbehaving'
                            % (url, host))
        base = os.path.basename(url).rsplit(".tgz", 1)[0]
        name, _, ver = base.rpartition("-")
        return {"name": name, "version": ver, "appVersion": ver}, {}
    if repo and (config.switch("SIM_NETWORK") != "online" or config.switch_on("SIM_CHART_INSTALL_FAIL")):
        host = repo.split("://", 1)[-1].split("/", 1)[0]
        raise HelmError('INSTALLATION FAILED: looks like "%s" is not a valid chart repository or cannot be reached: '
                        'Get "%s/index.yaml": dial tcp: lookup %s on 10.43.0.10:53: server misbehaving'
                        % (repo, repo.rstrip("/"), host))
    name = chart.split("/")[-1]
    return {"name": name, "version": version or "0.0.0", "appVersion": version or "0.0.0"}, {}


class Releases:
    """Helm's secret storage driver (pkg/storage/driver/secrets.go)."""

    def __init__(self, api, namespace, name):
        self.api = api
        self.ns = namespace
        self.name = name
        self.res = api.registry.by_kind("v1", "Secret")

    def all(self):
        items, _ = self.api.list(self.res, self.ns, "owner=helm,name=%s" % self.name)
        out = []
        for s in items:
            try:
                raw = base64.b64decode(base64.b64decode(s["data"]["release"]))
                out.append(json.loads(gzip.decompress(raw)))
            except (KeyError, ValueError, OSError):
                continue
        return sorted(out, key=lambda r: r.get("version", 0))

    def last(self):
        rs = self.all()
        return rs[-1] if rs else None

    def save(self, rel):
        data = base64.b64encode(gzip.compress(json.dumps(rel).encode())).decode()
        secret = {"metadata": {"name": "sh.helm.release.v1.%s.v%d" % (self.name, rel["version"]),
                               "labels": {"name": self.name, "owner": "helm", "status": rel["info"]["status"],
                                          "version": str(rel["version"]), "modifiedAt": str(int(clock.utcnow().timestamp()))}},
                  "type": "helm.sh/release.v1", "data": {"release": base64.b64encode(data.encode()).decode()}}
        cur = self.api.find(self.res, self.ns, secret["metadata"]["name"])
        if cur is None:
            self.api.create(self.res, secret, self.ns, validation="Ignore")
        else:
            cur.update({k: v for k, v in secret.items() if k != "metadata"})
            cur["metadata"]["labels"] = secret["metadata"]["labels"]
            self.api.update(self.res, cur, self.ns, check_rv=False, validation="Ignore")

    def drop(self):
        items, _ = self.api.list(self.res, self.ns, "owner=helm,name=%s" % self.name)
        for s in items:
            try:
                self.api.delete(self.res, self.ns, s["metadata"]["name"])
            except status.ApiError:
                pass


def _values_secret(api, namespace, name):
    """The chart-values Secret the job mounts at /config."""
    return api.find(api.registry.by_kind("v1", "Secret"), namespace, "chart-values-" + name)


def _apply(api, objs, namespace):
    """Create or update each rendered object; returns their refs."""
    refs = []
    for obj in objs:
        res = api.resource(obj["apiVersion"], obj["kind"])
        ns = obj["metadata"].get("namespace", namespace) if res.namespaced else None
        cur = api.find(res, ns, obj["metadata"]["name"])
        if cur is None:
            api.create(res, obj, ns, validation="Ignore")
        else:
            new = dict(obj)
            new["metadata"] = dict(cur["metadata"], labels=obj["metadata"].get("labels", {}),
                                   annotations=obj["metadata"].get("annotations", {}))
            if "status" in cur:
                new["status"] = cur["status"]
            api.update(res, new, ns, check_rv=False, validation="Ignore")
        refs.append([obj["apiVersion"], obj["kind"], ns or "", obj["metadata"]["name"]])
    return refs


def _delete_refs(api, refs):
    for api_version, kind, ns, name in refs:
        try:
            api.delete(api.resource(api_version, kind), ns or None, name, {"propagationPolicy": "Background"})
        except status.ApiError:
            pass


def main(ctx):
    env = ctx.env
    name, tns = env.get("NAME", ""), env.get("TARGET_NAMESPACE", "default")
    out = ctx.log.write
    if ctx.sleep(config.HELM_DELAY):
        return 0
    args = ctx.argv[ctx.argv.index("install"):] if "install" in ctx.argv else ctx.argv
    releases = Releases(ctx.api, tns, name)
    out("+ export HELM_HOST=127.0.0.1:44134")
    if args and args[0] == "delete":
        out("+ helm_v3 uninstall %s --namespace %s" % (name, tns))
        last = releases.last()
        if last:
            _delete_refs(ctx.api, last.get("objects", []))
            releases.drop()
            out('release "%s" uninstalled' % name)
        else:
            out("Release %s not found, nothing to uninstall" % name)
        return 0
    create_ns = "--create-namespace" in args
    chart, repo, version = env.get("CHART", ""), env.get("REPO", ""), env.get("VERSION", "")
    if chart.startswith(("http://", "https://")):
        out("chart path is a url, skipping repo update")
    else:
        out("+ helm_v3 repo update")
    last = releases.last()
    verb = "upgrade" if last and last["info"]["status"] == "deployed" else "install"
    values_files = []
    secret = _values_secret(ctx.api, env.get("CHART_NAMESPACE", "kube-system"), name)
    for key in sorted((secret or {}).get("data", {})):
        if key.endswith(".yaml"):
            values_files.append(key)
    out("+ echo '%s helm_v3 chart'" % ("Upgrading" if verb == "upgrade" else "Installing"))
    out("+ helm_v3 %s --namespace %s%s%s%s %s %s %s" % (
        verb, tns, " --create-namespace" if create_ns and verb == "install" else "",
        " --repo " + repo if repo else "", " --version " + version if version else "", name, chart,
        " ".join("--values /config/" + f for f in values_files)))
    try:
        meta, chart_values = _fetch(chart, repo, version)
        ns_res = ctx.api.registry.by_kind("v1", "Namespace")
        if ctx.api.find(ns_res, None, tns) is None:
            if not create_ns:
                raise HelmError('INSTALLATION FAILED: create: failed to create: namespaces "%s" not found' % tns)
            ctx.api.create(ns_res, {"metadata": {"name": tns}})
        user = []
        for f in values_files:
            try:
                user.append(yaml.safe_load(base64.b64decode(secret["data"][f]).decode()) or {})
            except yaml.YAMLError as e:
                raise HelmError("INSTALLATION FAILED: failed to parse /config/%s: %s" % (f, e))
        renderer = charts.renderer(meta.get("name"))
        objs = []
        # A chart without a renderer: its archive's values alone under the user's.
        vals = charts.values(getattr(renderer, "DEFAULTS", None), chart_values, user)
        if renderer is not None:
            try:
                objs = renderer.render(name, tns, vals, meta)
            except charts.RenderError as e:
                raise HelmError("INSTALLATION FAILED: %s" % e)
        if last and last["info"]["status"] != "deployed" and env.get("FAILURE_POLICY", "reinstall") == "reinstall":
            _delete_refs(ctx.api, last.get("objects", []))
            releases.drop()
            last = None
        refs = _apply(ctx.api, objs, tns)
        if last:
            keep = {tuple(r) for r in refs}
            _delete_refs(ctx.api, [r for r in last.get("objects", []) if tuple(r) not in keep])
            last["info"]["status"] = "superseded"
            releases.save(last)
    except (HelmError, status.ApiError) as e:
        out("Error: %s" % (e.message if isinstance(e, status.ApiError) else e))
        return 1
    revision = (last["version"] + 1) if last else 1
    now = clock.rfc3339()
    releases.save({"name": name, "namespace": tns, "version": revision,
                   "info": {"first_deployed": now, "last_deployed": now, "deleted": "",
                            "description": "Upgrade complete" if last else "Install complete", "status": "deployed"},
                   "chart": {"metadata": dict(meta, apiVersion="v2")}, "config": vals,
                   "manifest": yaml.safe_dump_all(objs), "objects": refs})
    out("NAME: %s" % name)
    out("LAST DEPLOYED: %s" % clock.utcnow().strftime("%a %b %e %H:%M:%S %Y"))
    out("NAMESPACE: %s" % tns)
    out("STATUS: deployed")
    out("REVISION: %d" % revision)
    out("TEST SUITE: None")
    return 0

