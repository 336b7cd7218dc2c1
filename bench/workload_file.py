"""The workload files' reader (schema: bench/workloads/README.md), held to the rules engine's own
JSON reader holds its files to (engine/core/jsonrd.h): duplicate keys refused, no key but those
the object names (the unknown one and the known ones in one line), a member of the wrong type says
which was wanted and what it got, sizes in the limits engine takes (engine/core/shape.h: each side
at most 2^24, no matrix above 2^40 elements; a batch at most 65535, as --batch), and every error
one line that starts FILE:LINE:COLUMN: at the member at fault (its key when the key is the fault,
its object when a key is missing). Imported by bench/workload.py; needs no torch.
"""
import json
import math
import re

OPS = ("NN", "NT", "TN")
# element bytes, unit roundoff of the sums, of the result's rounding to the type (the half types
# accumulate in FP32 and round once, as the library's classes bf16 and f16 have it)
DTYPES = {"f32": (4, 2.0 ** -24, 0.0), "f64": (8, 2.0 ** -53, 0.0), "bf16": (2, 2.0 ** -24, 2.0 ** -8),
          "f16": (2, 2.0 ** -24, 2.0 ** -11)}
TOP_KEYS = {"name": str, "description": str, "dtype": str, "calls": list}
TOP_REQUIRED = ("name", "dtype", "calls")
CALL_KEYS = ("name", "m", "n", "k", "op", "batch", "alpha", "beta")
CALL_REQUIRED = ("name", "m", "n", "k", "op")
MAX_DIM = 1 << 24    # SHAPE_MAX_DIM
MAX_ELEMS = 1 << 40  # SHAPE_MAX_ELEMS: one matrix of a product
MAX_BATCH = 65535    # WISDOM_MAX_BATCH: the batch takes grid z


class Invalid(Exception):
    """Bad input: the message is the one line printed before exit 2."""


# --- where each member of a document starts -------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null")


class _Duplicate(Exception):
    def __init__(self, key, at):
        super().__init__(key)
        self.key, self.at = key, at


def places(text):
    """{path: offset} for a text json.loads already accepted: path a tuple of keys and indexes from
    the top; (*path, ":key") the offset of that member's key. Offsets are of characters. A key met
    twice in one object raises _Duplicate at its second place."""
    found = {}

    def value(i, path):
        i = _WS.match(text, i).end()
        found[path] = i
        c = text[i]
        if c == "{":
            i = _WS.match(text, i + 1).end()
            if text[i] == "}":
                return i + 1
            while True:
                at = _WS.match(text, i).end()
                key, i = json.decoder.scanstring(text, at + 1)
                if path + (key, ":key") in found:
                    raise _Duplicate(key, at)
                found[path + (key, ":key")] = at
                i = _WS.match(text, i).end() + 1  # past the colon
                i = _WS.match(text, value(i, path + (key,))).end()
                if text[i] == "}":
                    return i + 1
                i += 1  # past the comma
        if c == "[":
            i = _WS.match(text, i + 1).end()
            if text[i] == "]":
                return i + 1
            n = 0
            while True:
                i = _WS.match(text, value(i, path + (n,))).end()
                n += 1
                if text[i] == "]":
                    return i + 1
                i += 1
        if c == '"':
            return json.decoder.scanstring(text, i + 1)[1]
        return _SCALAR.match(text, i).end()

    value(0, ())
    return found


def _place(path, text, off):
    """FILE:LINE:COL of character offset off (both counted from 1)."""
    return f"{path}:{text.count(chr(10), 0, off) + 1}:{off - text.rfind(chr(10), 0, off)}"


class _Doc:
    """A parsed file and where its members are: fail() raises Invalid at one of them."""

    def __init__(self, path, text):
        self.path, self.text = path, text
        try:
            self.at = places(text)
        except _Duplicate as e:
            raise Invalid(f"{_place(path, text, e.at)}: duplicate key {json.dumps(e.key)}")

    def fail(self, where, msg, key=None, at_key=False):
        """Invalid "FILE:LINE:COL: msg" at member key of the object at path where (key None: that
        object), at its key rather than its value when at_key."""
        spot = where + (key, ":key") if at_key else where + ((key,) if key is not None else ())
        raise Invalid(f"{_place(self.path, self.text, self.at.get(spot, self.at.get(where, 0)))}: {msg}")


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_keys(doc, where, obj, known, required, name):
    """Every key of obj known, every required one there; Invalid names the first that is not."""
    for key in obj:
        if key not in known:
            doc.fail(where, f"{name}unknown key {json.dumps(key)} (known: {', '.join(known)})", key, at_key=True)
    for key in required:
        if key not in obj:
            doc.fail(where, f"{name}{key}: missing")


