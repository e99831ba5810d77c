"""What kube-apiserver validates on the pod spec of a Job (or Pod) it is asked to create, for the
fields preflight's agent pods and their k8s.pod_template use. Each rule follows
k8s.io/kubernetes pkg/apis/core/validation/validation.go (and apimachinery's validators); the
excerpts relied on, with their sources, are in VALIDATION.md next to this file. Error strings are
written the way field.Error.Error() prints them, e.g.
  spec.template.spec.tolerations[0].operator: Invalid value: "Exists": value must be empty when `operator` is 'Exists'
Not covered (the real server checks more): probes, ports, lifecycle, most volume sources' own
fields, ephemeral containers, pod overhead, topology spread, OS-specific fields.
"""
import json
import re

# apimachinery/pkg/util/validation/validation.go
_QNAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_ENV_VAR_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
# apimachinery/pkg/api/resource/quantity.go: splitREString, then the suffix must be one it knows.
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
_SUFFIXES = {"Ki": (2, 10), "Mi": (2, 20), "Gi": (2, 30), "Ti": (2, 40), "Pi": (2, 50),
             "Ei": (2, 60), "n": (10, -9), "u": (10, -6), "m": (10, -3), "": (10, 0),
             "k": (10, 3), "M": (10, 6), "G": (10, 9), "T": (10, 12), "P": (10, 15),
             "E": (10, 18)}
QUANTITY_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

TOLERATION_OPERATORS = ["Equal", "Exists"]
TAINT_EFFECTS = ["NoExecute", "NoSchedule", "PreferNoSchedule"]
DNS_POLICIES = ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def q(value):
    """%q as Go prints a string value in field errors."""
    return json.dumps(value) if isinstance(value, str) else json.dumps(str(value))


class Errors(list):
    def invalid(self, path, value, detail):
        self.append("%s: Invalid value: %s: %s" % (path, q(value), detail))

    def required(self, path, detail=""):
        self.append("%s: Required value%s" % (path, ": " + detail if detail else ""))

    def not_supported(self, path, value, supported):
        self.append("%s: Unsupported value: %s: supported values: %s"
                    % (path, q(value), ", ".join(q(s) for s in supported)))

    def not_found(self, path, value):
        self.append("%s: Not found: %s" % (path, q(value)))

    def duplicate(self, path, value):
        self.append("%s: Duplicate value: %s" % (path, q(value)))


def is_qualified_name(name):
    if not isinstance(name, str) or not name:
        return False
    if "/" in name:
        prefix, name = name.split("/", 1)
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
    return 0 < len(name) <= 63 and bool(_QNAME_PART.match(name))


def is_label_value(value):
    return isinstance(value, str) and len(value) <= 63 and bool(_LABEL_VALUE.match(value))


def is_dns1123_label(name):
    return isinstance(name, str) and 0 < len(name) <= 63 and bool(_DNS1123_LABEL.match(name))


def is_dns1123_subdomain(name):
    return isinstance(name, str) and 0 < len(name) <= 253 and bool(_DNS1123_SUBDOMAIN.match(name))


def parse_quantity(value):
    """(amount as a float, is an integer) or None; JSON numbers are quantities too (Quantity's
    UnmarshalJSON parses the text of a number)."""
    if isinstance(value, bool):
        return None
    text = json.dumps(value) if isinstance(value, (int, float)) else value
    if not isinstance(text, str):
        return None
    text = text.strip()
    m = _QUANTITY.match(text)
    if not m:
        return None
    number, suffix = m.group(1), m.group(2)
    if number.count(".") > 1 or number.strip("+-") in (".", ""):
        return None
    if suffix in _SUFFIXES:
        base, exp = _SUFFIXES[suffix]
    elif re.match(r"^[eE][-+]?[0-9]+$", suffix):
        base, exp = 10, int(suffix[1:])
    else:
        return None
    amount = float(number) * (base ** exp)
    # MilliValue() % 1000 == 0, MilliValue rounding up.
    milli = amount * 1000
    integer = abs(milli - round(milli)) < 1e-9 and round(milli) % 1000 == 0
    return amount, integer


