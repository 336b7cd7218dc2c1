"""Reading SASS for the tools under tools/: a cuobjdump listing (or a CUBIN, disassembled with
cuobjdump when it is on PATH) split into kernels and their instructions."""
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def listing(path):
    """The SASS text of a listing file, or of a CUBIN through cuobjdump."""
    with open(path, "rb") as f:
        head = f.read(4)
    if head != b"\x7fELF":
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    tool = shutil.which("cuobjdump")
    if tool is None:
        sys.exit(f"{path}: a CUBIN, and cuobjdump is not on PATH to disassemble it")
    return subprocess.run([tool, "-sass", path], check=True, capture_output=True, text=True).stdout


def kernels(text):
    """(kernel name, [(address, instruction without its predicate)]) for each function."""
    out, name = [], None
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            out.append((name, []))
            continue
        m = LINE.search(line)
        if m and name is not None:
            insn = re.sub(r"^@!?U?P\w+\s+", "", m.group(2))
            out[-1][1].append((int(m.group(1), 16), insn))
    return out
