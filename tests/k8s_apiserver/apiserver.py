#!/usr/bin/env python3
"""A local stand-in for kube-apiserver v1.34, for tests only (no real API server runs on these
machines). REAL_SERVER.md lists each behaviour with the real server's answer and its source;
real_answers.json holds them as data and test_real_answers.py holds the stand-in to them.

Faithful where preflight and kubectl depend on it:
  * HTTPS only, with the certificate the test made (its own CA); bearer tokens, per-token RBAC as
    (verb, resource) pairs. An unknown token is 401 Unauthorized; no token at all is the user
    system:anonymous (anonymous auth is on by default; a bad token is never anonymous:
    union.NewFailOnError in pkg/kubeapiserver/authenticator/config.go), who may read /version,
    /healthz, /livez, /readyz (system:public-info-viewer) and gets 403 for anything else;
  * discovery (/api, /apis, /api/v1, /apis/batch/v1, /apis/node.k8s.io/v1, /version);
  * writes to a namespaced resource's cluster-wide path (POST /api/v1/events) are 405: only list
    is served there (go-restful answers, apiserver's serviceErrorHandler words it);
  * Nodes (resources.py): get, list, create (TaintNodesByCondition adds the not-ready taint),
    patch with JSON Patch, JSON merge patch and strategic merge patch (patches.py); stale
    resourceVersions are 409; nodes/status writes status and metadata only;
  * Jobs: quantities decoded (a bad one is 400, quantity.py), volumes defaulted, selector labels
    generated, the pod template validated (validation.py, 422 with the real Status); ?dryRun=All
    validates without storing. The Job controller, the pod admission plugins and the scheduler
    run at creation (controllers.py, scheduler.py); there is no kubelet: bound pods stay Pending;
  * Events (legacy validation), ConfigMaps (size and key rules), Secrets, ServiceAccounts,
    RuntimeClasses; label keys and annotation size checked on every object that has metadata.
Not modelled: namespace lifecycle (namespaces can be created, but objects go into any namespace),
watches, quotas and LimitRanges, the node
lifecycle controller (a node made through /_test/nodes is Ready and untainted, as after it ran).

Test controls (admin token only), under /_test/:
  POST /_test/nodes       {"name", "labels"?, "taints"?, "allocatable"?, "ready"?}  create or
                          replace a node as a registered kubelet leaves it (ready: false keeps
                          the not-ready taint and Ready False); allocatable overrides, e.g.
                          {"nvidia.com/gpu": "4"}, null removes a resource
  POST /_test/faults      {"method", "path", "status", "count"} answer with status, count times
  POST /_test/concurrent  {"node", "taint"}  before the next PATCH of node, someone else adds taint
  POST /_test/pod-status  {"node", "waiting": {"reason", "message"}} or {"node", "phase"}: play
                          the kubelet for the pods bound to node
  GET  /_test/requests    every request seen: method, path, content type, body
usage: apiserver.py --cert C --key K --token T [--limited-token T:verb/resource,...] --admin-token A
                    --port-file F [--node NAME]...
"""
import argparse
import json
import os
import re
import ssl
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from admin import admin_request, new_node  # noqa: E402
from resources import Resources  # noqa: E402
from state import (ADMIN, FAULTS, LOCK, REQUESTS, STATE, TOKENS, VERSION, ApiError,  # noqa: E402
                   forbidden, status)

DISCOVERY = {
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": g, "versions": [{"groupVersion": g + "/v1", "version": "v1"}],
         "preferredVersion": {"groupVersion": g + "/v1", "version": "v1"}}
        for g in ("batch", "node.k8s.io")]},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        {"name": "nodes", "singularName": "node", "namespaced": False, "kind": "Node",
         "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
         "shortNames": ["no"]},
        {"name": "nodes/status", "singularName": "", "namespaced": False, "kind": "Node",
         "verbs": ["get", "patch", "update"]},
        {"name": "namespaces", "singularName": "namespace", "namespaced": False,
         "kind": "Namespace", "verbs": ["create", "delete", "get", "list"], "shortNames": ["ns"]},
        {"name": "configmaps", "singularName": "configmap", "namespaced": True, "kind": "ConfigMap",
         "verbs": ["create", "delete", "get", "list", "patch", "update"], "shortNames": ["cm"]},
        {"name": "events", "singularName": "event", "namespaced": True, "kind": "Event",
         "verbs": ["create", "get", "list"], "shortNames": ["ev"]},
        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
         "verbs": ["get", "list"], "shortNames": ["po"]},
        {"name": "secrets", "singularName": "secret", "namespaced": True, "kind": "Secret",
         "verbs": ["create", "get", "delete"]},
        {"name": "serviceaccounts", "singularName": "serviceaccount", "namespaced": True,
         "kind": "ServiceAccount", "verbs": ["create", "delete", "get", "list"],
         "shortNames": ["sa"]}]},
    "/apis/batch/v1": {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "batch/v1",
                       "resources": [{"name": "jobs", "singularName": "job", "namespaced": True,
                                      "kind": "Job", "verbs": ["create", "delete", "get", "list"]}]},
    "/apis/node.k8s.io/v1": {"kind": "APIResourceList", "apiVersion": "v1",
                             "groupVersion": "node.k8s.io/v1", "resources": [
                                 {"name": "runtimeclasses", "singularName": "runtimeclass",
                                  "namespaced": False, "kind": "RuntimeClass",
                                  "verbs": ["create", "delete", "get", "list"]}]},
}
# What system:anonymous may read (the system:public-info-viewer ClusterRole).
PUBLIC_PATHS = ("/version", "/healthz", "/livez", "/readyz")

