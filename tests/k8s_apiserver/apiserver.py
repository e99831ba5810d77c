#!/usr/bin/env python3
"""A local stand-in for kube-apiserver, for tests only (no real API server runs on these machines).

Faithful where preflight and kubectl depend on it:
  * HTTPS only, with the certificate the test made (its own CA); bearer tokens; 401 and 403 with
    Kubernetes Status bodies worded like the real server's; per-token RBAC as (verb, resource) pairs;
  * discovery (/api, /apis, /api/v1, /apis/batch/v1, /version) so the real kubectl works against it;
  * Nodes: get, list (labelSelector), patch with JSON Patch (RFC 6902, all six ops; a failed `test`
    is 422 as in kube-apiserver), JSON merge patch (RFC 7386) and strategic merge patch (spec.taints
    is an atomic list and replaced whole; lists with a merge key merge, $patch: delete,
    $setElementOrder — what kubectl taint/cordon/label send);
    resourceVersion increments on every write; a stale metadata.resourceVersion in a patch is a
    409 Conflict; duplicate taints, bad taint effects and invalid label values are 422 Invalid;
  * nodes/status: patches apply to status and metadata only (the spec is reset, as the real
    nodeStatusStrategy does); status.conditions merge by `type` under a strategic merge patch;
  * Job creation validates the pod template as pkg/apis/core/validation does for the fields
    preflight uses (validation.py: quantities, extended resources, tolerations, runtimeClassName,
    env names, volumes and mounts, securityContext), answering 422 Invalid with the Status and
    causes the real server sends; ?dryRun=All validates without storing (kubectl --dry-run=server);
    pods are scheduled by nodeSelector, required node affinity (matchExpressions and matchFields),
    untolerated taints and extended resources (nvidia.com/gpu, rdma/...) against allocatable;
  * ConfigMaps (create, get, list, patch, delete; keys and values validated);
  * Events (create with generateName, list with fieldSelector — kubectl describe uses it), Secrets,
    Jobs (create, get, list, delete; deletion without propagationPolicy orphans the pods as the
    real server does for batch/v1 Jobs) and their pods: an Indexed Job gets one pod per completion
    index, "scheduled" onto the nodes its required node affinity (matchFields metadata.name In)
    allows, one per node (pod anti-affinity on kubernetes.io/hostname), honouring NoSchedule taints
    against the pod's tolerations. Pods that find no node stay Pending with PodScheduled=False.

Test controls (admin token only), under /_test/:
  POST /_test/nodes            {"name", "labels"?, "taints"?, "allocatable"?}  create or replace
                               a node (allocatable overrides, e.g. {"nvidia.com/gpu": "4"}; null
                               removes a resource)
  POST /_test/faults           {"method", "path", "status", "count"} answer with status, count times
  POST /_test/concurrent       {"node", "taint"}   before the next PATCH of node, someone else adds
                                                   taint (so a patch read before it conflicts)
  POST /_test/pod-status       {"node", "waiting": {"reason", "message"}} or {"node", "phase"}
  GET  /_test/requests         every request seen: method, path, content type, body
usage: apiserver.py --cert C --key K --token T [--limited-token T:verb/resource,...] --admin-token A
                    --port-file F [--node NAME]...
"""
import argparse
import base64
import copy
import json
import os
import random
import re
import ssl
import string
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validation  # noqa: E402  (the pod spec rules of pkg/apis/core/validation)

LOCK = threading.Lock()
STATE = {"rv": 100, "nodes": {}, "events": {}, "secrets": {}, "jobs": {}, "pods": {},
         "configmaps": {}}
FAULTS = []  # [{"method", "path", "status", "count"}]
CONCURRENT = {}  # node -> taint another writer adds before our next PATCH
REQUESTS = []
TOKENS = {}  # token -> {"user": name, "allow": set of (verb, resource) or None for all}
ADMIN = [""]

LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def next_rv():
    STATE["rv"] += 1
    return str(STATE["rv"])


def suffix(n=5):
    return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(n))


def status(code, reason, message, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}
    if details:
        body["details"] = details
    return code, body


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.response = status(code, reason, message, details)