def is_extended_resource(name):
    # helper.IsExtendedResourceName: not native (no domain, or *kubernetes.io/), not requests.*
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def validate_resource_name(name, path, errs):
    # validateContainerResourceName
    if not is_qualified_name(name):
        errs.invalid(path, name, "name part must consist of alphanumeric characters, '-', '_' or "
                     "'.', and must start and end with an alphanumeric character")
        return
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            errs.invalid(path, name, "must be a standard resource for containers")
    elif "kubernetes.io/" not in name and not is_extended_resource(name):
        errs.invalid(path, name, "doesn't follow extended resource name standard")


def validate_resources(res, path, errs):
    """ValidateContainerResourceRequirements."""
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
            if parsed is None:
                errs.invalid(p, value, QUANTITY_ERROR)
                continue
            amount, integer = parsed
            if amount < 0:
                errs.invalid(p, value, "must be greater than or equal to 0")
            if is_extended_resource(name) and not integer:
                errs.invalid(p, value, "must be an integer")
            if kind == "limits":
                parsed_limits[name] = amount
            else:
                overcommit = not is_extended_resource(name) and not name.startswith("hugepages-")
                if name in parsed_limits:
                    # Quantity.Cmp compares exact amounts: 8 == 8000m.
                    equal = abs(amount - parsed_limits[name]) <= 1e-9 * max(1.0, abs(amount))
                    if not equal and not overcommit:
                        errs.invalid("%s.requests" % path, value,
                                     "must be equal to %s limit of %s" % (name, limits[name]))
                    elif not equal and amount > parsed_limits[name]:
                        errs.invalid("%s.requests" % path, value,
                                     "must be less than or equal to %s limit of %s"
                                     % (name, limits[name]))
                elif not overcommit:
                    errs.required("%s.limits" % path,
                                  "Limit must be set for non overcommitable resources")


def validate_tolerations(tolerations, path, errs):
    """ValidateTolerations."""
    for i, t in enumerate(tolerations or []):
        p = "%s[%d]" % (path, i)
        key, op, value, effect = t.get("key", ""), t.get("operator", ""), t.get("value", ""), t.get("effect", "")
        if key and not is_qualified_name(key):
            errs.invalid(p + ".key", key, "name part must consist of alphanumeric characters, '-', "
                         "'_' or '.', and must start and end with an alphanumeric character")
        if not key and op != "Exists":
            errs.invalid(p + ".operator", op, "operator must be Exists when `key` is empty, which "
                         "means \"match all values and all keys\"")
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.invalid(p + ".effect", effect, "effect must be 'NoExecute' when "
                         "`tolerationSeconds` is set")
        if op in ("Equal", ""):
            if not is_label_value(value):
                errs.invalid(p + ".operator", value, "a valid label must be an empty string or "
                             "consist of alphanumeric characters, '-', '_' or '.'")
        elif op == "Exists":
            if value:
                errs.invalid(p + ".operator", op, "value must be empty when `operator` is 'Exists'")
        else:
            errs.not_supported(p + ".operator", op, TOLERATION_OPERATORS)
        if effect and effect not in TAINT_EFFECTS:
            errs.not_supported(p + ".effect", effect, TAINT_EFFECTS)


def validate_env(env, path, errs):
    """ValidateEnv (strict names: IsEnvVarName)."""
    for i, e in enumerate(env or []):
        p = "%s[%d]" % (path, i)
        name = e.get("name", "")
        if not name:
            errs.required(p + ".name")
        elif not _ENV_VAR_NAME.match(name):
            errs.invalid(p + ".name", name, "a valid environment variable name must consist of "
                         "alphabetic characters, digits, '_', '-', or '.', and must not start with "
                         "a digit")
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
    if not isinstance(sc, dict):
        return
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged") is True:
            errs.invalid(path, "SecurityContext", "cannot set `allowPrivilegeEscalation` to false "
                         "and `privileged` to true")
        for cap in (sc.get("capabilities") or {}).get("add") or []:
            if cap == "CAP_SYS_ADMIN":
                errs.invalid(path, "SecurityContext", "cannot set `allowPrivilegeEscalation` to "
                             "false and `capabilities.Add` CAP_SYS_ADMIN")