ROUTES = [  # (regex, resource, subresource, group, namespaced)
    (re.compile(r"^/api/v1/nodes/(?P<name>[^/]+)/status$"), "nodes", "status", "", False),
    (re.compile(r"^/api/v1/nodes(?:/(?P<name>[^/]+))?$"), "nodes", "", "", False),
    (re.compile(r"^/api/v1/namespaces(?:/(?P<name>[^/]+))?$"), "namespaces", "", "", False),
    (re.compile(r"^/apis/node\.k8s\.io/v1/runtimeclasses(?:/(?P<name>[^/]+))?$"),
     "runtimeclasses", "", "node.k8s.io", False),
    (re.compile(r"^/apis/batch/v1(?:/namespaces/(?P<ns>[^/]+))?/jobs(?:/(?P<name>[^/]+))?$"),
     "jobs", "", "batch", True),
] + [(re.compile(r"^/api/v1(?:/namespaces/(?P<ns>[^/]+))?/%s(?:/(?P<name>[^/]+))?$" % r),
      r, "", "", True) for r in ("configmaps", "events", "pods", "secrets", "serviceaccounts")]
VERBS = {"POST": "create", "PATCH": "patch", "PUT": "update", "DELETE": "delete"}


def route(path, method):
    """(resource, subresource, group, namespace, name, verb) for an API path, or None."""
    for rx, resource, sub, group, namespaced in ROUTES:
        m = rx.match(path)
        if m:
            name = m.group("name")
            verb = ("get" if name else "list") if method == "GET" else VERBS.get(method,
                                                                                 method.lower())
            return resource, sub, group, m.groupdict().get("ns"), name, verb, namespaced
    return None


class Handler(Resources, BaseHTTPRequestHandler):
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

    def handle_any(self, method):
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        auth = self.headers.get("Authorization")
        token = auth[len("Bearer "):] if auth and auth.startswith("Bearer ") else None
        with LOCK:
            REQUESTS.append({"method": method, "path": self.path, "content_type": ctype,
                             "body": raw.decode(errors="replace"), "authorized": token in TOKENS})
        try:
            if path.startswith("/_test/"):
                if token != ADMIN[0]:
                    raise ApiError(401, "Unauthorized", "Unauthorized")
                with LOCK:
                    return self.reply(*admin_request(method, path, raw))
            if auth is None:
                user = {"user": "system:anonymous", "allow": set(), "anonymous": True}
            elif token in TOKENS or token == ADMIN[0]:
                user = TOKENS.get(token, {"user": "admin", "allow": None})
            else:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            with LOCK:
                for f in FAULTS:
                    if f["count"] > 0 and f["method"] == method and path.startswith(f["path"]):
                        f["count"] -= 1
                        reason = {429: "TooManyRequests", 409: "Conflict"}.get(f["status"],
                                                                               "InternalError")
                        return self.reply(*status(f["status"], reason,
                                                  "injected fault %d" % f["status"]))
            return self.reply(*self.api(method, path, query, raw, ctype, user))
        except ApiError as e:
            return self.reply(*e.response)
        except (ValueError, KeyError, TypeError) as e:
            return self.reply(*status(400, "BadRequest", "bad request: %s" % e))

    def api(self, method, path, query, raw, ctype, user):
        r = route(path, method)
        if r is None:
            # Non-resource paths: discovery, /version; system:anonymous reads /version only.
            if user.get("anonymous") and path not in PUBLIC_PATHS:
                raise forbidden("", "", "", 'User "system:anonymous" cannot %s path "%s"'
                                % (VERBS.get(method, "get"), path))
            if method == "GET" and path == "/version":
                return 200, VERSION
            if method == "GET" and path in DISCOVERY:
                return 200, DISCOVERY[path]
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        resource, sub, group, ns, name, verb, namespaced = r
        full = resource + ("/" + sub if sub else "")
        if user["allow"] is not None and (verb, full) not in user["allow"]:
            # responsewriters.forbiddenMessage, via apierrors.NewForbidden.
            scope = 'in the namespace "%s"' % ns if ns else "at the cluster scope"
            raise forbidden(resource, group, name or "",
                            'User "%s" cannot %s resource "%s" in API group "%s" %s'
                            % (user["user"], verb, full, group, scope))
        if namespaced and ns is None and method != "GET":
            # Only list/watch are registered on a namespaced resource's cluster-wide path:
            # go-restful's 405, as apierrors.NewGenericServerResponse words it.
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on "
                           "the requested resource", {})
        with LOCK:
            return getattr(self, "do_" + full.replace("/", "_"))(verb, ns, name, query, raw, ctype)

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
    TOKENS[args.token] = {"user": "system:serviceaccount:preflight:preflight-controller",
                          "allow": None}
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
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
