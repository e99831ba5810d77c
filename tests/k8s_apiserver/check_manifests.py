#!/usr/bin/env python3
"""Every shipped manifest and the agent Jobs `preflight run --launcher k8s --dry-run` prints, held
to the API server rules the stand-in implements (REAL_SERVER.md): each pod template (Job, CronJob,
DaemonSet, JobSet, PyTorchJob) is decoded (quantities), defaulted and validated as kube-apiserver
v1.34 validates a pod spec, node affinity's one-value rule for node field selectors included;
Jobs also by the Job rules, ConfigMaps by theirs, every object's labels and annotations. The
dry-run Jobs are for 4 and 512 nodes, with and without a pod template that has required
node-affinity terms, and must stay under the etcd object limit (1.5 MiB).
usage: check_manifests.py MANIFESTS_DIR PREFLIGHT_BINARY
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import yaml

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quantity  # noqa: E402
import validation  # noqa: E402
import validation_meta as vm  # noqa: E402
from state import ApiError  # noqa: E402

ETCD_LIMIT = 1572864  # etcd's default --max-request-bytes (1.5 MiB)
TEMPLATE = """checks: [link.netdev, collective.nccl_allreduce]
k8s:
  image: registry.example/preflight:1
  gpus_per_node: 8
  pod_template:
    spec:
      runtimeClassName: nvidia
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [H100]}]
              - matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [H200]}]
      containers:
        - name: agent
          resources: {limits: {rdma/rdma_shared_device_a: 1, memory: 64Gi}}
          env: [{name: NCCL_IB_HCA, value: mlx5}]
"""


def pod_templates(obj):
    """(where, pod template, restartPolicy rule) for each pod template in obj."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == "Job":
        yield "spec.template", spec.get("template"), "job"
    elif kind == "CronJob":
        yield "spec.jobTemplate.spec.template", spec["jobTemplate"]["spec"]["template"], "job"
    elif kind in ("DaemonSet", "Deployment", "StatefulSet"):
        yield "spec.template", spec.get("template"), "always"
    elif kind == "JobSet":
        for i, rj in enumerate(spec.get("replicatedJobs") or []):
            yield ("spec.replicatedJobs[%d].template.spec.template" % i,
                   rj["template"]["spec"]["template"], "job")
    elif kind == "PyTorchJob":
        for role, rs in (spec.get("pytorchReplicaSpecs") or {}).items():
            yield "spec.pytorchReplicaSpecs.%s.template" % role, rs["template"], None


def check(obj, kind_version):
    """The error texts kube-apiserver would answer for obj (empty: accepted)."""
    errs = vm.validate_object_meta(obj.get("metadata") or {}, "metadata", vm.Errors())
    if obj.get("kind") == "ConfigMap":
        errs += vm.validate_configmap(obj)
    out = []
    for where, template, rule in pod_templates(obj):
        spec = template.get("spec") or {}
        try:
            quantity.decode_pod_spec(spec, obj["kind"], kind_version)
        except ApiError as e:
            out.append(e.response[1]["message"])
            continue
        validation.default_pod_spec(spec)
        vm.validate_object_meta(template.get("metadata") or {}, where + ".metadata", errs)
        validation.validate_pod_spec(spec, where + ".spec", errs)
        policy = spec.get("restartPolicy") or "Always"
        if rule == "job" and policy not in ("Never", "OnFailure"):
            errs.not_supported(where + ".spec.restartPolicy", policy, ["OnFailure", "Never"])
    return out + errs.texts()


def dry_run_jobs(preflight, work):
    """The agent Jobs of `preflight run --launcher k8s --dry-run`, as (label, Job)."""
    plain = os.path.join(work, "plain.yaml")
    with open(plain, "w") as f:
        f.write("checks: [link.netdev]\nk8s: {image: registry.example/preflight:1}\n")
    gpu = os.path.join(work, "gpu.yaml")
    with open(gpu, "w") as f:
        f.write(TEMPLATE)
    for config in (plain, gpu):
        for nodes in ("gpu[001-004]", "gpu[001-512]"):
            out = subprocess.run([preflight, "--log-level", "error", "run", "--launcher", "k8s",
                                  "--dry-run", "--nodes", nodes, "--config", config,
                                  "--advertise", "10.0.0.5", "--port", "7070"],
                                 check=True, capture_output=True, text=True, timeout=120).stdout
            for doc in yaml.safe_load_all(out):
                if doc and doc.get("kind") == "Job":
                    yield "dry run %s %s" % (os.path.basename(config), nodes), doc


def main():
    manifests, preflight = sys.argv[1], sys.argv[2]
    bad = 0
    checked = 0
    for path in sorted(glob.glob(os.path.join(manifests, "**", "*.yaml"), recursive=True)):
        if os.path.basename(path) == "kustomization.yaml" or "/skus/" in path:
            continue
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        for doc in docs:
            errors = check(doc, doc.get("apiVersion", "v1").split("/")[-1])
            checked += 1
            name = "%s %s/%s" % (os.path.relpath(path, manifests), doc.get("kind"),
                                 (doc.get("metadata") or {}).get("name"))
            print(("INVALID " if errors else "ok      ") + name)
            for e in errors:
                print("    " + e)
            bad += bool(errors)
    with tempfile.TemporaryDirectory(prefix="pf-manifests-") as work:
        for label, job in dry_run_jobs(preflight, work):
            errors = check(job, "v1")
            size = len(json.dumps(job, separators=(",", ":")))
            if size > ETCD_LIMIT:
                errors.append("%d bytes: over etcd's %d" % (size, ETCD_LIMIT))
            checked += 1
            terms = (job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
                     ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"])
            print("%s %s: %d node-affinity terms, %d bytes"
                  % ("INVALID" if errors else "ok     ", label, len(terms), size))
            for e in errors:
                print("    " + e)
            bad += bool(errors)
    print("%d objects checked, %d invalid" % (checked, bad))
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