VOLUME_SOURCES = ("hostPath", "emptyDir", "secret", "configMap", "persistentVolumeClaim",
                  "projected", "downwardAPI", "csi", "ephemeral", "nfs", "image")


def validate_volumes(volumes, path, errs):
    names = {}
    for i, v in enumerate(volumes or []):
        p = "%s[%d]" % (path, i)
        name = v.get("name", "")
        if not name:
            errs.required(p + ".name")
        elif not is_dns1123_label(name):
            errs.invalid(p + ".name", name, "a lowercase RFC 1123 label must consist of lower case "
                         "alphanumeric characters or '-', and must start and end with an "
                         "alphanumeric character")
        elif name in names:
            errs.duplicate(p + ".name", name)
        sources = [k for k in v if k != "name"]
        if not sources:
            errs.required(p, "must specify a volume type")
        elif len(sources) > 1:
            errs.append("%s.%s: Forbidden: may not specify more than 1 volume type" % (p, sources[1]))
        names[name] = v
        empty = v.get("emptyDir")
        if isinstance(empty, dict) and "sizeLimit" in empty and parse_quantity(empty["sizeLimit"]) is None:
            errs.invalid(p + ".emptyDir.sizeLimit", empty["sizeLimit"], QUANTITY_ERROR)
    return names


def validate_container(c, path, volumes, errs):
    if not c.get("name"):
        errs.required(path + ".name")
    elif not is_dns1123_label(c["name"]):
        errs.invalid(path + ".name", c["name"], "a lowercase RFC 1123 label must consist of lower "
                     "case alphanumeric characters or '-'")
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


def validate_pod_spec(spec, path, errs):
    """ValidatePodSpec, for the fields above. restartPolicy is checked by the caller (the Job
    allows Never and OnFailure only)."""
    volumes = validate_volumes(spec.get("volumes"), path + ".volumes", errs)
    containers = spec.get("containers") or []
    if not containers:
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
    rc = spec.get("runtimeClassName")
    if rc is not None and not is_dns1123_subdomain(rc):
        errs.invalid(path + ".runtimeClassName", rc, "a lowercase RFC 1123 subdomain must consist "
                     "of lower case alphanumeric characters, '-' or '.', and must start and end "
                     "with an alphanumeric character")
    dns = spec.get("dnsPolicy")
    if dns is not None and dns not in DNS_POLICIES:
        errs.not_supported(path + ".dnsPolicy", dns, DNS_POLICIES)
    for k, v in (spec.get("nodeSelector") or {}).items():
        if not is_qualified_name(k):
            errs.invalid(path + ".nodeSelector", k, "name part must consist of alphanumeric "
                         "characters, '-', '_' or '.'")
        if not is_label_value(v):
            errs.invalid(path + ".nodeSelector", v, "a valid label must be an empty string or "
                         "consist of alphanumeric characters, '-', '_' or '.'")
    return errs


def invalid_status(kind, group, name, errs):
    """The 422 Status body kube-apiserver answers (apierrors.NewInvalid)."""
    causes = []
    for e in errs:
        fld, _, msg = e.partition(": ")
        reason = ("FieldValueRequired" if msg.startswith("Required") else
                  "FieldValueNotSupported" if msg.startswith("Unsupported") else
                  "FieldValueNotFound" if msg.startswith("Not found") else
                  "FieldValueDuplicate" if msg.startswith("Duplicate") else
                  "FieldValueForbidden" if msg.startswith("Forbidden") else "FieldValueInvalid")
        causes.append({"reason": reason, "message": msg, "field": fld})
    text = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
    qualified = kind + ("." + group if group else "")
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": '%s "%s" is invalid: %s' % (qualified, name, text), "reason": "Invalid",
            "details": {"name": name, "group": group, "kind": kind, "causes": causes},
            "code": 422}
