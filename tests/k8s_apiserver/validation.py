"""What kube-apiserver v1.34 validates on the pod spec of a Job (or Pod) it is asked to create, for
the fields preflight's agent pods and their k8s.pod_template use. Each rule follows
k8s.io/kubernetes pkg/apis/core/validation/validation.go (read at commit 000f26050b9b; the rules
used here are unchanged in v1.34) and apimachinery v0.34.0's validators; VALIDATION.md quotes the
excerpts, REAL_SERVER.md lists every rule with its answer. Messages are field.Error's, e.g.
  spec.template.spec.tolerations[0].operator: Invalid value: "Exists": value must be empty when `operator` is 'Exists'
Defaulting (pkg/apis/core/v1/defaults.go) runs before validation: default_pod_spec.
Not covered (the real server checks more): probes, ports, lifecycle, most volume sources' own
fields, ephemeral containers, pod overhead, topology spread, OS-specific fields.
"""
from quantity import canonical, parse_error, parse_quantity
from validation_meta import (Errors, dns1123_label_errors, dns1123_subdomain_errors,
                             invalid_status, label_value_errors, qualified_name_errors)

__all__ = ["Errors", "invalid_status", "default_pod_spec", "validate_pod_spec",
           "is_extended_resource", "parse_quantity"]

TOLERATION_OPERATORS = ["Equal", "Exists"]
TAINT_EFFECTS = ["NoExecute", "NoSchedule", "PreferNoSchedule"]
DNS_POLICIES = ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
# The volume sources a VolumeSource may have (validateVolumeSource counts them).
VOLUME_SOURCES = ("hostPath", "emptyDir", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore",
                  "secret", "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd",
                  "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc", "azureFile",
                  "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk",
                  "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
                  "image")