def _check_call(doc, i, c, label):
    """A call as the schema has it, defaults filled in (batch 1, alpha 1, beta 0)."""
    where, name = ("calls", i), f"calls[{i}]" + (f" ({label})" if label else "") + ": "
    if not isinstance(c, dict):
        doc.fail(where, f"{name}must be an object, got {type(c).__name__}")
    _check_keys(doc, where, c, CALL_KEYS, CALL_REQUIRED, name)
    if not isinstance(c["name"], str) or not c["name"].strip():
        doc.fail(where, f"{name}name: must be a non-empty string, got {json.dumps(c['name'])}", "name")
    for key, top in (("m", MAX_DIM), ("n", MAX_DIM), ("k", MAX_DIM), ("batch", MAX_BATCH)):
        v = c.get(key, 1)
        # bool is an int to Python, and 512.0 reads as a size only by accident: both refused.
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            doc.fail(where, f"{name}{key}: must be a positive integer, got {json.dumps(v)}", key)
        if v > top:
            doc.fail(where, f"{name}{key}: {v} is more than {top}, the most engine takes", key)
    for a, b in (("m", "k"), ("k", "n"), ("m", "n")):
        if c[a] * c[b] > MAX_ELEMS:
            doc.fail(where, f"{name}{a}*{b} = {c[a] * c[b]} elements exceeds 2^40, more than any GPU holds", b)
    if c["op"] not in OPS:
        doc.fail(where, f"{name}op: must be one of {', '.join(OPS)}, got {json.dumps(c['op'])}", "op")
    for key in ("alpha", "beta"):
        if key in c and not _number(c[key]):
            doc.fail(where, f"{name}{key}: must be a finite number, got {json.dumps(c[key])}", key)
    return {"name": c["name"], "m": c["m"], "n": c["n"], "k": c["k"], "op": c["op"], "batch": c.get("batch", 1),
            "alpha": c.get("alpha", 1), "beta": c.get("beta", 0)}


def load(path):
    """One workload file, checked: {"name", "description", "dtype", "calls": [...]} (Invalid names the
    file, line and column, and the call's index and name or the field)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise Invalid(f"{path}: cannot read: {e.strerror}")
    except UnicodeDecodeError as e:
        raise Invalid(f"{path}: not UTF-8 text: byte {e.start}")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise Invalid(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}")
    doc = _Doc(path, text)  # refuses a duplicate key, which json.loads lets the last one win
    if not isinstance(raw, dict):
        doc.fail((), f"must be a JSON object, got {type(raw).__name__}")
    _check_keys(doc, (), raw, TOP_KEYS, TOP_REQUIRED, "")
    for key, kind in TOP_KEYS.items():
        if key in raw and not isinstance(raw[key], kind):
            doc.fail((), f"{key}: must be a {'string' if kind is str else 'list'}, got {json.dumps(raw[key])}", key)
    if not raw["name"].strip():
        doc.fail((), "name: must not be empty", "name")
    if raw["dtype"] not in DTYPES:
        doc.fail((), f"dtype: must be one of {', '.join(DTYPES)}, got {json.dumps(raw['dtype'])}", "dtype")
    if not raw["calls"]:
        doc.fail((), "calls: empty", "calls")
    calls, names = [], set()
    for i, c in enumerate(raw["calls"]):
        label = c.get("name") if isinstance(c, dict) and isinstance(c.get("name"), str) else None
        call = _check_call(doc, i, c, label)
        # The rows are keyed by workload and call name; two calls of one name could not be told apart.
        if call["name"] in names:
            doc.fail(("calls", i), f"calls[{i}] ({label}): name: a second call of this name", "name")
        names.add(call["name"])
        calls.append(call)
    return {"path": path, "name": raw["name"], "description": raw.get("description", ""), "dtype": raw["dtype"],
            "calls": calls, "name_at": doc.at.get(("name",), 0), "text": text}


def load_all(paths):
    """Every file checked (one line for each bad one), then Invalid if any was bad."""
    docs, bad, seen = [], [], {}
    for p in paths:
        try:
            d = load(p)
        except Invalid as e:
            bad.append(str(e))
            continue
        off, text = d.pop("name_at"), d.pop("text")
        if d["name"] in seen:
            bad.append(f"{_place(p, text, off)}: name: {json.dumps(d['name'])} is also the name of {seen[d['name']]}")
            continue
        seen[d["name"]] = p
        docs.append(d)
    if bad:
        raise Invalid("\n".join(bad))
    return docs
