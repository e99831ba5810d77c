"""The resources the stand-in serves, one do_<resource> handler each (tests only; apiserver.py
routes to them with LOCK held). Each handler gets (verb, namespace, name, query, raw body, content
type) and returns (status code, body) or raises state.ApiError.
"""
import base64
import copy
import json

import controllers
import quantity
import validation
import validation_meta as vm
from patches import json_patch, merge_patch, strategic_merge
from state import (CONCURRENT, STATE, ApiError, bad_request, new_uid, next_rv, not_found, now,
                   suffix)
from selection import filtered

TAINT_EFFECTS = ["NoExecute", "NoSchedule", "PreferNoSchedule"]
CONFLICT = ("Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
            "apply your changes to the latest version and try again")


def raise_invalid(kind, group, name, errs):
    if errs:
        raise ApiError.from_status(vm.invalid_status(kind, group, name, errs))


def validate_node(node):
    """ValidateNode: metadata (labels, annotations) and validateNodeTaints, whose errors v1.34
    reports under metadata.taints (ValidateNode passes fldPath.Child("taints") of "metadata")."""
    errs = vm.validate_object_meta(node["metadata"], "metadata", vm.Errors())
    seen = set()
    for i, t in enumerate(node.get("spec", {}).get("taints") or []):
        p = "metadata.taints[%d]" % i
        for m in vm.qualified_name_errors(t.get("key", "")):
            errs.invalid(p + ".key", t.get("key", ""), m)
        value_errs = vm.label_value_errors(t.get("value", ""))
        if value_errs:
            errs.invalid(p + ".value", t.get("value", ""), ";".join(value_errs))
        if not t.get("effect"):
            errs.required(p + ".effect")
        elif t["effect"] not in TAINT_EFFECTS:
            errs.not_supported(p + ".effect", t["effect"], ["NoSchedule", "PreferNoSchedule",
                                                            "NoExecute"])
        if (t.get("key"), t.get("effect")) in seen:
            errs.add("FieldValueDuplicate", p, "Duplicate value: %s: taints must be unique by key "
                     "and effect pair" % vm.q(t))
        seen.add((t.get("key"), t.get("effect")))
    raise_invalid("Node", "", node["metadata"]["name"], errs)


def listing(kind, items, query, api_version="v1"):
    return 200, {"kind": kind + "List", "apiVersion": api_version,
                 "metadata": {"resourceVersion": str(STATE["rv"])},
                 "items": filtered(items, query)}


def deleted(kind, name, group=""):
    return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                 "details": dict({"name": name, "kind": kind}, **({"group": group} if group
                                                                    else {}))}


def patched(obj, raw, ctype, merge_strategic=strategic_merge):
    patch = json.loads(raw or b"null")
    if ctype == "application/json-patch+json":
        return json_patch(obj, patch)
    if ctype == "application/merge-patch+json":
        return merge_patch(obj, patch)
    if ctype == "application/strategic-merge-patch+json":
        return merge_strategic(obj, patch)
    raise ApiError(415, "UnsupportedMediaType",
                   "the body of the request was in an unknown format - accepted media types "
                   "include: application/json-patch+json, application/merge-patch+json, "
                   "application/apply-patch+yaml, application/strategic-merge-patch+json")


def dry_run(query):
    return query.get("dryRun", [""])[0] == "All"


