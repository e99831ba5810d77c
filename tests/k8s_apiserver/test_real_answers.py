#!/usr/bin/env python3
"""Holds the API server stand-in to real_answers.json: sends each recorded request and compares
the status code, Status reason, message and causes (field, reason, message) with what the real
kube-apiserver v1.34 answers (written from its source; REAL_SERVER.md), and the effects the table
names (defaulted fields, a FailedCreate Event, no pod, a pod's labels).

With KUBECONFIG set the same requests go to that server instead (real-server mode: its
current context, through `kubectl config view --raw --minify`); the namespace `preflight` is
created when missing and what each entry created is deleted. Entries marked `needs` depend on
parts a bare kube-apiserver lacks (a controller manager, a scheduler, anonymous auth); their
failures against such a server say so.
usage: test_real_answers.py [-v] [-k PATTERN]
"""
import base64
import copy
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "real_answers.json")) as _f:
    TABLE = json.load(_f)
TOKEN = "answers-token-0123456789"


def merged(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merged(out.get(k), v)
    return out


def expand(obj, name):
    """$NAME, {"$base", "$merge"} and {"$repeat", "times"} of the table's notation."""
    if isinstance(obj, str):
        return obj.replace("$NAME", name)
    if isinstance(obj, list):
        return [expand(v, name) for v in obj]
    if isinstance(obj, dict):
        if "$repeat" in obj:
            return obj["$repeat"] * obj["times"]
        if "$base" in obj:
            return expand(merged(TABLE["bases"][obj["$base"]], obj.get("$merge") or {}), name)
        return {k: expand(v, name) for k, v in obj.items()}
    return obj


def pointer(doc, ptr):
    """RFC 6901; KeyError when the path is not there."""
    cur = doc
    for part in ptr.lstrip("/").split("/") if ptr else []:
        part = part.replace("~1", "/").replace("~0", "~")
        cur = cur[int(part)] if isinstance(cur, list) else cur[part]
    return cur


class Server:
    """The stand-in, started here with its own CA, or the server KUBECONFIG names."""

    def __init__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="pf-answers-")
        self.proc = None
        self.real = bool(os.environ.get("KUBECONFIG"))
        self.headers = {}
        if self.real:
            self.connect_real()
        else:
            self.start_standin()

    def start_standin(self):
        d = self.dir.name
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", d + "/key.pem",
                        "-out", d + "/cert.pem", "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
        port_file = d + "/port"
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "apiserver.py"), "--cert", d + "/cert.pem",
             "--key", d + "/key.pem", "--token", TOKEN, "--admin-token", "admin-" + TOKEN,
             "--port-file", port_file], env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        for _ in range(100):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        with open(port_file) as f:
            self.host, self.port = "127.0.0.1", int(f.read())
        self.ctx = ssl.create_default_context(cafile=d + "/cert.pem")
        self.headers = {"Authorization": "Bearer " + TOKEN}

    def connect_real(self):
        out = subprocess.run(["kubectl", "config", "view", "--raw", "--minify", "-o", "json"],
                             check=True, capture_output=True, text=True).stdout
        cfg = json.loads(out)
        cluster = cfg["clusters"][0]["cluster"]
        user = cfg["users"][0]["user"]
        url = cluster["server"].split("://", 1)[1]
        self.host, _, port = url.partition(":")
        self.port = int(port.split("/")[0] or 443)
        ca = cluster.get("certificate-authority")
        if cluster.get("certificate-authority-data"):
            ca = self.write("ca.pem", cluster["certificate-authority-data"])
        self.ctx = ssl.create_default_context(cafile=ca)
        if user.get("client-certificate-data") or user.get("client-certificate"):
            cert = user.get("client-certificate") or self.write(
                "cert.pem", user["client-certificate-data"])
            key = user.get("client-key") or self.write("key.pem", user["client-key-data"])
            self.ctx.load_cert_chain(cert, key)
        if user.get("token"):
            self.headers = {"Authorization": "Bearer " + user["token"]}
        self.request("POST", "/api/v1/namespaces",
                     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "preflight"}})

    def write(self, name, b64):
        path = os.path.join(self.dir.name, name)
        with open(path, "wb") as f:
            f.write(base64.b64decode(b64))
        return path

    def request(self, method, path, body=None, auth="token", content_type="application/json"):
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
        headers = {"Accept": "application/json"}
        if auth == "token":
            headers.update(self.headers)
        elif auth == "bad":
            headers["Authorization"] = "Bearer not-a-token-of-this-server"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        conn.close()
        try:
            return resp.status, json.loads(raw or b"{}")
        except ValueError:
            return resp.status, {"raw": raw.decode(errors="replace")}

    def close(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(5)
        self.dir.cleanup()


SERVER = None


def causes_of(body):
    return sorted((c.get("field", ""), c.get("reason", ""), c.get("message", ""))
                  for c in (body.get("details") or {}).get("causes") or [])


class RealAnswers(unittest.TestCase):
    maxDiff = None

    def check(self, code, body, expect, name, where):
        self.assertEqual(code, expect["code"], "%s: %s" % (where, json.dumps(body)[:2000]))
        for key in ("reason", "message"):
            if key in expect:
                self.assertEqual(body.get(key), expand(expect[key], name), where)
        if "causes" in expect:
            want = sorted((c.get("field", ""), c["reason"], expand(c["message"], name))
                          for c in expect["causes"])
            self.assertEqual(causes_of(body), want, where)
        for ptr, value in (expect.get("body_has") or {}).items():
            self.assertEqual(pointer(body, expand(ptr, name)), expand(value, name),
                             "%s: %s" % (where, ptr))
        items = body.get("items")
        if "items" in expect:
            self.assertEqual(len(items), expect["items"], "%s: %s" % (where, json.dumps(items)))
        if "items_have" in expect:
            def has_all(item):
                try:
                    return all(pointer(item, p) == expand(v, name)
                               for p, v in expect["items_have"].items())
                except (KeyError, IndexError, TypeError):
                    return False
            self.assertTrue(any(has_all(i) for i in items or []),
                            "%s: no item has %s in %s" % (where, expect["items_have"],
                                                          json.dumps(items)[:3000]))

    def run_entry(self, entry):
        name = "pf-" + entry["id"]
        req = entry["request"]
        try:
            for step in entry.get("setup", []):
                code, body = SERVER.request(step["method"], expand(step["path"], name),
                                            expand(step.get("body"), name),
                                            content_type=step.get("content_type",
                                                                  "application/json"))
                self.assertLess(code, 300, "setup %s: %s" % (step["path"], body))
            code, body = SERVER.request(req["method"], expand(req["path"], name),
                                        expand(req.get("body"), name), req.get("auth", "token"))
            self.check(code, body, entry["expect"], name, entry["id"])
            for then in entry.get("then", []):
                deadline = time.time() + then.get("eventually_s", 0)
                while True:
                    r = then["request"]
                    code, body = SERVER.request(r["method"], expand(r["path"], name))
                    try:
                        self.check(code, body, then["expect"], name, entry["id"] + " then")
                        break
                    except AssertionError:
                        if time.time() >= deadline:
                            raise
                        time.sleep(0.5)
        except AssertionError as e:
            if SERVER.real and entry.get("needs"):
                raise AssertionError("%s (this entry needs %s)" % (e, entry["needs"]))
            raise
        finally:
            for step in entry.get("cleanup", []):
                SERVER.request(step["method"], expand(step["path"], name))


def add_tests():
    for entry in TABLE["answers"]:
        def test(self, entry=entry):
            self.run_entry(entry)
        setattr(RealAnswers, "test_" + entry["id"].replace("-", "_"), test)


add_tests()


def setUpModule():
    global SERVER
    SERVER = Server()


def tearDownModule():
    SERVER.close()


if __name__ == "__main__":
    unittest.main()
