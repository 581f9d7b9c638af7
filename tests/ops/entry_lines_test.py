"""Every public op of ember/ops starts with its entry line (Note [The op entry]): a function of
ember/ops/*.cpp declared in a public header, at namespace scope outside `detail` and anonymous
namespaces, begins with EMBER_OP or EMBER_OP_METHOD, or is a one-line forwarder to an op that does
(`Tensor Tensor::exp() const { return ember::exp(*this); }`). Run by CTest; prints each definition
that lacks it."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
OPS = ROOT / "ember" / "ops"

# A definition at column 0: return type, name, parameters, then `{` (on that line or a later one).
DEF = re.compile(r"^(?:inline )?(?:Tensor&?|bool|std::tuple<[^>]*>|std::vector<Tensor>|TensorList|"
                 r"std::pair<Tensor, Tensor>) (?:Tensor::)?(\w+)\(", re.M)
# Public functions of ember/ops that are not ops: settings and helpers.
NOT_OPS = {
    "sdp_backend_enabled": "reads a setting (torch.backends.cuda.flash_sdp_enabled)",
    "become_view": "the shared step of the in-place view ops, which enter themselves",
}
# Forwarders: the whole body is one return of another call.
FORWARD = re.compile(r"^\{\s*return (?!detail::)(?:[\w:]+::)?(\w+)\([^;]*\);\s*\}$", re.S)


def scopes(src):
    """(start, end, kind) of each namespace block: kind is 'hidden' for anonymous and detail."""
    out, stack = [], []
    for m in re.finditer(r"^namespace ([\w:]*) ?\{|^\}  // namespace ?([\w:]*)", src, re.M):
        if m.group(0).startswith("namespace"):
            stack.append((m.start(), m.group(1)))
        elif stack:
            start, name = stack.pop()
            hidden = name == "" or name.split("::")[-1] == "detail"
            out.append((start, m.end(), hidden))
    return out


def body_at(src, pos):
    """The function body starting at the first `{` after pos (braces matched)."""
    i = src.index("{", pos)
    depth = 0
    for j in range(i, len(src)):
        if src[j] == "{":
            depth += 1
        elif src[j] == "}":
            depth -= 1
            if depth == 0:
                return src[i:j + 1]
    return src[i:]


def public_names():
    names = set()
    for h in list(OPS.glob("*.h")) + [ROOT / "ember" / "core" / "tensor.h"]:
        text = h.read_text()
        names.update(re.findall(r"\b(\w+)\(", text))
    return names


MACRO = re.compile(r"^#define (\w+)\(.*?\)((?:.*\\\n)*.*)", re.M)
MACRO_DEF = re.compile(r"(?:Tensor&?|bool) (?:Tensor::)?([\w#]+)\([^)]*\)(?: const)? \{")


def missing_in_macros(f, src):
    """Functions a macro defines: each must open with its entry line or forward in one line."""
    found = []
    for m in MACRO.finditer(src):
        body = m.group(2).replace("\\\n", "\n")
        for d in MACRO_DEF.finditer(body):
            rest = body[d.end():].lstrip()
            one_line = re.match(r"return (?!detail::)[\w:#]+(?:\.\w+)?\([^;]*\);\s*\}", rest)
            if not rest.startswith(("EMBER_OP(", "EMBER_OP_METHOD(")) and not one_line:
                line = src.count("\n", 0, m.start()) + 1
                found.append(f"{f.relative_to(ROOT)}:{line}: {d.group(1)} (macro {m.group(1)})")
    return found


def missing():
    names = public_names()
    found = []
    for f in sorted(OPS.glob("*.cpp")) + sorted(OPS.glob("*.h")):
        src = f.read_text()
        found += missing_in_macros(f, src)
        if f.suffix == ".h":
            continue
        hidden = [(a, b) for a, b, h in scopes(src) if h]
        for m in DEF.finditer(src):
            if any(a <= m.start() < b for a, b in hidden) or m.group(1) not in names:
                continue
            sig_end = src.find(")", m.end())
            if src[sig_end:src.find("{", m.end())].strip().endswith(";"):
                continue  # a declaration
            body = body_at(src, m.end())
            first = re.sub(r"^(\s*//[^\n]*\n)*", "", body[1:]).lstrip()
            if m.group(1) in NOT_OPS:
                continue
            forward = FORWARD.match(body)
            if first.startswith(("EMBER_OP(", "EMBER_OP_METHOD(")) or (forward and forward.group(1) in names):
                continue
            found.append(f"{f.relative_to(ROOT)}:{src.count(chr(10), 0, m.start()) + 1}: {m.group(1)}")
    return found


if __name__ == "__main__":
    bad = missing()
    for line in bad:
        print(line)
    print(f"{len(bad)} public op definitions without an entry line")
    sys.exit(1 if bad else 0)