def new_node(name, labels=None, taints=None, allocatable=None):
    meta = {"name": name, "uid": "uid-" + name, "resourceVersion": next_rv(),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": dict({"kubernetes.io/hostname": name}, **(labels or {}))}
    spec = {"taints": taints} if taints else {}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec,
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "kubelet is posting ready status",
                                       "lastHeartbeatTime": now(), "lastTransitionTime": now()}],
                       "capacity": {"cpu": "64", "memory": "1Ti", "nvidia.com/gpu": "8", "pods": "110"},
                       "allocatable": {"cpu": "64", "memory": "1Ti", "nvidia.com/gpu": "8", "pods": "110"},
                       "addresses": [{"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Debian GNU/Linux 12",
                                    "containerRuntimeVersion": "containerd://1.7", "kernelVersion": "6.1",
                                    "architecture": "amd64", "operatingSystem": "linux"}}}
    if allocatable is not None:  # e.g. {"nvidia.com/gpu": "4"} or {"nvidia.com/gpu": None}: none
        for table in ("capacity", "allocatable"):
            for k, v in allocatable.items():
                if v is None:
                    node["status"][table].pop(k, None)
                else:
                    node["status"][table][k] = v
    return node


# ---- patches -----------------------------------------------------------------------------------

def pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(422, "Invalid", "invalid JSON pointer: " + path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def resolve(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, list):
            if not p.isdigit() or int(p) >= len(cur):
                raise KeyError(p)
            cur = cur[int(p)]
        elif isinstance(cur, dict):
            cur = cur[p]
        else:
            raise KeyError(p)
    return cur


def json_patch(doc, ops):
    """RFC 6902. Errors are 422 like kube-apiserver (a failed test included)."""
    if not isinstance(ops, list):
        raise ApiError(400, "BadRequest", "json patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        kind = op.get("op")
        parts = pointer(op.get("path", ""))

        def parent_of(ps):
            try:
                return resolve(doc, ps[:-1]), ps[-1]
            except KeyError:
                raise ApiError(422, "Invalid", "doc is missing path: %s" % op.get("path"))

        def add(ps, value):
            par, key = parent_of(ps)
            if isinstance(par, list):
                if key == "-":
                    par.append(value)
                elif key.isdigit() and int(key) <= len(par):
                    par.insert(int(key), value)
                else:
                    raise ApiError(422, "Invalid", "invalid array index %s" % key)
            elif isinstance(par, dict):
                par[key] = value
            else:
                raise ApiError(422, "Invalid", "cannot add to a scalar at %s" % op.get("path"))

        def remove(ps):
            par, key = parent_of(ps)
            try:
                if isinstance(par, list):
                    return par.pop(int(key))
                return par.pop(key)
            except (KeyError, ValueError, IndexError):
                raise ApiError(422, "Invalid", "unable to remove nonexistent key: %s" % key)

        if kind == "add":
            add(parts, op["value"])
        elif kind == "remove":
            remove(parts)
        elif kind == "replace":
            remove(parts)
            add(parts, op["value"])
        elif kind in ("move", "copy"):
            src = pointer(op.get("from", ""))
            try:
                value = copy.deepcopy(resolve(doc, src))
            except KeyError:
                raise ApiError(422, "Invalid", "missing from path: %s" % op.get("from"))
            if kind == "move":
                remove(src)
            add(parts, value)
        elif kind == "test":
            try:
                value = resolve(doc, parts)
            except KeyError:
                value = None
            if value != op.get("value"):
                raise ApiError(422, "Invalid", "the server rejected our request due to an error in "
                               "our request: testing value %s failed: test failed" % op.get("path"))
        else:
            raise ApiError(400, "BadRequest", "unknown json patch op %r" % kind)
    return doc


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# Lists with a patch merge key on Node (k8s.io/api core/v1). spec.taints is not one of them: it is
# `+listType=atomic`, so kubectl taint sends the whole list and the server replaces it.
MERGE_KEYS = {"conditions": "type", "addresses": "type"}


def strategic_merge(target, patch):
    """The part of strategic merge patch kubectl uses on Nodes: maps merge, lists with a patch
    merge key merge by it ($patch: delete removes an element, $setElementOrder orders the result),
    other lists (spec.taints among them) are replaced."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    orders = {}
    for k, v in patch.items():
        if k.startswith("$setElementOrder/"):
            orders[k.split("/", 1)[1]] = v
            continue
        if k.startswith("$"):
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list) and k in MERGE_KEYS:
            mk = MERGE_KEYS[k]
            cur = [copy.deepcopy(e) for e in out.get(k) or []]
            for item in v:
                idx = next((i for i, e in enumerate(cur) if e.get(mk) == item.get(mk)), None)
                if item.get("$patch") == "delete":
                    if idx is not None:
                        cur.pop(idx)
                elif idx is None:
                    cur.append(copy.deepcopy(item))
                else:
                    cur[idx] = strategic_merge(cur[idx], item)
            out[k] = cur
        else:
            out[k] = strategic_merge(out.get(k), v)
    for k, order in orders.items():
        mk = MERGE_KEYS.get(k)
        if mk and isinstance(out.get(k), list):
            rank = {o.get(mk): i for i, o in enumerate(order)}
            out[k].sort(key=lambda e: rank.get(e.get(mk), len(rank)))
    return out


def validate_node(node):
    name = node["metadata"]["name"]
    errs = []
    seen = set()
    for i, t in enumerate(node.get("spec", {}).get("taints") or []):
        if not t.get("key"):
            errs.append("spec.taints[%d].key: Required value" % i)
        if t.get("effect") not in TAINT_EFFECTS:
            errs.append('spec.taints[%d].effect: Unsupported value: "%s"' % (i, t.get("effect")))
        if (t.get("key"), t.get("effect")) in seen:
            errs.append("spec.taints[%d]: Duplicate value: core.Taint{Key:\"%s\", Effect:\"%s\"}"
                        % (i, t.get("key"), t.get("effect")))
        seen.add((t.get("key"), t.get("effect")))
        if t.get("value") and (len(t["value"]) > 63 or not LABEL_VALUE.match(t["value"])):
            errs.append("spec.taints[%d].value: Invalid value: %r" % (i, t["value"]))
    for k, v in (node["metadata"].get("labels") or {}).items():
        if not isinstance(v, str) or len(v) > 63 or not LABEL_VALUE.match(v):
            errs.append("metadata.labels: Invalid value: %r" % v)
    if errs:
        raise ApiError(422, "Invalid", 'Node "%s" is invalid: %s' % (name, "; ".join(errs)),
                       {"name": name, "kind": "nodes"})


# ---- scheduling of Job pods ----------------------------------------------------------------------

def tolerates(tolerations, taint):
    for t in tolerations or []:
        if t.get("effect") not in (None, "", taint.get("effect")):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t.get("key") == taint.get("key")):
            return True
        if t.get("key") == taint.get("key") and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def expression_matches(expr, value_of):
    """A NodeSelectorRequirement (matchExpressions on labels, matchFields on metadata.name)."""
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
    value = value_of(key)
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        try:
            return value is not None and (int(value) > int(values[0]) if op == "Gt"
                                          else int(value) < int(values[0]))
        except (ValueError, IndexError):
            return False
    return False


def node_matches(pod_spec, node):
    """nodeSelector AND the required node affinity (terms ORed; the requirements of one term
    ANDed), as the scheduler's NodeAffinity filter does."""
    labels = node["metadata"].get("labels") or {}
    for k, v in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    terms = (pod_spec.get("affinity", {}).get("nodeAffinity", {})
             .get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms"))
    if not terms:
        return True
    fields = {"metadata.name": node["metadata"]["name"]}
    for term in terms:
        exprs = term.get("matchExpressions") or []
        flds = term.get("matchFields") or []
        if not exprs and not flds:
            continue  # an empty term matches nothing
        if all(expression_matches(e, labels.get) for e in exprs) and \
                all(expression_matches(f, fields.get) for f in flds):
            return True
    return False


def extended_requests(pod_spec):
    """What a pod asks for of extended resources (a request defaults to the limit)."""
    out = {}
    for c in pod_spec.get("containers") or []:
        res = c.get("resources") or {}
        for name, value in dict(res.get("limits") or {}, **(res.get("requests") or {})).items():
            if validation.is_extended_resource(name):
                parsed = validation.parse_quantity(value)
                out[name] = out.get(name, 0) + (parsed[0] if parsed else 0)
    return out


def schedule(pod, taken):
    """The node for pod, or (None, why) as the scheduler's FailedScheduling message counts it."""
    spec = pod["spec"]
    why = {}
    for n in sorted(STATE["nodes"]):
        node = STATE["nodes"][n]
        if not node_matches(spec, node):
            why["node(s) didn't match Pod's node affinity/selector"] = \
                why.get("node(s) didn't match Pod's node affinity/selector", 0) + 1
            continue
        if n in taken:
            why["node(s) didn't match pod anti-affinity rules"] = \
                why.get("node(s) didn't match pod anti-affinity rules", 0) + 1
            continue
        blocked = [t for t in node["spec"].get("taints") or []
                   if t.get("effect") in ("NoSchedule", "NoExecute")
                   and not tolerates(spec.get("tolerations"), t)]
        if blocked:
            k = "node(s) had untolerated taint {%s: %s}" % (blocked[0]["key"], blocked[0].get("value", ""))
            why[k] = why.get(k, 0) + 1
            continue
        short = None
        for name, amount in extended_requests(spec).items():
            have = validation.parse_quantity(node["status"].get("allocatable", {}).get(name, "0"))
            used = sum(extended_requests(p["spec"]).get(name, 0) for p in STATE["pods"].values()
                       if p["spec"].get("nodeName") == n)
            if have is None or used + amount > have[0]:
                short = "Insufficient " + name
                break
        if short:
            why[short] = why.get(short, 0) + 1
            continue
        return n, None
    return None, "0/%d nodes are available: %s." % (
        len(STATE["nodes"]), ", ".join("%d %s" % (c, k) for k, c in sorted(why.items())))


def create_job_pods(ns, job):
    spec = job["spec"]
    template = spec["template"]
    n = int(spec.get("completions") or 1)
    anti = bool(template["spec"].get("affinity", {}).get("podAntiAffinity"))
    taken = set()
    for i in range(n):
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "%s-%d-%s" % (job["metadata"]["name"], i, suffix()),
                            "namespace": ns, "uid": "uid-" + suffix(12), "resourceVersion": next_rv(),
                            "creationTimestamp": now(),
                            "labels": dict(template.get("metadata", {}).get("labels", {}),
                                           **{"job-name": job["metadata"]["name"],
                                              "batch.kubernetes.io/job-name": job["metadata"]["name"],
                                              "batch.kubernetes.io/job-completion-index": str(i)}),
                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                                 "name": job["metadata"]["name"],
                                                 "uid": job["metadata"]["uid"], "controller": True}]},
               "spec": copy.deepcopy(template["spec"])}
        node, why = schedule(pod, taken)
        if node is None:
            pod["status"] = {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": why}]}
        else:
            if anti:
                taken.add(node)
            pod["spec"]["nodeName"] = node
            pod["status"] = {"phase": "Running", "startTime": now(), "containerStatuses": [
                {"name": c["name"], "image": c.get("image", ""), "ready": True, "restartCount": 0,
                 "state": {"running": {"startedAt": now()}}}
                for c in pod["spec"].get("containers", [])]}
        STATE["pods"][(ns, pod["metadata"]["name"])] = pod


# ---- selectors -------------------------------------------------------------------------------------

def get_field(obj, dotted):
    cur = obj
    for p in dotted.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p, "")
    return "" if cur is None else str(cur)