def is_extended_resource(name):
    """helper.IsExtendedResourceName: not native (no domain, or *kubernetes.io/), not requests.*,
    and requests.<name> a qualified name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def default_pod_spec(spec):
    """SetDefaults_Volume: a volume with no source becomes an emptyDir."""
    for v in spec.get("volumes") or []:
        if isinstance(v, dict) and not any(k in v for k in VOLUME_SOURCES):
            v["emptyDir"] = {}


def validate_resource_name(name, path, errs):
    """validateContainerResourceName."""
    msgs = qualified_name_errors(name)
    for m in msgs:
        errs.invalid(path, name, m)
    if msgs:
        return
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            errs.invalid(path, name, "must be a standard resource for containers")
    elif "kubernetes.io/" not in name and not is_extended_resource(name):
        errs.invalid(path, name, "doesn't follow extended resource name standard")


def validate_resources(res, path, errs):
    """validateResourceRequirements (quantities were decoded already: quantity.py)."""
    if not isinstance(res, dict):
        return
    limits = res.get("limits") or {}
    requests = res.get("requests") or {}
    parsed_limits = {}
    for kind, table in (("limits", limits), ("requests", requests)):
        for name, value in table.items():
            p = "%s.%s[%s]" % (path, kind, name)
            validate_resource_name(name, p, errs)
            parsed = parse_quantity(value)
            if parsed is None:  # only where the body was not decoded first (check_manifests.py)
                errs.invalid(p, value, parse_error(value))
                continue
            amount, integer = parsed
            # ValidateResourceQuantityValue: the bad value is the Quantity, printed canonical.
            if amount < 0:
                errs.invalid(p, canonical(value), "must be greater than or equal to 0")
            if is_extended_resource(name) and not integer:
                errs.invalid(p, canonical(value), "must be an integer")
            if kind == "limits":
                parsed_limits[name] = amount
                continue
            overcommit = not is_extended_resource(name) and not name.startswith("hugepages-")
            if name in parsed_limits:
                equal = abs(amount - parsed_limits[name]) <= 1e-9 * max(1.0, abs(amount))
                if not equal and not overcommit:
                    errs.invalid("%s.requests" % path, canonical(value), "must be equal to %s "
                                 "limit of %s" % (name, canonical(limits[name])))
                elif not equal and amount > parsed_limits[name]:
                    errs.invalid("%s.requests" % path, canonical(value), "must be less than or "
                                 "equal to %s limit of %s" % (name, canonical(limits[name])))
            elif not overcommit:
                errs.required("%s.limits" % path,
                              "Limit must be set for non overcommitable resources")


def validate_tolerations(tolerations, path, errs):
    """ValidateTolerations."""
    for i, t in enumerate(tolerations or []):
        p = "%s[%d]" % (path, i)
        key, op = t.get("key", ""), t.get("operator", "")
        value, effect = t.get("value", ""), t.get("effect", "")
        if key:
            for m in qualified_name_errors(key):
                errs.invalid(p + ".key", key, m)
        if not key and op != "Exists":
            errs.invalid(p + ".operator", op, "operator must be Exists when `key` is empty, which "
                         "means \"match all values and all keys\"")
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.invalid(p + ".effect", effect, "effect must be 'NoExecute' when "
                         "`tolerationSeconds` is set")
        if op in ("Equal", ""):
            for m in label_value_errors(value):
                errs.invalid(p + ".operator", value, m)
        elif op == "Exists":
            if value:
                errs.invalid(p + ".operator", op, "value must be empty when `operator` is 'Exists'")
        else:
            errs.not_supported(p + ".operator", op, TOLERATION_OPERATORS)
        if effect and effect not in TAINT_EFFECTS:
            errs.not_supported(p + ".effect", effect, TAINT_EFFECTS)


def validate_env(env, path, errs):
    """ValidateEnv with AllowRelaxedEnvironmentVariableValidation, on in v1.34
    (RelaxedEnvironmentVariableValidation: alpha 1.30, beta and on by default 1.32, GA and locked
    on 1.34; pkg/features/kube_features.go): a name is any printable ASCII but '='
    (validation.IsRelaxedEnvVarName), so `1NCCL` is accepted."""
    for i, e in enumerate(env or []):
        p = "%s[%d]" % (path, i)
        name = e.get("name", "")
        if not name:
            errs.required(p + ".name")
        elif any(ord(ch) > 126 or ord(ch) < 32 or ch == "=" for ch in name):
            errs.invalid(p + ".name", name, "a valid environment variable name must consist only "
                         "of printable ASCII characters other than '='")
        src = e.get("valueFrom")
        if src is not None:
            n = sum(1 for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
                    if k in src)
            if n == 0:
                errs.invalid(p + ".valueFrom", "", "must specify one of: `fieldRef`, "
                             "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`")
            elif e.get("value"):
                errs.invalid(p + ".valueFrom", "", "may not be specified when `value` is not empty")


def validate_security_context(sc, path, errs):
    """ValidateSecurityContext: capability names are not checked by the API server (any string
    is accepted; the container runtime refuses unknown ones)."""
    if not isinstance(sc, dict) or sc.get("allowPrivilegeEscalation") is not False:
        return
    if sc.get("privileged") is True:
        errs.invalid(path, "SecurityContext", "cannot set `allowPrivilegeEscalation` to false and "
                     "`privileged` to true")
    for cap in (sc.get("capabilities") or {}).get("add") or []:
        if cap == "CAP_SYS_ADMIN":
            errs.invalid(path, "SecurityContext", "cannot set `allowPrivilegeEscalation` to false "
                         "and `capabilities.Add` CAP_SYS_ADMIN")


def validate_volumes(volumes, path, errs):
    """ValidateVolumes + validateVolumeSource (after defaulting, every volume has a source)."""
    names = {}
    for i, v in enumerate(volumes or []):
        p = "%s[%d]" % (path, i)
        name = v.get("name", "")
        if not name:
            errs.required(p + ".name")
        for m in dns1123_label_errors(name) if name else []:
            errs.invalid(p + ".name", name, m)
        if name in names:
            errs.duplicate(p + ".name", name)
        sources = [k for k in VOLUME_SOURCES if k in v]
        if not sources:
            errs.required(p, "must specify a volume type")
        for extra in sources[1:]:
            errs.forbidden("%s.%s" % (p, extra), "may not specify more than 1 volume type")
        names[name] = v
    return names


def validate_container(c, path, volumes, errs):
    if not c.get("name"):
        errs.required(path + ".name")
    else:
        for m in dns1123_label_errors(c["name"]):
            errs.invalid(path + ".name", c["name"], m)
    if not c.get("image"):
        errs.required(path + ".image")
    validate_env(c.get("env"), path + ".env", errs)
    validate_resources(c.get("resources"), path + ".resources", errs)
    mounts = set()
    for i, m in enumerate(c.get("volumeMounts") or []):
        p = "%s.volumeMounts[%d]" % (path, i)
        if not m.get("name"):
            errs.required(p + ".name")
        if m.get("name") not in volumes:
            errs.not_found(p + ".name", m.get("name", ""))
        if not m.get("mountPath"):
            errs.required(p + ".mountPath")
        elif m["mountPath"] in mounts:
            errs.invalid(p + ".mountPath", m["mountPath"], "must be unique")
        mounts.add(m.get("mountPath"))
    validate_security_context(c.get("securityContext"), path + ".securityContext", errs)


def validate_node_selector_requirement(rq, path, errs):
    """ValidateNodeSelectorRequirement (matchExpressions: label keys and values)."""
    op, values = rq.get("operator"), rq.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            errs.required(path + ".values", "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.forbidden(path + ".values", "may not be specified when `operator` is 'Exists' or "
                           "'DoesNotExist'")
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.required(path + ".values", "must be specified single value when `operator` is "
                          "'Lt' or 'Gt'")
    else:
        errs.invalid(path + ".operator", op, "not a valid selector operator")
    for m in qualified_name_errors(rq.get("key", "")):
        errs.invalid(path + ".key", rq.get("key", ""), m)
    for i, v in enumerate(values):
        for m in label_value_errors(v):
            errs.invalid("%s.values[%d]" % (path, i), v, m)


def validate_node_field_requirement(rq, path, errs):
    """ValidateNodeFieldSelectorRequirement (matchFields): only metadata.name, only In/NotIn and
    exactly one value, a node name (a DNS subdomain)."""
    if rq.get("operator") in ("In", "NotIn"):
        if len(rq.get("values") or []) != 1:
            errs.required(path + ".values", "must be only one value when `operator` is 'In' or "
                          "'NotIn' for node field selector")
    else:
        errs.invalid(path + ".operator", rq.get("operator", ""), "not a valid selector operator")
    if rq.get("key") != "metadata.name":
        errs.invalid(path + ".key", rq.get("key", ""), "not a valid field selector key")
    else:
        for i, v in enumerate(rq.get("values") or []):
            for m in dns1123_subdomain_errors(v):
                errs.invalid("%s.values[%d]" % (path, i), v, m)


def validate_affinity(affinity, path, errs):
    """validateAffinity: required node affinity (ValidateNodeSelector: at least one term; each
    term's requirements), preferred terms' weights, required pod (anti-)affinity topology keys."""
    if not isinstance(affinity, dict):
        return
    na = affinity.get("nodeAffinity") or {}
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        tpath = path + ".nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution" \
                       ".nodeSelectorTerms"
        terms = req.get("nodeSelectorTerms") or []
        if not terms:
            errs.required(tpath, "must have at least one node selector term")
        for i, term in enumerate(terms):
            for j, rq in enumerate(term.get("matchExpressions") or []):
                validate_node_selector_requirement(rq, "%s[%d].matchExpressions[%d]"
                                                   % (tpath, i, j), errs)
            for j, rq in enumerate(term.get("matchFields") or []):
                validate_node_field_requirement(rq, "%s[%d].matchFields[%d]" % (tpath, i, j), errs)
    for i, t in enumerate(na.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        if not 1 <= (t.get("weight") or 0) <= 100:
            errs.invalid("%s.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[%d]"
                         ".weight" % (path, i), t.get("weight", 0), "must be in the range 1-100")
    for kind in ("podAffinity", "podAntiAffinity"):
        kpath = "%s.%s.requiredDuringSchedulingIgnoredDuringExecution" % (path, kind)
        for i, t in enumerate((affinity.get(kind) or {})
                              .get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            if not t.get("topologyKey"):
                errs.required("%s[%d].topologyKey" % (kpath, i), "can not be empty")


def validate_pod_spec(spec, path, errs):
    """ValidatePodSpec, for the fields above. restartPolicy is checked by the caller (the Job
    allows Never and OnFailure only)."""
    volumes = validate_volumes(spec.get("volumes"), path + ".volumes", errs)
    if not spec.get("containers"):
        errs.required(path + ".containers")
    seen = set()
    for kind in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(kind) or []):
            p = "%s.%s[%d]" % (path, kind, i)
            validate_container(c, p, volumes, errs)
            if c.get("name") in seen:
                errs.duplicate(p + ".name", c.get("name"))
            seen.add(c.get("name"))
    validate_tolerations(spec.get("tolerations"), path + ".tolerations", errs)
    validate_affinity(spec.get("affinity"), path + ".affinity", errs)
    rc = spec.get("runtimeClassName")
    if rc is not None:
        for m in dns1123_subdomain_errors(rc):
            errs.invalid(path + ".runtimeClassName", rc, m)
    dns = spec.get("dnsPolicy")
    if dns is not None and dns not in DNS_POLICIES:
        errs.not_supported(path + ".dnsPolicy", dns, DNS_POLICIES)
    for k, v in (spec.get("nodeSelector") or {}).items():
        for m in qualified_name_errors(k):
            errs.invalid(path + ".nodeSelector", k, m)
        for m in label_value_errors(v):
            errs.invalid(path + ".nodeSelector", v, m)
    return errs
