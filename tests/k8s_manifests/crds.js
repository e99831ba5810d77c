// Field checks for the two custom resources of the gang-gate examples, written from their API
// definitions (kubernetes-models has no schema for them):
//  * JobSet, jobset.x-k8s.io/v1alpha2: kubernetes-sigs/jobset, api/jobset/v1alpha2/jobset_types.go
//    (reference: site/content/en/docs/reference/jobset.v1alpha2.md): spec.replicatedJobs[] of
//    {name, groupName, template: batch/v1 JobTemplateSpec, replicas, dependsOn}; network
//    {enableDNSHostnames, subdomain, publishNotReadyAddresses}; successPolicy, failurePolicy
//    {maxRestarts, restartStrategy, rules}, startupPolicy, suspend, coordinator, managedBy,
//    ttlSecondsAfterFinished.
//  * PyTorchJob, kubeflow.org/v1: kubeflow/training-operator, pkg/apis/kubeflow.org/v1
//    (pytorch_types.go, common_types.go): spec.pytorchReplicaSpecs {Master, Worker} of
//    {replicas, template: core/v1 PodTemplateSpec, restartPolicy: Always|OnFailure|Never|ExitCode};
//    runPolicy {cleanPodPolicy, ttlSecondsAfterFinished, activeDeadlineSeconds, backoffLimit,
//    schedulingPolicy, suspend, managedBy}; elasticPolicy; nprocPerNode.
// Unknown fields are errors here (the CRDs' structural schemas would drop them silently), and
// the embedded templates are validated with the core schema by the caller's check(apiVersion,
// kind, value, where).
"use strict";

function fail(where, what) {
  throw new Error(`${where}: ${what}`);
}

function keys(obj, allowed, where) {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) fail(where, "must be an object");
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) fail(where, `unknown field "${k}" (allowed: ${allowed.join(", ")})`);
  }
}

function int(value, where, min) {
  if (!Number.isInteger(value) || value < min) fail(where, `must be an integer >= ${min}`);
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function metadata(obj) {
  keys(obj, ["apiVersion", "kind", "metadata", "spec"], obj.kind);
  if (!obj.metadata || !obj.metadata.name || !DNS_LABEL.test(obj.metadata.name)) {
    fail("metadata.name", "required, a DNS-1123 label");
  }
}

function jobSet(obj, check) {
  metadata(obj);
  const spec = obj.spec;
  keys(spec, ["replicatedJobs", "network", "successPolicy", "failurePolicy", "startupPolicy",
              "suspend", "coordinator", "managedBy", "ttlSecondsAfterFinished"], "spec");
  if (!Array.isArray(spec.replicatedJobs) || spec.replicatedJobs.length === 0) {
    fail("spec.replicatedJobs", "required, a non-empty list");
  }
  const names = new Set();
  spec.replicatedJobs.forEach((rj, i) => {
    const where = `spec.replicatedJobs[${i}]`;
    keys(rj, ["name", "groupName", "template", "replicas", "dependsOn"], where);
    if (!rj.name || !DNS_LABEL.test(rj.name)) fail(`${where}.name`, "required, a DNS-1123 label");
    if (names.has(rj.name)) fail(`${where}.name`, `"${rj.name}" given twice`);
    names.add(rj.name);
    if (rj.replicas !== undefined) int(rj.replicas, `${where}.replicas`, 0);
    if (!rj.template) fail(`${where}.template`, "required");
    check("batch/v1", "JobTemplateSpec", rj.template, `${where}.template`);
  });
  if (spec.network) {
    keys(spec.network, ["enableDNSHostnames", "subdomain", "publishNotReadyAddresses"], "spec.network");
  }
  if (spec.failurePolicy) {
    keys(spec.failurePolicy, ["maxRestarts", "restartStrategy", "rules"], "spec.failurePolicy");
    if (spec.failurePolicy.maxRestarts !== undefined) {
      int(spec.failurePolicy.maxRestarts, "spec.failurePolicy.maxRestarts", 0);
    }
  }
  if (spec.successPolicy) {
    keys(spec.successPolicy, ["operator", "targetReplicatedJobs"], "spec.successPolicy");
    if (!["All", "Any"].includes(spec.successPolicy.operator)) {
      fail("spec.successPolicy.operator", "must be All or Any");
    }
  }
}

function pyTorchJob(obj, check) {
  metadata(obj);
  const spec = obj.spec;
  keys(spec, ["pytorchReplicaSpecs", "runPolicy", "elasticPolicy", "nprocPerNode"], "spec");
  const replicas = spec.pytorchReplicaSpecs;
  keys(replicas, ["Master", "Worker"], "spec.pytorchReplicaSpecs");
  if (!replicas.Master && !replicas.Worker) fail("spec.pytorchReplicaSpecs", "needs Master or Worker");
  if (replicas.Master && replicas.Master.replicas !== undefined && replicas.Master.replicas !== 1) {
    fail("spec.pytorchReplicaSpecs.Master.replicas", "must be 1");
  }
  for (const [type, rs] of Object.entries(replicas)) {
    const where = `spec.pytorchReplicaSpecs.${type}`;
    keys(rs, ["replicas", "template", "restartPolicy"], where);
    if (rs.replicas !== undefined) int(rs.replicas, `${where}.replicas`, 0);
    if (rs.restartPolicy !== undefined &&
        !["Always", "OnFailure", "Never", "ExitCode"].includes(rs.restartPolicy)) {
      fail(`${where}.restartPolicy`, "must be Always, OnFailure, Never or ExitCode");
    }
    if (!rs.template) fail(`${where}.template`, "required");
    check("v1", "PodTemplateSpec", rs.template, `${where}.template`);
    // The operator sets MASTER_ADDR, RANK, WORLD_SIZE on the container named "pytorch".
    const names = ((rs.template.spec || {}).containers || []).map((c) => c.name);
    if (!names.includes("pytorch")) fail(`${where}.template.spec.containers`, 'needs one named "pytorch"');
  }
  if (spec.runPolicy) {
    keys(spec.runPolicy, ["cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds",
                          "backoffLimit", "schedulingPolicy", "suspend", "managedBy"], "spec.runPolicy");
  }
}

const VALIDATORS = {
  "jobset.x-k8s.io/v1alpha2 JobSet": jobSet,
  "kubeflow.org/v1 PyTorchJob": pyTorchJob,
};

exports.validator = (apiVersion, kind) => VALIDATORS[`${apiVersion} ${kind}`];