def selector_matches(sel, value_of):
    if not sel:
        return True
    for term in sel.split(","):
        term = term.strip()
        if not term:
            continue
        if "!=" in term:
            k, v = term.split("!=", 1)
            if value_of(k) == v:
                return False
        elif "==" in term or "=" in term:
            k, v = re.split("==?", term, maxsplit=1)
            if value_of(k) != v:
                return False
        elif value_of(term) == "":
            return False  # "key" alone: the label must exist
    return True


def filtered(items, query):
    lsel = query.get("labelSelector", [""])[0]
    fsel = query.get("fieldSelector", [""])[0]
    out = []
    for o in items:
        labels = o.get("metadata", {}).get("labels") or {}
        if not selector_matches(lsel, lambda k: labels.get(k, "")):
            continue
        if not selector_matches(fsel, lambda k: get_field(o, k)):
            continue
        out.append(copy.deepcopy(o))
    return out


# ---- HTTP ------------------------------------------------------------------------------------------

DISCOVERY = {
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": "batch", "versions": [{"groupVersion": "batch/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": "batch/v1", "version": "v1"}}]},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        {"name": "nodes", "singularName": "node", "namespaced": False, "kind": "Node",
         "verbs": ["get", "list", "patch", "update", "watch"], "shortNames": ["no"]},
        {"name": "nodes/status", "singularName": "", "namespaced": False, "kind": "Node",
         "verbs": ["get", "patch", "update"]},
        {"name": "configmaps", "singularName": "configmap", "namespaced": True, "kind": "ConfigMap",
         "verbs": ["create", "delete", "get", "list", "patch", "update"], "shortNames": ["cm"]},
        {"name": "events", "singularName": "event", "namespaced": True, "kind": "Event",
         "verbs": ["create", "get", "list"], "shortNames": ["ev"]},
        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
         "verbs": ["get", "list"], "shortNames": ["po"]},
        {"name": "secrets", "singularName": "secret", "namespaced": True, "kind": "Secret",
         "verbs": ["create", "get", "delete"]}]},
    "/apis/batch/v1": {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "batch/v1",
                       "resources": [{"name": "jobs", "singularName": "job", "namespaced": True,
                                      "kind": "Job", "verbs": ["create", "delete", "get", "list"]}]},
    "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0-preflight-standin",
                 "platform": "linux/amd64"},
}

