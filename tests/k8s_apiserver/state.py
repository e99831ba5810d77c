"""The stand-in's store and the errors it answers with (tests only; see apiserver.py).

Status bodies are built as k8s.io/apimachinery/pkg/api/errors builds them (v0.34.0, the
apimachinery of Kubernetes v1.34.0): NewBadRequest, NewForbidden, NewNotFound, NewInvalid (the
last in validation_meta.invalid_status).
"""
import random
import string
import threading
import time

LOCK = threading.Lock()
STATE = {"rv": 100, "nodes": {}, "events": {}, "secrets": {}, "jobs": {}, "pods": {},
         "configmaps": {}, "serviceaccounts": {}, "runtimeclasses": {}, "namespaces": {}}
FAULTS = []  # [{"method", "path", "status", "count"}]
CONCURRENT = {}  # node -> taint another writer adds before our next PATCH
REQUESTS = []
TOKENS = {}  # token -> {"user": name, "allow": set of (verb, resource) or None for all}
ADMIN = [""]

# The server version the stand-in models (its rules are those of this release).
VERSION = {"major": "1", "minor": "34", "gitVersion": "v1.34.0-preflight-standin",
           "platform": "linux/amd64"}


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def next_rv():
    STATE["rv"] += 1
    return str(STATE["rv"])


def suffix(n=5):
    return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(n))


def new_uid():
    h = "".join(random.choice("0123456789abcdef") for _ in range(32))
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def status(code, reason, message, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}
    if details is not None:
        body["details"] = details
    return code, body


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.response = status(code, reason, message, details)

    @classmethod
    def from_status(cls, body):
        return cls(body["code"], body["reason"], body["message"], body.get("details"))


def qualified(resource, group):
    """schema.GroupResource.String(): "jobs.batch", "nodes"."""
    return resource + ("." + group if group else "")


def not_found(resource, name, group=""):
    """apierrors.NewNotFound: `<resource>[.<group>] "<name>" not found`."""
    raise ApiError(404, "NotFound", '%s "%s" not found' % (qualified(resource, group), name),
                   {"name": name, "group": group, "kind": resource})


def forbidden(resource, group, name, why):
    """apierrors.NewForbidden: `<resource> "<name>" is forbidden: <why>` (no resource:
    `forbidden: <why>`; no name: `<resource> is forbidden: <why>`)."""
    if not resource:
        message = "forbidden: %s" % why
    elif not name:
        message = "%s is forbidden: %s" % (qualified(resource, group), why)
    else:
        message = '%s "%s" is forbidden: %s' % (qualified(resource, group), name, why)
    details = {k: v for k, v in (("name", name), ("group", group), ("kind", resource)) if v}
    return ApiError(403, "Forbidden", message, details)


def bad_request(message):
    """apierrors.NewBadRequest: no details."""
    return ApiError(400, "BadRequest", message)