class Resources:
    # nodes
    def do_nodes(self, verb, ns, name, query, raw, ctype):
        if verb == "list":
            return listing("Node", STATE["nodes"].values(), query)
        if verb == "create":
            return self.create_node(json.loads(raw), dry_run(query))
        if name not in STATE["nodes"]:
            not_found("nodes", name)
        if verb == "get":
            return 200, copy.deepcopy(STATE["nodes"][name])
        if verb == "delete":
            STATE["nodes"].pop(name)
            return deleted("nodes", name)
        if verb != "patch":
            raise ApiError(405, "MethodNotAllowed", "method not allowed")
        return self.patch_node(name, raw, ctype, status_only=False)

    @staticmethod
    def create_node(node, dry):
        """A Node created through the API (as a kubelet registers): TaintNodesByCondition
        admission (plugin/pkg/admission/nodetaint) adds node.kubernetes.io/not-ready:NoSchedule;
        with no kubelet posting Ready and no node lifecycle controller, it stays."""
        meta = node.setdefault("metadata", {})
        name = meta.get("name", "")
        if name in STATE["nodes"]:
            raise ApiError(409, "AlreadyExists", 'nodes "%s" already exists' % name,
                           {"name": name, "kind": "nodes"})
        taints = node.setdefault("spec", {}).setdefault("taints", [])
        if not any(t.get("key") == "node.kubernetes.io/not-ready" and
                   t.get("effect") == "NoSchedule" for t in taints):
            taints.append({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})
        validate_node(node)
        node.setdefault("status", {})
        if dry:  # admission runs in a dry run too
            return 201, node
        meta.update({"uid": new_uid(), "resourceVersion": next_rv(), "creationTimestamp": now()})
        STATE["nodes"][name] = node
        return 201, copy.deepcopy(node)

    # nodes/status: the subresource the kubelet and node-problem-detector write conditions
    # through. As kube-apiserver's nodeStatusStrategy (pkg/registry/core/node/strategy.go): the
    # patch applies to the whole Node, then the spec is reset to the stored one
    # (PrepareForUpdate: newNode.Spec = oldNode.Spec). status.conditions merge by `type` under a
    # strategic merge patch (NodeStatus.Conditions: patchMergeKey=type); a JSON merge patch
    # replaces the whole list (RFC 7386).
    def do_nodes_status(self, verb, ns, name, query, raw, ctype):
        if name not in STATE["nodes"]:
            not_found("nodes", name)
        if verb == "get":
            return 200, copy.deepcopy(STATE["nodes"][name])
        if verb != "patch":
            raise ApiError(405, "MethodNotAllowed", "method not allowed")
        return self.patch_node(name, raw, ctype, status_only=True)

    @staticmethod
    def patch_node(name, raw, ctype, status_only):
        node = STATE["nodes"][name]
        if name in CONCURRENT:  # another writer gets in between our read and our write
            node["spec"].setdefault("taints", []).append(CONCURRENT.pop(name))
            node["metadata"]["resourceVersion"] = next_rv()
        result = patched(node, raw, ctype)
        if result.get("metadata", {}).get("resourceVersion") != node["metadata"]["resourceVersion"]:
            # The patch carried a resourceVersion other than the stored one.
            raise ApiError(409, "Conflict", CONFLICT % ("nodes", name),
                           {"name": name, "kind": "nodes"})
        if result.get("metadata", {}).get("name") != name:
            raise ApiError(422, "Invalid", "metadata.name: Invalid value: the name cannot change")
        if status_only:
            result["spec"] = copy.deepcopy(node["spec"])
        validate_node(result)
        if result != node:
            result["metadata"]["resourceVersion"] = next_rv()
            STATE["nodes"][name] = result
        return 200, copy.deepcopy(STATE["nodes"][name])

    # events (core/v1): validated by legacyValidateEvent only (validation_meta.validate_event)
    def do_events(self, verb, ns, name, query, raw, ctype):
        if verb == "list":
            items = [e for (n, _), e in STATE["events"].items() if ns in (None, n)]
            return listing("Event", items, query)
        if verb == "create":
            ev = json.loads(raw)
            meta = ev.setdefault("metadata", {})
            if meta.get("namespace") not in (None, "", ns):
                raise bad_request("the namespace of the provided object does not match the "
                                  "namespace sent on the request")
            if not meta.get("name"):
                if not meta.get("generateName"):
                    raise ApiError(422, "Invalid", "metadata.name: Required value")
                meta["name"] = meta["generateName"] + suffix()
            raise_invalid("Event", "", meta["name"], vm.validate_event(ev, ns))
            meta["namespace"] = ns
            if dry_run(query):
                return 201, ev
            meta.update({"uid": new_uid(), "resourceVersion": next_rv(),
                         "creationTimestamp": now()})
            STATE["events"][(ns, meta["name"])] = ev
            return 201, copy.deepcopy(ev)
        if verb == "get":
            if (ns, name) not in STATE["events"]:
                not_found("events", name)
            return 200, copy.deepcopy(STATE["events"][(ns, name)])
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    # pods (created by the Job controller only: controllers.py)
    def do_pods(self, verb, ns, name, query, raw, ctype):
        if verb == "list":
            items = [p for (n, _), p in STATE["pods"].items() if ns in (None, n)]
            return listing("Pod", items, query)
        if verb == "get":
            if (ns, name) not in STATE["pods"]:
                not_found("pods", name)
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
            raise_invalid("Secret", "", key[1], vm.validate_object_meta(meta, "metadata",
                                                                        vm.Errors()))
            data = dict(sec.get("data") or {})
            for k, v in (sec.pop("stringData", None) or {}).items():
                data[k] = base64.b64encode(v.encode()).decode()
            sec["data"] = data
            meta["namespace"] = ns
            if dry_run(query):
                return 201, sec
            meta.update({"uid": new_uid(), "resourceVersion": next_rv()})
            STATE["secrets"][key] = sec
            return 201, copy.deepcopy(sec)
        if (ns, name) not in STATE["secrets"]:
            not_found("secrets", name)
        if verb == "get":
            return 200, copy.deepcopy(STATE["secrets"][(ns, name)])
        if verb == "delete":
            STATE["secrets"].pop((ns, name))
            return deleted("secrets", name)
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    # serviceaccounts and runtimeclasses: what pod admission looks up (controllers.admit_pod)
    def do_serviceaccounts(self, verb, ns, name, query, raw, ctype):
        return self.simple("serviceaccounts", "ServiceAccount", "", verb, ns, name, query, raw)

    def do_namespaces(self, verb, ns, name, query, raw, ctype):
        """Namespaces are kept (so real-server-mode fixtures can create theirs) but not enforced:
        objects may be created in any namespace (NamespaceLifecycle is not modelled)."""
        return self.simple("namespaces", "Namespace", "", verb, None, name, query, raw)

    def do_runtimeclasses(self, verb, ns, name, query, raw, ctype):
        return self.simple("runtimeclasses", "RuntimeClass", "node.k8s.io", verb, None, name,
                           query, raw)

    @staticmethod
    def simple(table, kind, group, verb, ns, name, query, raw):
        key = (ns, name) if ns is not None else name
        if verb == "list":
            items = [o for k, o in STATE[table].items() if ns is None or k[0] == ns]
            return listing(kind, items, query, group + "/v1" if group else "v1")
        if verb == "create":
            obj = json.loads(raw)
            meta = obj.setdefault("metadata", {})
            key = (ns, meta.get("name")) if ns is not None else meta.get("name")
            if key in STATE[table]:
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists'
                               % (table + ("." + group if group else ""), meta.get("name")))
            raise_invalid(kind, group, meta.get("name", ""),
                          vm.validate_object_meta(meta, "metadata", vm.Errors()))
            if ns is not None:
                meta["namespace"] = ns
            if dry_run(query):
                return 201, obj
            meta.update({"uid": new_uid(), "resourceVersion": next_rv(),
                         "creationTimestamp": now()})
            STATE[table][key] = obj
            return 201, copy.deepcopy(obj)
        if key not in STATE[table]:
            not_found(table, name, group)
        if verb == "get":
            return 200, copy.deepcopy(STATE[table][key])
        if verb == "delete":
            STATE[table].pop(key)
            return deleted(table, name, group)
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    # configmaps (the gang gate's per-pod verdicts): create, get, list, patch (merge and
    # strategic merge are the same for a ConfigMap's string maps), delete
    def do_configmaps(self, verb, ns, name, query, raw, ctype):
        if verb == "list":
            items = [c for (n, _), c in STATE["configmaps"].items() if ns in (None, n)]
            return listing("ConfigMap", items, query)
        if verb == "create":
            cm = json.loads(raw)
            meta = cm.setdefault("metadata", {})
            key = (ns, meta.get("name"))
            if key in STATE["configmaps"]:
                raise ApiError(409, "AlreadyExists", 'configmaps "%s" already exists' % key[1])
            self.check_configmap(cm, key[1])
            meta.update({"namespace": ns, "uid": new_uid(), "resourceVersion": next_rv(),
                         "creationTimestamp": now()})
            STATE["configmaps"][key] = cm
            return 201, copy.deepcopy(cm)
        if (ns, name) not in STATE["configmaps"]:
            not_found("configmaps", name)
        cm = STATE["configmaps"][(ns, name)]
        if verb == "get":
            return 200, copy.deepcopy(cm)
        if verb == "delete":
            STATE["configmaps"].pop((ns, name))
            return deleted("configmaps", name)
        if verb != "patch":
            raise ApiError(405, "MethodNotAllowed", "method not allowed")
        result = patched(cm, raw, ctype, merge_strategic=merge_patch)
        if result.get("metadata", {}).get("resourceVersion") != cm["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict", CONFLICT % ("configmaps", name))
        self.check_configmap(result, name)
        if result != cm:
            result["metadata"]["resourceVersion"] = next_rv()
            STATE["configmaps"][(ns, name)] = result
        return 200, copy.deepcopy(STATE["configmaps"][(ns, name)])

    @staticmethod
    def check_configmap(cm, name):
        for v in (cm.get("data") or {}).values():
            if not isinstance(v, str):  # decoding: ConfigMap.data is map[string]string
                raise bad_request("ConfigMap in version \"v1\" cannot be handled as a ConfigMap: "
                                  "json: cannot unmarshal %s into Go struct field ConfigMap.data "
                                  "of type string" % type(v).__name__)
        raise_invalid("ConfigMap", "", name, vm.validate_configmap(cm))

    # jobs
    def do_jobs(self, verb, ns, name, query, raw, ctype):
        if verb == "list":
            items = [j for (n, _), j in STATE["jobs"].items() if ns in (None, n)]
            return listing("Job", items, query, "batch/v1")
        if verb == "create":
            return self.create_job(ns, json.loads(raw), dry_run(query))
        if (ns, name) not in STATE["jobs"]:
            not_found("jobs", name, "batch")
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
                uid = job["metadata"]["uid"]
                for key in [k for k, p in STATE["pods"].items()
                            if p["metadata"]["ownerReferences"][0]["uid"] == uid]:
                    STATE["pods"].pop(key)
            return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                         "status": "Success", "details": {"name": name, "group": "batch",
                                                          "kind": "jobs", "uid": job["metadata"]
                                                          ["uid"]}}
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    @staticmethod
    def create_job(ns, job, dry):
        """Decoding (quantities: 400), defaulting (volumes), the Job strategy's selector and
        labels, then ValidateJob for the fields preflight uses (422), then the Job controller."""
        meta = job.setdefault("metadata", {})
        key = (ns, meta.get("name"))
        spec = job.get("spec", {})
        template = spec.get("template", {})
        tmpl = template.get("spec", {})
        quantity.decode_pod_spec(tmpl, "Job", "v1")
        if key in STATE["jobs"]:
            raise ApiError(409, "AlreadyExists", 'jobs.batch "%s" already exists' % key[1],
                           {"name": key[1], "group": "batch", "kind": "jobs"})
        validation.default_pod_spec(tmpl)
        meta.update({"namespace": ns, "uid": new_uid(), "creationTimestamp": now()})
        if not spec.get("manualSelector"):
            controllers.generate_selector(job)
        errs = vm.validate_object_meta(meta, "metadata", vm.Errors())
        vm.validate_object_meta(template.get("metadata") or {}, "spec.template.metadata", errs)
        # pkg/apis/batch/validation validateJobSpec (restartPolicy defaults to Always).
        if tmpl.get("restartPolicy") not in ("Never", "OnFailure"):
            errs.not_supported("spec.template.spec.restartPolicy",
                               tmpl.get("restartPolicy") or "Always", ["OnFailure", "Never"])
        if spec.get("completionMode") == "Indexed" and spec.get("completions") is None:
            errs.required("spec.completions", "when completion mode is Indexed")
        validation.validate_pod_spec(tmpl, "spec.template.spec", errs)
        raise_invalid("Job", "batch", key[1], errs)
        if dry:
            return 201, job  # validated, not stored (kubectl apply --dry-run=server)
        meta["resourceVersion"] = next_rv()
        STATE["jobs"][key] = job
        controllers.create_job_pods(ns, job)
        return 201, copy.deepcopy(job)
