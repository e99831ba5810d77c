"""Patches as kube-apiserver applies them to the objects the stand-in keeps (tests only):
JSON Patch (RFC 6902; a failed `test` is 422 as in kube-apiserver), JSON merge patch (RFC 7386)
and the part of strategic merge patch kubectl uses on Nodes (k8s.io/apimachinery
pkg/util/strategicpatch: lists with a patch merge key merge by it, other lists are replaced).
"""
import copy

from state import ApiError


def pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(422, "Invalid", "invalid JSON pointer: " + path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def resolve(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, list):
            if not p.isdigit() or int(p) >= len(cur):
                raise KeyError(p)
            cur = cur[int(p)]
        elif isinstance(cur, dict):
            cur = cur[p]
        else:
            raise KeyError(p)
    return cur


def json_patch(doc, ops):
    """RFC 6902. Errors are 422 like kube-apiserver (a failed test included)."""
    if not isinstance(ops, list):
        raise ApiError(400, "BadRequest", "json patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        kind = op.get("op")
        parts = pointer(op.get("path", ""))

        def parent_of(ps):
            try:
                return resolve(doc, ps[:-1]), ps[-1]
            except KeyError:
                raise ApiError(422, "Invalid", "doc is missing path: %s" % op.get("path"))

        def add(ps, value):
            par, key = parent_of(ps)
            if isinstance(par, list):
                if key == "-":
                    par.append(value)
                elif key.isdigit() and int(key) <= len(par):
                    par.insert(int(key), value)
                else:
                    raise ApiError(422, "Invalid", "invalid array index %s" % key)
            elif isinstance(par, dict):
                par[key] = value
            else:
                raise ApiError(422, "Invalid", "cannot add to a scalar at %s" % op.get("path"))

        def remove(ps):
            par, key = parent_of(ps)
            try:
                if isinstance(par, list):
                    return par.pop(int(key))
                return par.pop(key)
            except (KeyError, ValueError, IndexError):
                raise ApiError(422, "Invalid", "unable to remove nonexistent key: %s" % key)

        if kind == "add":
            add(parts, op["value"])
        elif kind == "remove":
            remove(parts)
        elif kind == "replace":
            remove(parts)
            add(parts, op["value"])
        elif kind in ("move", "copy"):
            src = pointer(op.get("from", ""))
            try:
                value = copy.deepcopy(resolve(doc, src))
            except KeyError:
                raise ApiError(422, "Invalid", "missing from path: %s" % op.get("from"))
            if kind == "move":
                remove(src)
            add(parts, value)
        elif kind == "test":
            try:
                value = resolve(doc, parts)
            except KeyError:
                value = None
            if value != op.get("value"):
                raise ApiError(422, "Invalid", "the server rejected our request due to an error in "
                               "our request: testing value %s failed: test failed" % op.get("path"))
        else:
            raise ApiError(400, "BadRequest", "unknown json patch op %r" % kind)
    return doc


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# Lists with a patch merge key on Node (k8s.io/api core/v1). spec.taints is not one of them: it is
# `+listType=atomic`, so kubectl taint sends the whole list and the server replaces it.
MERGE_KEYS = {"conditions": "type", "addresses": "type"}


def strategic_merge(target, patch):
    """The part of strategic merge patch kubectl uses on Nodes: maps merge, lists with a patch
    merge key merge by it ($patch: delete removes an element, $setElementOrder orders the result),
    other lists (spec.taints among them) are replaced."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    orders = {}
    for k, v in patch.items():
        if k.startswith("$setElementOrder/"):
            orders[k.split("/", 1)[1]] = v
            continue
        if k.startswith("$"):
            continue
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list) and k in MERGE_KEYS:
            mk = MERGE_KEYS[k]
            cur = [copy.deepcopy(e) for e in out.get(k) or []]
            for item in v:
                idx = next((i for i, e in enumerate(cur) if e.get(mk) == item.get(mk)), None)
                if item.get("$patch") == "delete":
                    if idx is not None:
                        cur.pop(idx)
                elif idx is None:
                    cur.append(copy.deepcopy(item))
                else:
                    cur[idx] = strategic_merge(cur[idx], item)
            out[k] = cur
        else:
            out[k] = strategic_merge(out.get(k), v)
    for k, order in orders.items():
        mk = MERGE_KEYS.get(k)
        if mk and isinstance(out.get(k), list):
            rank = {o.get(mk): i for i, o in enumerate(order)}
            out[k].sort(key=lambda e: rank.get(e.get(mk), len(rank)))
    return out
