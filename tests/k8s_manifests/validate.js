#!/usr/bin/env node
// Validates every document of multi-document YAML on stdin against the Kubernetes OpenAPI schema,
// using the validators the kubernetes-models package generates from the Kubernetes 1.27 OpenAPI
// spec (types, required fields, enums, formats). A kind the package does not know is an error:
// nothing passes unchecked. Prints one line per document; exit 1 when any is invalid.
"use strict";
const fs = require("fs");
const YAML = require("yaml");

const text = fs.readFileSync(0, "utf8");
const docs = YAML.parseAllDocuments(text);
let bad = 0;
let checked = 0;
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
  // core "v1" lives at kubernetes-models/v1, "batch/v1" at kubernetes-models/batch/v1.
  let Model;
  try {
    Model = require(`kubernetes-models/${obj.apiVersion}/${obj.kind}`)[obj.kind];
  } catch (e) {
    Model = undefined;
  }
  if (typeof Model !== "function") {
    console.log(`UNKNOWN ${name}: no schema for ${obj.apiVersion} ${obj.kind}`);
    bad++;
    continue;
  }
  try {
    new Model(obj).validate();
    console.log(`valid ${obj.apiVersion} ${name}`);
    checked++;
  } catch (e) {
    console.log(`INVALID ${obj.apiVersion} ${name}: ${e.message}`);
    bad++;
  }
}
console.log(`${checked} valid, ${bad} invalid`);
process.exit(bad === 0 && checked > 0 ? 0 : 1);
