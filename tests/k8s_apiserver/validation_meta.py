"""Validation shared by every kind the stand-in stores, worded as Kubernetes v1.34 words it.

Sources (tags of the published staging repositories that ship with Kubernetes v1.34.0):
  k8s.io/apimachinery v0.34.0  pkg/util/validation/validation.go   (IsQualifiedName, ...)
                               pkg/util/validation/field/errors.go  (field.Error, TooLong)
                               pkg/api/validation/objectmeta.go     (ValidateAnnotations: 256 KiB)
                               pkg/apis/meta/v1/validation/validation.go (ValidateLabels)
                               pkg/api/errors/errors.go             (NewInvalid)
  k8s.io/kubernetes pkg/apis/core/validation/validation.go (ValidateConfigMap, MaxSecretSize) and
  events.go (legacyValidateEvent), read at commit 000f26050b9b / 04791b490660.
REAL_SERVER.md lists each rule with its answer; real_answers.json holds them as data.
"""
import json
import re

_QNAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile("^" + _QNAME + "$")
_LABEL_VALUE = "(" + _QNAME + ")?"
_LABEL_VALUE_RE = re.compile("^" + _LABEL_VALUE + "$")
_DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_LABEL_RE = re.compile("^" + _DNS_LABEL + "$")
_DNS_SUBDOMAIN = _DNS_LABEL + "(\\." + _DNS_LABEL + ")*"
_DNS_SUBDOMAIN_RE = re.compile("^" + _DNS_SUBDOMAIN + "$")
_CONFIG_KEY = "[-._a-zA-Z0-9]+"
_CONFIG_KEY_RE = re.compile("^" + _CONFIG_KEY + "$")

QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
             "with an alphanumeric character")
TOTAL_ANNOTATION_SIZE = 256 * (1 << 10)  # TotalAnnotationSizeLimitB
MAX_CONFIGMAP_SIZE = 1 * 1024 * 1024  # core.MaxSecretSize, also the ConfigMap limit


def regex_error(msg, fmt, *examples):
    """validation.RegexError."""
    if not examples:
        return msg + " (regex used for validation is '" + fmt + "')"
    msg += " (e.g. "
    for i, e in enumerate(examples):
        msg += (" or " if i else "") + "'" + e + "', "
    return msg + "regex used for validation is '" + fmt + "')"


def max_len_error(n):
    return "must be no more than %d characters" % n


