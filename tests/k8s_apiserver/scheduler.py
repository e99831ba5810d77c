"""The scheduling the stand-in does in kube-scheduler's place (tests only): the filters that decide
where preflight's agent pods may run, worded as kube-scheduler words its FailedScheduling message
(pkg/scheduler/framework/plugins: NodeAffinity, TaintToleration, NodeResourcesFit,
InterPodAffinity; shortened: the real message ends with a "preemption: ..." sentence).
"""
import validation
from state import STATE


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
