"""Label and field selectors on lists, as the stand-in supports them (tests only): `k=v`, `k==v`,
`k!=v` and `k` (exists), comma-separated (ANDed); field selectors on dotted paths
(involvedObject.name, spec.nodeName, ...). Set-based label selectors (`k in (a,b)`) are not
supported.
"""
import copy
import re


def get_field(obj, dotted):
    cur = obj
    for p in dotted.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p, "")
    return "" if cur is None else str(cur)


def selector_matches(sel, value_of):
    if not sel:
        return True
    for term in sel.split(","):
        term = term.strip()
        if not term:
            continue
        if "!=" in term:
            k, v = term.split("!=", 1)
            if value_of(k) == v:
                return False
        elif "==" in term or "=" in term:
            k, v = re.split("==?", term, maxsplit=1)
            if value_of(k) != v:
                return False
        elif value_of(term) == "":
            return False  # "key" alone: the label must exist
    return True


def filtered(items, query):
    lsel = query.get("labelSelector", [""])[0]
    fsel = query.get("fieldSelector", [""])[0]
    out = []
    for o in items:
        labels = o.get("metadata", {}).get("labels") or {}
        if not selector_matches(lsel, lambda k: labels.get(k, "")):
            continue
        if not selector_matches(fsel, lambda k: get_field(o, k)):
            continue
        out.append(copy.deepcopy(o))
    return out
