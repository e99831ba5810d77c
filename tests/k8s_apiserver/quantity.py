"""Resource quantities as k8s.io/apimachinery v0.34.0 pkg/api/resource/quantity.go parses them.

A quantity is parsed while the request body is decoded (Quantity.UnmarshalJSON calls
ParseQuantity), before any validation: a bad one is not a field error (422) but a decoding error,
answered 400 BadRequest by the create handler (k8s.io/apiserver v0.34.0
pkg/endpoints/handlers/create.go -> transformDecodeError in rest.go):
  `<Kind> in version "<version>" cannot be handled as a <Kind>: <ParseQuantity's error>`
"""
import json
import re

from state import bad_request

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = "quantities must match the regular expression '" + SPLIT_RE + "'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"
_SPLIT = re.compile(SPLIT_RE)
_SUFFIXES = {"Ki": (2, 10), "Mi": (2, 20), "Gi": (2, 30), "Ti": (2, 40), "Pi": (2, 50),
             "Ei": (2, 60), "n": (10, -9), "u": (10, -6), "m": (10, -3), "": (10, 0),
             "k": (10, 3), "M": (10, 6), "G": (10, 9), "T": (10, 12), "P": (10, 15),
             "E": (10, 18)}


def parse_error(value):
    """The error ParseQuantity gives for value (a string, or a JSON number), or None."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ERR_FORMAT_WRONG
    text = (json.dumps(value) if isinstance(value, (int, float)) else value).strip()
    m = _SPLIT.match(text)
    if not m:
        return ERR_FORMAT_WRONG
    number, suffix = m.group(1), m.group(2)
    if number.count(".") > 1:
        return ERR_FORMAT_WRONG  # the scanner stops at the second '.': content left over
    if number.strip("+-") in (".", ""):
        return ERR_NUMERIC
    if suffix not in _SUFFIXES and not re.match(r"^[eE][-+]?[0-9]+$", suffix):
        return ERR_SUFFIX
    return None


def parse_quantity(value):
    """(amount as a float, is an integer) or None when it does not parse."""
    if parse_error(value) is not None:
        return None
    text = (json.dumps(value) if isinstance(value, (int, float)) else value).strip()
    number, suffix = _SPLIT.match(text).groups()
    base, exp = _SUFFIXES[suffix] if suffix in _SUFFIXES else (10, int(suffix[1:]))
    amount = float(number) * (base ** exp)
    milli = amount * 1000  # MilliValue() % 1000 == 0
    integer = abs(milli - round(milli)) < 1e-9 and round(milli) % 1000 == 0
    return amount, integer


def _pod_spec_quantities(spec):
    for kind in ("initContainers", "containers"):
        for c in spec.get(kind) or []:
            res = c.get("resources") or {}
            for table in ("limits", "requests"):
                for v in (res.get(table) or {}).values():
                    yield v
    for v in spec.get("volumes") or []:
        empty = v.get("emptyDir")
        if isinstance(empty, dict) and "sizeLimit" in empty:
            yield empty["sizeLimit"]
    for v in (spec.get("overhead") or {}).values():
        yield v


def decode_pod_spec(spec, kind, version):
    """Raises the 400 kube-apiserver answers when a quantity of the pod spec does not decode."""
    for value in _pod_spec_quantities(spec if isinstance(spec, dict) else {}):
        err = parse_error(value)
        if err:
            raise bad_request('%s in version "%s" cannot be handled as a %s: %s'
                              % (kind, version, kind, err))


def canonical(value):
    """Quantity.String() of value, as validation messages print a quantity: the format its suffix
    implies (BinarySI for Ki..Ei, DecimalExponent for e<n>, DecimalSI otherwise; a BinarySI value
    under 1024 or with a fraction prints as DecimalSI), with the largest exponent (a multiple of 3,
    or of 10 for powers of two) that leaves an integer mantissa (CanonicalizeBytes)."""
    from fractions import Fraction
    if parse_error(value) is not None:
        return str(value)
    text = (json.dumps(value) if isinstance(value, (int, float)) else value).strip()
    number, suffix = _SPLIT.match(text).groups()
    base, exp = _SUFFIXES[suffix] if suffix in _SUFFIXES else (10, int(suffix[1:]))
    amount = Fraction(number) * (Fraction(base) ** exp)
    fmt = "binary" if base == 2 else ("exponent" if suffix and suffix[0] in "eE" else "decimal")
    if fmt == "binary" and (abs(amount) < 1024 or amount.denominator != 1):
        fmt = "decimal"
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    if fmt == "binary":
        names = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
        k = 0
        while k < 6 and (amount / (1024 ** (k + 1))).denominator == 1 and amount != 0:
            k += 1
        return sign + str(int(amount / (1024 ** k))) + names[k]
    names = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
    e = -9
    while amount != 0 and (amount / Fraction(10) ** (e + 3)).denominator == 1 and e < 18:
        e += 3
    if amount == 0:
        e = 0
    mantissa = amount / Fraction(10) ** e
    if mantissa.denominator != 1:  # finer than nano: Kubernetes rounds up
        mantissa, e = Fraction(-(-amount.numerator * 10 ** 9 // amount.denominator)), -9
    if fmt == "exponent":
        return sign + str(int(mantissa)) + ("e%d" % e if e else "")
    return sign + str(int(mantissa)) + names[e]
