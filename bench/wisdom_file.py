"""A wisdom file written as engine/lab/wisdom_write.c writes it, so that the engine writes it back
byte for byte (tests: test_wisdom_align, tests/bench.sh): the header, then one entry a line in the
writer's order (dtype, op, batch, M, N, K, then the alignment class), numbers as util.c's
sb_add_double prints them. bench/merge_s15.py and bench/half_merge.py write through it."""
import json
import os

DTYPE_ORDER = {"f32": 0, "f64": 1, "bf16": 2, "f16": 3}
OP_ORDER = {"NN": 0, "NT": 1, "TN": 2, "TT": 3}


def key(e):
    """What names an entry in a file: no two of one file share it (wisdom.h)."""
    return (e["dtype"], e.get("op", "NN"), e.get("batch", 1), tuple(e["align"]) if "align" in e else None, e["shape"])


def order(e):
    m, n, k = (int(x) for x in e["shape"].split("x"))
    return (DTYPE_ORDER[e["dtype"]], OP_ORDER[e.get("op", "NN")], e.get("batch", 1), m, n, k, tuple(e.get("align", ())))


def c_double(v):
    """%.15g to %.17g, the first that reads back the same, with ".0" where it has no point or exponent."""
    v = float(v)
    for prec in (15, 16, 17):
        t = "%.*g" % (prec, v)
        if float(t) == v:
            break
    return t if any(ch in t for ch in ".eE") else t + ".0"


def entry_line(e):
    """One entry, as wisdom_write.c writes it."""
    parts = [f'"dtype": {json.dumps(e["dtype"])}']
    if e.get("op", "NN") != "NN":
        parts.append(f'"op": {json.dumps(e["op"])}')
    if e.get("batch", 1) > 1:
        parts.append(f'"batch": {int(e["batch"])}')
    if "align" in e:
        parts.append('"align": [%d, %d, %d]' % tuple(e["align"]))
    parts += [f'"shape": {json.dumps(e["shape"])}', f'"config": {json.dumps(e["config"])}']
    if e.get("set"):
        parts.append('"set": {' + ", ".join(f"{json.dumps(k)}: {int(v)}" for k, v in e["set"].items()) + "}")
    parts += [f'"tflops": {c_double(e["tflops"])}', f'"vs_cublas": {c_double(e["vs_cublas"])}']
    if e.get("occ", 0) > 0:
        parts.append(f'"occ": {int(e["occ"])}')
    if "source" in e:
        parts.append(f'"source": {json.dumps(e["source"], ensure_ascii=False)}')
    return "    {" + ", ".join(parts) + "}"


def write(path, doc):
    """The whole file, entries sorted, through a temporary file."""
    head = ",\n".join(f'  "{k}": {json.dumps(doc[k])}' for k in ("version", "device", "arch") if k in doc)
    lines = ",\n".join(entry_line(e) for e in sorted(doc["entries"], key=order))
    with open(path + ".tmp", "w") as f:
        f.write("{\n" + head + ',\n  "entries": [\n' + lines + "\n  ]\n}\n")
    os.replace(path + ".tmp", path)
