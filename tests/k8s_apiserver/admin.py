"""The stand-in's test controls under /_test/ (admin token only; apiserver.py lists them). They
play what a real cluster's other parts would do: a kubelet registering its node and reporting its
pods, another writer racing us, faults on the wire. Called with state.LOCK held.
"""
import json

from state import CONCURRENT, FAULTS, REQUESTS, STATE, ApiError, new_uid, next_rv, now

NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


def new_node(name, labels=None, taints=None, allocatable=None, ready=True):
    """A Node as a kubelet that registered and reports Ready leaves it once the node lifecycle
    controller removed the not-ready taint the TaintNodesByCondition admission put there; with
    ready False, as it is before (Ready False, the taint kept)."""
    meta = {"name": name, "uid": new_uid(), "resourceVersion": next_rv(),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": dict({"kubernetes.io/hostname": name}, **(labels or {}))}
    taints = list(taints or [])
    if not ready and NOT_READY not in taints:
        taints.append(dict(NOT_READY))
    spec = {"taints": taints} if taints else {}
    condition = ({"type": "Ready", "status": "True", "reason": "KubeletReady",
                  "message": "kubelet is posting ready status"} if ready else
                 {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                  "message": "container runtime network not ready"})
    condition.update({"lastHeartbeatTime": now(), "lastTransitionTime": now()})
    resources = {"cpu": "64", "memory": "1Ti", "nvidia.com/gpu": "8", "pods": "110"}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec,
            "status": {"conditions": [condition], "capacity": dict(resources),
                       "allocatable": dict(resources),
                       "addresses": [{"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v1.34.0", "osImage": "Debian GNU/Linux 12",
                                    "containerRuntimeVersion": "containerd://1.7",
                                    "kernelVersion": "6.1", "architecture": "amd64",
                                    "operatingSystem": "linux"}}}
    for k, v in (allocatable or {}).items():  # {"nvidia.com/gpu": "4"}, or None: no such resource
        for table in ("capacity", "allocatable"):
            if v is None:
                node["status"][table].pop(k, None)
            else:
                node["status"][table][k] = v
    return node


def pod_status(data):
    """What the kubelet of data["node"] reports for the pods bound there: a container waiting
    (ImagePullBackOff, ...) or a phase (Running: every container running and ready)."""
    hits = 0
    for pod in STATE["pods"].values():
        if pod["spec"].get("nodeName") != data["node"]:
            continue
        hits += 1
        st = pod.setdefault("status", {})
        containers = pod["spec"].get("containers", [])
        if "waiting" in data:
            st["phase"] = "Pending"
            st["containerStatuses"] = [
                {"name": c["name"], "image": c.get("image", ""), "ready": False,
                 "restartCount": 0, "started": False, "state": {"waiting": data["waiting"]}}
                for c in containers]
        if "phase" in data:
            st["phase"] = data["phase"]
            if data["phase"] == "Running":
                st["startTime"] = now()
                st["containerStatuses"] = [
                    {"name": c["name"], "image": c.get("image", ""), "ready": True,
                     "restartCount": 0, "started": True,
                     "state": {"running": {"startedAt": now()}}} for c in containers]
        pod["metadata"]["resourceVersion"] = next_rv()
    return hits


def admin_request(method, path, raw):
    data = json.loads(raw or b"{}")
    if path == "/_test/nodes" and method == "POST":
        STATE["nodes"][data["name"]] = new_node(data["name"], data.get("labels"),
                                                data.get("taints"), data.get("allocatable"),
                                                data.get("ready", True))
        return 201, STATE["nodes"][data["name"]]
    if path == "/_test/faults" and method == "POST":
        FAULTS.append({"method": data["method"], "path": data["path"],
                       "status": int(data["status"]), "count": int(data.get("count", 1))})
        return 201, {}
    if path == "/_test/concurrent" and method == "POST":
        CONCURRENT[data["node"]] = data["taint"]
        return 201, {}
    if path == "/_test/pod-status" and method == "POST":
        return 200, {"pods": pod_status(data)}
    if path == "/_test/requests" and method == "GET":
        return 200, {"items": REQUESTS}
    raise ApiError(404, "NotFound", "no such test control: " + path)