ROUTES = [  # (regex, resource, group, namespaced)
    (re.compile(r"^/api/v1/nodes/(?P<name>[^/]+)/status$"), "nodes/status", "", False),
    (re.compile(r"^/api/v1/nodes(?:/(?P<name>[^/]+))?$"), "nodes", "", False),
    (re.compile(r"^/api/v1(?:/namespaces/(?P<ns>[^/]+))?/configmaps(?:/(?P<name>[^/]+))?$"), "configmaps", "", True),
    (re.compile(r"^/api/v1(?:/namespaces/(?P<ns>[^/]+))?/events(?:/(?P<name>[^/]+))?$"), "events", "", True),
    (re.compile(r"^/api/v1(?:/namespaces/(?P<ns>[^/]+))?/pods(?:/(?P<name>[^/]+))?$"), "pods", "", True),
    (re.compile(r"^/api/v1/namespaces/(?P<ns>[^/]+)/secrets(?:/(?P<name>[^/]+))?$"), "secrets", "", True),
    (re.compile(r"^/apis/batch/v1(?:/namespaces/(?P<ns>[^/]+))?/jobs(?:/(?P<name>[^/]+))?$"), "jobs", "batch", True),
]

KINDS = {"events": "Event", "pods": "Pod", "secrets": "Secret", "jobs": "Job", "nodes": "Node",
         "configmaps": "ConfigMap"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if code == 429:
            self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        return raw

    def handle_any(self, method):
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        raw = self.body()
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        token = (self.headers.get("Authorization") or "")
        token = token[len("Bearer "):] if token.startswith("Bearer ") else None
        with LOCK:
            REQUESTS.append({"method": method, "path": self.path, "content_type": ctype,
                             "body": raw.decode(errors="replace"), "authorized": token in TOKENS})
        try:
            if path.startswith("/_test/"):
                if token != ADMIN[0]:
                    raise ApiError(401, "Unauthorized", "Unauthorized")
                return self.reply(*self.admin(method, path, raw))
            if token is None or (token not in TOKENS and token != ADMIN[0]):
                raise ApiError(401, "Unauthorized", "Unauthorized")
            user = TOKENS.get(token, {"user": "admin", "allow": None})
            with LOCK:
                for f in FAULTS:
                    if f["count"] > 0 and f["method"] == method and path.startswith(f["path"]):
                        f["count"] -= 1
                        code = f["status"]
                        reason = {429: "TooManyRequests", 409: "Conflict"}.get(code, "InternalError")
                        return self.reply(*status(code, reason, "injected fault %d" % code))
            if method == "GET" and path in DISCOVERY:
                return self.reply(200, DISCOVERY[path])
            if method == "GET" and path.rstrip("/") in ("/openapi/v2", "/openapi/v3"):
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return self.reply(*self.api(method, path, query, raw, ctype, user))
        except ApiError as e:
            return self.reply(*e.response)
        except (ValueError, KeyError, TypeError) as e:
            return self.reply(*status(400, "BadRequest", "bad request: %s" % e))

    def admin(self, method, path, raw):
        data = json.loads(raw or b"{}")
        with LOCK:
            if path == "/_test/nodes" and method == "POST":
                STATE["nodes"][data["name"]] = new_node(data["name"], data.get("labels"),
                                                        data.get("taints"), data.get("allocatable"))
                return 201, STATE["nodes"][data["name"]]
            if path == "/_test/faults" and method == "POST":
                FAULTS.append({"method": data["method"], "path": data["path"],
                               "status": int(data["status"]), "count": int(data.get("count", 1))})
                return 201, {}
            if path == "/_test/concurrent" and method == "POST":
                CONCURRENT[data["node"]] = data["taint"]
                return 201, {}
            if path == "/_test/pod-status" and method == "POST":
                hits = 0
                for pod in STATE["pods"].values():
                    if pod["spec"].get("nodeName") != data["node"]:
                        continue
                    hits += 1
                    st = pod["status"]
                    if "waiting" in data:
                        st["phase"] = "Pending"
                        for cs in st.get("containerStatuses", []):
                            cs["ready"] = False
                            cs["state"] = {"waiting": data["waiting"]}
                    if "phase" in data:
                        st["phase"] = data["phase"]
                    pod["metadata"]["resourceVersion"] = next_rv()
                return 200, {"pods": hits}
            if path == "/_test/requests" and method == "GET":
                return 200, {"items": REQUESTS}
        raise ApiError(404, "NotFound", "no such test control: " + path)

    def api(self, method, path, query, raw, ctype, user):
        for rx, resource, group, namespaced in ROUTES:
            m = rx.match(path)
            if m:
                break
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = m.group("name")
        ns = m.groupdict().get("ns")
        verb = {"GET": "get" if name else "list", "POST": "create", "PATCH": "patch",
                "PUT": "update", "DELETE": "delete"}.get(method, method.lower())
        if user["allow"] is not None and (verb, resource) not in user["allow"]:
            scope = 'in the namespace "%s"' % ns if ns else "at the cluster scope"
            target = '%s "%s"' % (resource, name) if name else resource
            raise ApiError(403, "Forbidden",
                           '%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s" %s'
                           % (target, user["user"], verb, resource, group, scope),
                           {"name": name or "", "group": group, "kind": resource})
        with LOCK:
            return getattr(self, "do_" + resource.replace("/", "_"))(verb, ns, name, query, raw, ctype)

    def not_found(self, resource, name, group=""):
        raise ApiError(404, "NotFound", '%s "%s" not found' % (resource if not group else
                                                               resource + "." + group, name),
                       {"name": name, "group": group, "kind": resource})

    def listing(self, kind, items, query):
        return 200, {"kind": kind + "List", "apiVersion": "batch/v1" if kind == "Job" else "v1",
                     "metadata": {"resourceVersion": str(STATE["rv"])},
                     "items": filtered(items, query)}

    # nodes
    def do_nodes(self, verb, ns, name, query, raw, ctype):
        if verb == "list":
            return self.listing("Node", STATE["nodes"].values(), query)
        if name not in STATE["nodes"]:
            self.not_found("nodes", name)
        node = STATE["nodes"][name]
        if verb == "get":
            return 200, copy.deepcopy(node)
        if verb != "patch":
            raise ApiError(405, "MethodNotAllowed", "method not allowed")
        return self.patch_node(name, raw, ctype, status_only=False)

    # nodes/status: the subresource the kubelet and node-problem-detector write conditions through.
    # As kube-apiserver's nodeStatusStrategy: the patch applies to the whole Node, then the spec is
    # reset to the stored one (PrepareForUpdate: newNode.Spec = oldNode.Spec), so only status and
    # metadata change. status.conditions merge by `type` under a strategic merge patch
    # (NodeStatus.Conditions: patchStrategy=merge, patchMergeKey=type); a JSON merge patch replaces
    # the whole list (RFC 7386).
    def do_nodes_status(self, verb, ns, name, query, raw, ctype):
        if name not in STATE["nodes"]:
            self.not_found("nodes", name)
        if verb == "get":
            return 200, copy.deepcopy(STATE["nodes"][name])
        if verb != "patch":
            raise ApiError(405, "MethodNotAllowed", "method not allowed")
        return self.patch_node(name, raw, ctype, status_only=True)

    def patch_node(self, name, raw, ctype, status_only):
        node = STATE["nodes"][name]
        if name in CONCURRENT:  # another writer gets in between our read and our write
            other = CONCURRENT.pop(name)
            node["spec"].setdefault("taints", []).append(other)
            node["metadata"]["resourceVersion"] = next_rv()
        patch = json.loads(raw or b"null")
        if ctype == "application/json-patch+json":
            result = json_patch(node, patch)
        elif ctype == "application/merge-patch+json":
            result = merge_patch(node, patch)
        elif ctype == "application/strategic-merge-patch+json":
            result = strategic_merge(node, patch)
        else:
            raise ApiError(415, "UnsupportedMediaType",
                           "the body of the request was in an unknown format - accepted media "
                           "types include: application/json-patch+json, application/merge-patch+json,"
                           " application/apply-patch+yaml, application/strategic-merge-patch+json")
        sent_rv = result.get("metadata", {}).get("resourceVersion")
        if sent_rv != node["metadata"]["resourceVersion"]:
            # The patch carried a resourceVersion other than the stored one.
            raise ApiError(409, "Conflict",
                           'Operation cannot be fulfilled on nodes "%s": the object has been '
                           "modified; please apply your changes to the latest version and try "
                           "again" % name, {"name": name, "kind": "nodes"})
        if result.get("metadata", {}).get("name") != name:
            raise ApiError(422, "Invalid", "metadata.name: Invalid value: the name cannot change")
        if status_only:
            result["spec"] = copy.deepcopy(node["spec"])
        validate_node(result)
        if result != node:
            result["metadata"]["resourceVersion"] = next_rv()
            STATE["nodes"][name] = result
        return 200, copy.deepcopy(STATE["nodes"][name])

    # events
    def do_events(self, verb, ns, name, query, raw, ctype):
        if verb == "list":
            items = [e for (n, _), e in STATE["events"].items() if ns in (None, n)]
            return self.listing("Event", items, query)
        if verb == "create":
            ev = json.loads(raw)
            meta = ev.setdefault("metadata", {})
            if ns is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            meta["namespace"] = ns
            if not meta.get("name"):
                if not meta.get("generateName"):
                    raise ApiError(422, "Invalid", "metadata.name: Required value")
                meta["name"] = meta["generateName"] + suffix()
            for f in ("involvedObject", "reason", "message"):
                if f not in ev:
                    raise ApiError(422, "Invalid", "Event is invalid: %s: Required value" % f)
            meta["uid"] = "uid-" + suffix(12)
            meta["resourceVersion"] = next_rv()
            meta["creationTimestamp"] = now()
            STATE["events"][(ns, meta["name"])] = ev
            return 201, copy.deepcopy(ev)
        if verb == "get":
            if (ns, name) not in STATE["events"]:
                self.not_found("events", name)
            return 200, copy.deepcopy(STATE["events"][(ns, name)])
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    # pods
    def do_pods(self, verb, ns, name, query, raw, ctype):
        if verb == "list":
            items = [p for (n, _), p in STATE["pods"].items() if ns in (None, n)]
            return self.listing("Pod", items, query)
        if verb == "get":
            if (ns, name) not in STATE["pods"]:
                self.not_found("pods", name)
            return 200, copy.deepcopy(STATE["pods"][(ns, name)])
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    # secrets
    def do_secrets(self, verb, ns, name, query, raw, ctype):
        if verb == "create":
            sec = json.loads(raw)
            meta = sec.setdefault("metadata", {})
            key = (ns, meta.get("name"))
            if key in STATE["secrets"]:
                raise ApiError(409, "AlreadyExists", 'secrets "%s" already exists' % key[1])
            data = dict(sec.get("data") or {})
            for k, v in (sec.pop("stringData", None) or {}).items():
                data[k] = base64.b64encode(v.encode()).decode()
            sec["data"] = data
            if query.get("dryRun", [""])[0] == "All":
                meta["namespace"] = ns
                return 201, sec
            meta.update({"namespace": ns, "uid": "uid-" + suffix(12), "resourceVersion": next_rv()})
            STATE["secrets"][key] = sec
            return 201, copy.deepcopy(sec)
        if (ns, name) not in STATE["secrets"]:
            self.not_found("secrets", name)
        if verb == "get":
            return 200, copy.deepcopy(STATE["secrets"][(ns, name)])
        if verb == "delete":
            STATE["secrets"].pop((ns, name))
            return 200, {"kind": "Status", "apiVersion": "v1", "status": "Success"}
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    # configmaps (the gang gate's per-pod verdicts): create, get, list, patch (merge and
    # strategic merge are the same for a ConfigMap's string maps), delete
    def do_configmaps(self, verb, ns, name, query, raw, ctype):
        if verb == "list":
            items = [c for (n, _), c in STATE["configmaps"].items() if ns in (None, n)]
            return self.listing("ConfigMap", items, query)
        if verb == "create":
            cm = json.loads(raw)
            meta = cm.setdefault("metadata", {})
            key = (ns, meta.get("name"))
            if key in STATE["configmaps"]:
                raise ApiError(409, "AlreadyExists", 'configmaps "%s" already exists' % key[1])
            self.validate_configmap(cm, key[1])
            meta.update({"namespace": ns, "uid": "uid-" + suffix(12), "resourceVersion": next_rv(),
                         "creationTimestamp": now()})
            STATE["configmaps"][key] = cm
            return 201, copy.deepcopy(cm)
        if (ns, name) not in STATE["configmaps"]:
            self.not_found("configmaps", name)
        cm = STATE["configmaps"][(ns, name)]
        if verb == "get":
            return 200, copy.deepcopy(cm)
        if verb == "delete":
            STATE["configmaps"].pop((ns, name))
            return 200, {"kind": "Status", "apiVersion": "v1", "status": "Success"}
        if verb == "patch":
            patch = json.loads(raw or b"null")
            if ctype == "application/json-patch+json":
                result = json_patch(cm, patch)
            elif ctype in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
                result = merge_patch(cm, patch)
            else:
                raise ApiError(415, "UnsupportedMediaType", "unsupported patch type " + ctype)
            sent_rv = result.get("metadata", {}).get("resourceVersion")
            if sent_rv != cm["metadata"]["resourceVersion"]:
                raise ApiError(409, "Conflict", 'Operation cannot be fulfilled on configmaps "%s": '
                               "the object has been modified; please apply your changes to the "
                               "latest version and try again" % name)
            self.validate_configmap(result, name)
            if result != cm:
                result["metadata"]["resourceVersion"] = next_rv()
                STATE["configmaps"][(ns, name)] = result
            return 200, copy.deepcopy(STATE["configmaps"][(ns, name)])
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    @staticmethod
    def validate_configmap(cm, name):
        # ValidateConfigMap: keys IsConfigMapKey ([-._a-zA-Z0-9]+, <= 253), values strings.
        errs = validation.Errors()
        for k, v in (cm.get("data") or {}).items():
            if not re.match(r"^[-._a-zA-Z0-9]+$", k) or len(k) > 253 or k in (".", ".."):
                errs.invalid("data", k, "a valid config key must consist of alphanumeric "
                             "characters, '-', '_' or '.'")
            if not isinstance(v, str):
                raise ApiError(400, "BadRequest", "ConfigMap in version \"v1\" cannot be handled "
                               "as a ConfigMap: json: cannot unmarshal %s into Go struct field "
                               "ConfigMap.data of type string" % type(v).__name__)
        if errs:
            st = validation.invalid_status("ConfigMap", "", name, errs)
            raise ApiError(422, "Invalid", st["message"], st["details"])

    # jobs
    def do_jobs(self, verb, ns, name, query, raw, ctype):
        if verb == "list":
            items = [j for (n, _), j in STATE["jobs"].items() if ns in (None, n)]
            return self.listing("Job", items, query)
        if verb == "create":
            job = json.loads(raw)
            meta = job.setdefault("metadata", {})
            key = (ns, meta.get("name"))
            if key in STATE["jobs"]:
                raise ApiError(409, "AlreadyExists", 'jobs.batch "%s" already exists' % key[1])
            spec = job.get("spec", {})
            tmpl = spec.get("template", {}).get("spec", {})
            if tmpl.get("restartPolicy") not in ("Never", "OnFailure"):
                raise ApiError(422, "Invalid", 'Job.batch "%s" is invalid: spec.template.spec.'
                               'restartPolicy: Required value: valid values: "OnFailure", "Never"'
                               % key[1])
            if spec.get("completionMode") == "Indexed" and spec.get("completions") is None:
                raise ApiError(422, "Invalid", 'Job.batch "%s" is invalid: spec.completions: '
                               "Required value: when completion mode is Indexed" % key[1])
            errs = validation.validate_pod_spec(tmpl, "spec.template.spec", validation.Errors())
            for k, v in (spec.get("template", {}).get("metadata", {}).get("labels") or {}).items():
                if not validation.is_qualified_name(k) or not validation.is_label_value(v):
                    errs.invalid("spec.template.metadata.labels", v, "a valid label must be an "
                                 "empty string or consist of alphanumeric characters, '-', '_' or '.'")
            if errs:
                st = validation.invalid_status("Job", "batch", key[1], errs)
                raise ApiError(422, "Invalid", st["message"], st["details"])
            if query.get("dryRun", [""])[0] == "All":
                meta.update({"namespace": ns, "uid": "uid-dryrun", "creationTimestamp": now()})
                return 201, job  # validated, not stored (kubectl apply --dry-run=server)
            meta.update({"namespace": ns, "uid": "uid-" + suffix(12), "resourceVersion": next_rv(),
                         "creationTimestamp": now()})
            job["status"] = {"active": 0, "startTime": now()}
            STATE["jobs"][key] = job
            create_job_pods(ns, job)
            job["status"]["active"] = sum(1 for p in STATE["pods"].values()
                                          if p["metadata"]["ownerReferences"][0]["uid"] == meta["uid"])
            return 201, copy.deepcopy(job)
        if (ns, name) not in STATE["jobs"]:
            self.not_found("jobs", name, "batch")
        job = STATE["jobs"][(ns, name)]
        if verb == "get":
            return 200, copy.deepcopy(job)
        if verb == "delete":
            # propagationPolicy from the body or the query; without one the pods are orphaned,
            # as kube-apiserver does for batch/v1 Jobs.
            policy = query.get("propagationPolicy", [None])[0]
            if raw:
                policy = json.loads(raw).get("propagationPolicy", policy)
            STATE["jobs"].pop((ns, name))
            if policy in ("Background", "Foreground"):
                for key in [k for k, p in STATE["pods"].items()
                            if p["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]]:
                    STATE["pods"].pop(key)
            return 200, {"kind": "Status", "apiVersion": "v1", "status": "Success",
                         "details": {"name": name, "group": "batch", "kind": "jobs",
                                     "uid": job["metadata"]["uid"]}}
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_PUT(self):
        self.handle_any("PUT")




def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--token", required=True, help="full access")
    ap.add_argument("--limited-token", action="append", default=[],
                    help="TOKEN:verb/resource,verb/resource (e.g. get/nodes,list/nodes)")
    ap.add_argument("--admin-token", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--node", action="append", default=[])
    args = ap.parse_args()
    TOKENS[args.token] = {"user": "system:serviceaccount:preflight:preflight-controller", "allow": None}
    for spec in args.limited_token:
        tok, rules = spec.split(":", 1)
        allow = {tuple(r.split("/", 1)) for r in rules.split(",") if r}
        TOKENS[tok] = {"user": "system:serviceaccount:preflight:limited", "allow": allow}
    ADMIN[0] = args.admin_token
    for n in args.node:
        STATE["nodes"][n] = new_node(n)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    port = server.server_address[1]
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
