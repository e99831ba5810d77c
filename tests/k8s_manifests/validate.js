#!/usr/bin/env node
// Validates every document of multi-document YAML on stdin against the Kubernetes OpenAPI schema,
// using the validators the kubernetes-models package generates from the Kubernetes 1.27 OpenAPI
// spec (types, required fields, enums, formats). A kind the package does not know is an error:
// nothing passes unchecked. Prints one line per document; exit 1 when any is invalid.
//
// Two custom resources the gang-gate examples use are checked here as well (crds.js): JobSet
// (jobset.x-k8s.io/v1alpha2) and PyTorchJob (kubeflow.org/v1). Their own fields are checked
// against the fields their APIs define (unknown ones are errors: a CRD's structural schema would
// silently drop them), and the Job and pod templates they embed against the core schema above.
"use strict";
const fs = require("fs");
const YAML = require("yaml");
const crds = require("./crds.js");

const text = fs.readFileSync(0, "utf8");
const docs = YAML.parseAllDocuments(text);
let bad = 0;
let checked = 0;

function model(apiVersion, kind) {
  // core "v1" lives at kubernetes-models/v1, "batch/v1" at kubernetes-models/batch/v1.
  try {
    return require(`kubernetes-models/${apiVersion}/${kind}`)[kind];
  } catch (e) {
    return undefined;
  }
}

for (const doc of docs) {
  if (doc.errors.length) {
    console.log(`INVALID YAML: ${doc.errors[0].message}`);
    bad++;
    continue;
  }
  const obj = doc.toJSON();
  if (obj === null) continue;
  const name = `${obj.kind}/${obj.metadata && obj.metadata.name}`;
  if (!obj.apiVersion || !obj.kind) {
    console.log(`INVALID ${name}: no apiVersion or kind`);
    bad++;
    continue;
  }
  const custom = crds.validator(obj.apiVersion, obj.kind);
  const Model = custom ? null : model(obj.apiVersion, obj.kind);
  if (!custom && typeof Model !== "function") {
    console.log(`UNKNOWN ${name}: no schema for ${obj.apiVersion} ${obj.kind}`);
    bad++;
    continue;
  }
  try {
    if (custom) {
      custom(obj, (apiVersion, kind, value, where) => {
        const M = model(apiVersion, kind);
        try {
          new M(value).validate();
        } catch (e) {
          throw new Error(`${where}: ${e.message}`);
        }
      });
    } else {
      new Model(obj).validate();
    }
    console.log(`valid ${obj.apiVersion} ${name}`);
    checked++;
  } catch (e) {
    console.log(`INVALID ${obj.apiVersion} ${name}: ${e.message}`);
    bad++;
  }
}
console.log(`${checked} valid, ${bad} invalid`);
process.exit(bad === 0 && checked > 0 ? 0 : 1);
