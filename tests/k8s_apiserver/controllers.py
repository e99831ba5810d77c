"""What the rest of a control plane does around kube-apiserver, as far as preflight depends on it
(tests only). The stand-in plays, synchronously, at the moment a Job is created:
  * the Job controller (k8s.io/kubernetes pkg/controller/job): for an Indexed Job, pod i is named
    `<job>-<i>-<random>` (generateName `<job>-<i>-`, podGenerateNameWithIndex), gets the template's
    labels (with those the Job strategy added: job-name, batch.kubernetes.io/job-name,
    controller-uid, batch.kubernetes.io/controller-uid), the label and annotation
    batch.kubernetes.io/job-completion-index (addCompletionIndexLabel: PodIndexLabel, GA 1.32),
    hostname `<job>-<i>`, env JOB_COMPLETION_INDEX from that label in every container
    (addCompletionIndexEnvVariables), the finalizer batch.kubernetes.io/job-tracking and an owner
    reference. A pod the API server refuses is not created: the controller records a Warning
    Event `FailedCreate` "Error creating: <the refusal>" on the Job
    (pkg/controller/controller_utils.go createPods) and, creating in slow-start batches starting
    at 1 (SlowStartInitialBatchSize), stops at the first refusal;
  * the admission plugins a pod passes (plugin/pkg/admission): ServiceAccount (the pod's service
    account must exist: `pods "<generateName>" is forbidden: error looking up service account
    <ns>/<name>: serviceaccount "<name>" not found`) and RuntimeClass (`pods "<generateName>" is
    forbidden: pod rejected: RuntimeClass "<name>" not found`); the name is the generateName, as
    admission.NewForbidden finds no name yet;
  * kube-scheduler (scheduler.py): bound pods get spec.nodeName and PodScheduled True, pods that
    fit nowhere stay Pending with PodScheduled False and the reasons.
No kubelet: a bound pod stays Pending with no container statuses, as on a real cluster whose
nodes run no kubelet. Tests play the kubelet through POST /_test/pod-status (apiserver.py).
TaintNodesByCondition admission (plugin/pkg/admission/nodetaint) is in resources.py.
"""
import copy
import time

from scheduler import schedule
from state import STATE, forbidden, new_uid, next_rv, now, suffix

INDEX_KEY = "batch.kubernetes.io/job-completion-index"


def record_event(ns, involved, ev_type, reason, message, component):
    """An Event as client-go's recorder writes it (core/v1, no eventTime)."""
    name = "%s.%x" % (involved["name"], time.time_ns())  # client-go: <object>.<UnixNano hex>
    ev = {"apiVersion": "v1", "kind": "Event",
          "metadata": {"name": name, "namespace": ns, "uid": new_uid(),
                       "resourceVersion": next_rv(), "creationTimestamp": now()},
          "involvedObject": involved, "reason": reason, "message": message, "type": ev_type,
          "source": {"component": component}, "count": 1, "firstTimestamp": now(),
          "lastTimestamp": now(), "reportingComponent": component, "reportingInstance": ""}
    STATE["events"][(ns, name)] = ev
    return ev


def generate_selector(job):
    """pkg/registry/batch/job/strategy.go generateSelector (manualSelector unset)."""
    meta = job["metadata"]
    labels = job["spec"]["template"].setdefault("metadata", {}).setdefault("labels", {})
    for key in ("job-name", "batch.kubernetes.io/job-name"):
        labels.setdefault(key, meta["name"])
    for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
        labels.setdefault(key, meta["uid"])
    sel = job["spec"].setdefault("selector", {}).setdefault("matchLabels", {})
    sel.setdefault("batch.kubernetes.io/controller-uid", meta["uid"])


def admit_pod(ns, pod):
    """The ServiceAccount and RuntimeClass admission plugins; a Status error body or None."""
    spec = pod["spec"]
    name = pod["metadata"].get("name") or pod["metadata"].get("generateName", "Unknown")
    sa = spec.setdefault("serviceAccountName", "default")
    if sa != "default" and (ns, sa) not in STATE["serviceaccounts"]:
        return forbidden("pods", "", name, 'error looking up service account %s/%s: '
                         'serviceaccount "%s" not found' % (ns, sa, sa)).response[1]
    rc = spec.get("runtimeClassName")
    if rc and rc not in STATE["runtimeclasses"]:
        return forbidden("pods", "", name, 'pod rejected: RuntimeClass "%s" not found'
                         % rc).response[1]
    return None


def index_pod(ns, job, i):
    """The pod the Job controller asks for at completion index i."""
    meta = job["metadata"]
    template = copy.deepcopy(job["spec"]["template"])
    tmeta = template.get("metadata", {})
    spec = template["spec"]
    for kind in ("initContainers", "containers"):
        for c in spec.get(kind) or []:
            if not any(e.get("name") == "JOB_COMPLETION_INDEX" for e in c.get("env") or []):
                c.setdefault("env", []).append(
                    {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                        "apiVersion": "v1", "fieldPath": "metadata.labels['%s']" % INDEX_KEY}}})
    spec["hostname"] = "%s-%d" % (meta["name"], i)
    generate_name = "%s-%d-" % (meta["name"], i)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"generateName": generate_name, "namespace": ns,
                         "labels": dict(tmeta.get("labels") or {}, **{INDEX_KEY: str(i)}),
                         "annotations": dict(tmeta.get("annotations") or {},
                                             **{INDEX_KEY: str(i)}),
                         "finalizers": ["batch.kubernetes.io/job-tracking"],
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                              "name": meta["name"], "uid": meta["uid"],
                                              "controller": True, "blockOwnerDeletion": True}]},
            "spec": spec}


def create_job_pods(ns, job):
    """Job controller manageJob for a new Job: parallelism pods, index by index, scheduled at
    once; stops at the first pod the API server refuses (slow start)."""
    spec = job["spec"]
    n = min(int(spec.get("completions") or 1), int(spec.get("parallelism") or 1))
    anti = bool(spec["template"]["spec"].get("affinity", {}).get("podAntiAffinity"))
    taken = set()
    involved = {"kind": "Job", "namespace": ns, "name": job["metadata"]["name"],
                "uid": job["metadata"]["uid"], "apiVersion": "batch/v1",
                "resourceVersion": job["metadata"]["resourceVersion"]}
    created = 0
    for i in range(n):
        pod = index_pod(ns, job, i)
        refusal = admit_pod(ns, pod)
        if refusal:
            record_event(ns, involved, "Warning", "FailedCreate",
                         "Error creating: " + refusal["message"], "job-controller")
            break
        pod["metadata"].update({"name": pod["metadata"]["generateName"] + suffix(),
                                "uid": new_uid(), "resourceVersion": next_rv(),
                                "creationTimestamp": now()})
        node, why = schedule(pod, taken)
        if node is None:
            pod["status"] = {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": why, "lastTransitionTime": now()}]}
        else:
            if anti:
                taken.add(node)
            pod["spec"]["nodeName"] = node
            pod["status"] = {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": now()}]}
        STATE["pods"][(ns, pod["metadata"]["name"])] = pod
        record_event(ns, involved, "Normal", "SuccessfulCreate",
                     "Created pod: " + pod["metadata"]["name"], "job-controller")
        created += 1
    job["status"] = {"active": created, "startTime": now(), "ready": 0, "terminating": 0,
                     "uncountedTerminatedPods": {}}