def qualified_name_errors(value):
    """validation.IsQualifiedName (label keys, annotation keys, taint keys)."""
    errs = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain_errors(prefix)]
    else:
        return ["a qualified name " + regex_error(QNAME_MSG, _QNAME, "MyName", "my.name",
                                                  "123-abc") +
                " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _QNAME_RE.match(name):
        errs.append("name part " + regex_error(QNAME_MSG, _QNAME, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value):
    """validation.IsValidLabelValue."""
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(regex_error("a valid label must be an empty string or consist of alphanumeric "
                                "characters, '-', '_' or '.', and must start and end with an "
                                "alphanumeric character", _LABEL_VALUE, "MyValue", "my_value",
                                "12345"))
    return errs


def dns1123_label_errors(value):
    errs = [max_len_error(63)] if len(value) > 63 else []
    if not _DNS_LABEL_RE.match(value):
        if _DNS_SUBDOMAIN_RE.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error("a lowercase RFC 1123 label must consist of lower case "
                                    "alphanumeric characters or '-', and must start and end with "
                                    "an alphanumeric character", _DNS_LABEL, "my-name", "123-abc"))
    return errs


def dns1123_subdomain_errors(value):
    errs = [max_len_error(253)] if len(value) > 253 else []
    if not _DNS_SUBDOMAIN_RE.match(value):
        errs.append(regex_error("a lowercase RFC 1123 subdomain must consist of lower case "
                                "alphanumeric characters, '-' or '.', and must start and end with "
                                "an alphanumeric character", _DNS_SUBDOMAIN, "example.com"))
    return errs


def config_map_key_errors(value):
    """validation.IsConfigMapKey."""
    errs = [max_len_error(253)] if len(value) > 253 else []
    if not _CONFIG_KEY_RE.match(value):
        errs.append(regex_error("a valid config key must consist of alphanumeric characters, "
                                "'-', '_' or '.'", _CONFIG_KEY, "key.name", "KEY_NAME", "key-name"))
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def q(value):
    """How field.Error prints a bad value: strings quoted (%q), simple types as %v, others JSON."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


class Errors(list):
    """A field.ErrorList: (type, field, body) where body is what ErrorBody() prints."""

    def add(self, kind, path, body):
        self.append((kind, path, body))

    def invalid(self, path, value, detail):
        self.add("FieldValueInvalid", path, "Invalid value: %s: %s" % (q(value), detail))

    def required(self, path, detail=""):
        self.add("FieldValueRequired", path, "Required value" + (": " + detail if detail else ""))

    def forbidden(self, path, detail):
        self.add("FieldValueForbidden", path, "Forbidden: " + detail)

    def not_supported(self, path, value, supported):
        self.add("FieldValueNotSupported", path, "Unsupported value: %s: supported values: %s"
                 % (q(value), ", ".join(json.dumps(s) for s in supported)))

    def not_found(self, path, value):
        self.add("FieldValueNotFound", path, "Not found: %s" % q(value))

    def duplicate(self, path, value):
        self.add("FieldValueDuplicate", path, "Duplicate value: %s" % q(value))

    def too_long(self, path, max_bytes):
        self.add("FieldValueTooLong", path, "Too long: may not be more than %d bytes" % max_bytes)

    def texts(self):
        return ["%s: %s" % (path, body) for _, path, body in self]


def invalid_status(kind, group, name, errs):
    """apierrors.NewInvalid: 422, reason Invalid, message `<Kind>[.<group>] "<name>" is invalid:
    <errors>` (one error as is, several as `[e1, e2]`), a cause per error."""
    causes = []
    for kind_, path, body in errs:
        cause = {"reason": kind_, "message": body}
        if path:
            cause["field"] = path
        causes.append(cause)
    texts = errs.texts()
    text = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    details = {"name": name, "kind": kind, "causes": causes}
    if group:
        details["group"] = group
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": '%s%s "%s" is invalid: %s' % (kind, "." + group if group else "", name,
                                                      text),
            "reason": "Invalid", "details": details, "code": 422}


def validate_labels(labels, path, errs):
    """ValidateLabels: keys are qualified names, values label values (path has no key)."""
    for k, v in (labels or {}).items():
        for m in qualified_name_errors(k):
            errs.invalid(path, k, m)
        for m in label_value_errors(v if isinstance(v, str) else str(v)):
            errs.invalid(path, v, m)


def validate_annotations(annotations, path, errs):
    """ValidateAnnotations: keys are qualified names (lower-cased), their total size (keys and
    values) at most 256 KiB."""
    total = 0
    for k, v in (annotations or {}).items():
        for m in qualified_name_errors(k.lower()):
            errs.invalid(path, k, m)
        total += len(k.encode()) + len(str(v).encode())
    if total > TOTAL_ANNOTATION_SIZE:
        errs.too_long(path, TOTAL_ANNOTATION_SIZE)


def validate_object_meta(meta, path, errs):
    """The labels and annotations part of ValidateObjectMeta / ValidateObjectMetaUpdate."""
    validate_labels(meta.get("labels"), path + ".labels", errs)
    validate_annotations(meta.get("annotations"), path + ".annotations", errs)
    return errs


def validate_configmap(cm):
    """ValidateConfigMap: keys IsConfigMapKey (`data[<key>]`), data and binaryData together at
    most 1 MiB (an error on the whole object: field path "" prints as "[]")."""
    errs = validate_object_meta(cm.get("metadata") or {}, "metadata", Errors())
    total = 0
    for bag in ("data", "binaryData"):
        for k, v in (cm.get(bag) or {}).items():
            for m in config_map_key_errors(k):
                errs.invalid("%s[%s]" % (bag, k), k, m)
            total += len(v.encode()) if isinstance(v, str) else 0
    if total > MAX_CONFIGMAP_SIZE:
        errs.too_long("[]", MAX_CONFIGMAP_SIZE)
    return errs


def validate_event(ev, namespace):
    """legacyValidateEvent, all that applies to core/v1 Events: no reason or message is required;
    an Event about a cluster-scoped object (involvedObject.namespace empty, e.g. a Node) lives in
    "" or `default`, any other's in its object's namespace."""
    errs = Errors()
    involved = ev.get("involvedObject") or {}
    inv_ns = involved.get("namespace", "")
    if not ev.get("eventTime"):
        if not inv_ns:
            if namespace not in ("", "default"):
                errs.invalid("involvedObject.namespace", inv_ns, "does not match event.namespace")
        elif namespace != inv_ns:
            errs.invalid("involvedObject.namespace", inv_ns, "does not match event.namespace")
    else:
        if not inv_ns and namespace not in ("default", "kube-system"):
            errs.invalid("involvedObject.namespace", inv_ns, "does not match event.namespace")
        for f in ("reportingController", "reportingInstance", "action", "reason"):
            if not ev.get(f):
                errs.required(f)
    for m in dns1123_subdomain_errors(namespace):
        errs.invalid("namespace", namespace, m)
    return errs
