#!/usr/bin/env python3
"""Generates source-level mutants of core/, deterministically from a seed.

    generate.py --count N --seed S --out DIR [PATH...]

Every place where an operator applies (a "site") is listed, in file and
line order, over core/'s .cc and .h files (or those under the PATHs); a
seeded shuffle then picks N of them. Each pick becomes DIR/<id>.patch, a
patch `git apply` takes, and one row of DIR/mutants.tsv:

    id  folder  file  line  operator  original line  mutated line

The id hashes the file, the operator and the two lines, not the line
number, so a mutant keeps its id while code above it moves; that is how
tests/mutations/equivalent.txt names the survivors judged equivalent.

Operators (docs/mutations.md): relational (< to <=, == to !=, ...),
logical (&& to ||), min_max, off_by_one (n to n+1 or n-1), constant
(n to 0, true to false), negate (if (c) to if (!(c))), remove (an
expression statement), return_early (return; inside a void function).
Comments, string literals, preprocessor lines, assertions, probes and
calls of CheckInvariants (which only assert) are never mutated: a mutated
assertion tests the assertion, not the code, and a probe only counts.

The generator has no dependency beyond Python's standard library, and no
randomness beyond its own seeded generator, so one seed on one tree
always gives the same mutants.
"""

import argparse
import dataclasses
import difflib
import hashlib
import os
import re
import sys

MASK = "\x01"  # stands for the characters of comments and literals

RELATIONAL_FLIPS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
RELATIONAL = re.compile(r"(?<= )(<=|>=|==|!=|<|>)(?= )")
LOGICAL = re.compile(r"(?<= )(&&|\|\|)(?= )")
MIN_MAX = re.compile(r"\bstd::(min|max)\(")
INTEGER = re.compile(r"(?<![\w.'])(\d+)(?![\w.'])")
BOOLEAN = re.compile(r"\b(true|false)\b")
CONDITION = re.compile(r"\b(if|while) \(")
# An expression statement that a line holds whole: a call, an assignment
# or an increment of a plain name or member path. Declarations ("Type
# name = ...") have a space before the name and do not match.
EXPRESSION_STATEMENT = re.compile(
    r"^(\+\+|--)?[A-Za-z_][\w]*((\.|->|::)[A-Za-z_]\w*|\[[^\]]*\]|\(\))*"
    r"(\(.*\)|(\+\+|--)| (=|\+=|-=|\*=|/=|\|=|&=|<<=|>>=) .*);$")
NOT_STATEMENTS = ("return", "break", "continue", "case", "default", "goto", "delete",
                  "throw", "using", "typedef", "co_return")
SKIPPED_CALLS = ("CHARYBDIS_ASSERT", "CHARYBDIS_PROBE", "CheckInvariants", "static_assert", "assert")


@dataclasses.dataclass
class Mutant:
    path: str
    line_number: int  # 1-based
    operator: str
    original: str
    mutated: str  # the replacement of the line; may hold a new line
    id: str = ""

    def folder(self):
        parts = self.path.split("/")
        return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


class SplitMix64:
    """The generator of the shuffle: tiny, and the same on every machine."""

    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFFFFFFFFFF

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def below(self, bound):
        return self.next() % bound


def mask_line(line, in_block_comment):
    """The line with comments and string and character literals masked,
    column for column; and whether a block comment is still open."""
    out = []
    i = 0
    while i < len(line):
        if in_block_comment:
            end = line.find("*/", i)
            stop = len(line) if end < 0 else end + 2
            out.append(MASK * (stop - i))
            i = stop
            in_block_comment = end < 0
            continue
        c = line[i]
        if line.startswith("//", i):
            out.append(MASK * (len(line) - i))
            break
        if line.startswith("/*", i):
            in_block_comment = True
            out.append(MASK * 2)
            i += 2
            continue
        if c in "\"'":
            j = i + 1
            while j < len(line) and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            stop = min(j + 1, len(line))
            out.append(c + MASK * (stop - i - 2) + (c if stop - i >= 2 else ""))
            i = stop
            continue
        out.append(c)
        i += 1
    return "".join(out), in_block_comment


def masked_lines(lines):
    masked, in_block = [], False
    for line in lines:
        text, in_block = mask_line(line, in_block)
        masked.append(text)
    return masked


def skipped_lines(masked):
    """Indices of lines never mutated: preprocessor lines, and every line of
    an assertion, a static_assert, a probe or a call of CheckInvariants,
    which may span several lines."""
    skipped, depth = set(), 0
    for index, text in enumerate(masked):
        opens_assertion = any(re.search(r"\b" + call + r"\(", text) for call in SKIPPED_CALLS)
        if depth > 0 or opens_assertion:
            skipped.add(index)
            depth = max(0, depth + text.count("(") - text.count(")"))
        elif text.strip().startswith("#"):
            skipped.add(index)
    return skipped


def closing_parenthesis(text, open_index):
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def replace(line, start, end, replacement):
    return line[:start] + replacement + line[end:]


def line_sites(path, number, line, text):
    """The mutants of one line: `text` is the line masked."""
    sites = []

    def add(operator, mutated):
        if mutated != line:
            sites.append(Mutant(path, number, operator, line, mutated))

    for m in RELATIONAL.finditer(text):
        add("relational", replace(line, m.start(), m.end(), RELATIONAL_FLIPS[m.group(1)]))
    for m in LOGICAL.finditer(text):
        add("logical", replace(line, m.start(), m.end(), "||" if m.group(1) == "&&" else "&&"))
    for m in MIN_MAX.finditer(text):
        flipped = "max" if m.group(1) == "min" else "min"
        add("min_max", replace(line, m.start(1), m.end(1), flipped))
    pure_virtual = re.search(r"\) (const )?(override )?= 0;$", text.strip())
    for m in ([] if pure_virtual else INTEGER.finditer(text)):
        value = int(m.group(1))
        add("off_by_one", replace(line, m.start(), m.end(), str(value + 1)))
        if value > 0:
            add("off_by_one", replace(line, m.start(), m.end(), str(value - 1)))
        if value > 1:
            add("constant", replace(line, m.start(), m.end(), "0"))
    for m in BOOLEAN.finditer(text):
        add("constant", replace(line, m.start(), m.end(), "false" if m.group(1) == "true" else "true"))
    for m in CONDITION.finditer(text):
        open_index = m.end() - 1
        close = closing_parenthesis(text, open_index)
        if close > 0:
            condition = line[open_index + 1:close]
            add("negate", line[:open_index + 1] + "!(" + condition + ")" + line[close:])
    return sites


def statement_start(masked, index):
    """Whether line `index` begins a statement: the code line before it
    ends one, or opens or closes a block."""
    for previous in range(index - 1, -1, -1):
        before = masked[previous].replace(MASK, "").strip()
        if before:
            return before.endswith((";", "{", "}")) or before.endswith(":") and not before.endswith("::")
    return False


def removable(text):
    stripped = text.strip()
    if not EXPRESSION_STATEMENT.match(stripped) or stripped.split("(")[0].split(" ")[0] in NOT_STATEMENTS:
        return False
    return stripped.count("(") == stripped.count(")") and stripped.count("{") == stripped.count("}")


def void_function_bodies(masked):
    """For each line index inside the body of a void function defined at
    file level (a .cc file's top level or a namespace), the body's depth."""
    inside, depth, pending, body_depth = {}, 0, False, None
    for index, text in enumerate(masked):
        code = text.replace(MASK, "")
        if body_depth is None and re.match(r"^void [\w:~]+\(", code):
            pending = True
        if body_depth is not None and depth >= body_depth:
            inside[index] = body_depth
        for c in code:
            if c == "{":
                depth += 1
                if pending:
                    body_depth, pending = depth, False
            elif c == "}":
                depth -= 1
                if body_depth is not None and depth < body_depth:
                    body_depth = None
        if pending and code.rstrip().endswith(";"):
            pending = False  # a declaration, not a definition
    return inside


def statement_sites(path, lines, masked, skipped):
    sites = []
    bodies = void_function_bodies(masked) if path.endswith(".cc") else {}
    for index, text in enumerate(masked):
        if index in skipped or not statement_start(masked, index):
            continue
        line = lines[index]
        indent = line[:len(line) - len(line.lstrip())]
        if removable(text):
            sites.append(Mutant(path, index + 1, "remove", line, indent + ";"))
        stripped = text.strip()
        if bodies.get(index) is not None and stripped and not stripped.startswith(("}", "case ", "default:", "else")):
            if not stripped.startswith("return") and re.match(r"^[\w+\-*&!(\[]", stripped):
                sites.append(Mutant(path, index + 1, "return_early", line, indent + "return;\n" + line))
    return sites


def file_sites(path, source):
    lines = source.split("\n")
    masked = masked_lines(lines)
    skipped = skipped_lines(masked)
    sites = []
    for index, text in enumerate(masked):
        if index not in skipped:
            sites.extend(line_sites(path, index + 1, lines[index], text))
    sites.extend(statement_sites(path, lines, masked, skipped))
    sites.sort(key=lambda m: (m.line_number, m.operator, m.mutated))
    for site in sites:
        digest = hashlib.sha256(
            "\0".join([site.path, site.operator, site.original.strip(), site.mutated.strip()]).encode())
        site.id = "m" + digest.hexdigest()[:10]
    return sites


def source_files(root, paths):
    found = []
    for top in paths:
        full = os.path.join(root, top)
        if os.path.isfile(full):
            found.append(top)
            continue
        for directory, _, names in os.walk(full):
            for name in names:
                if name.endswith((".cc", ".h")):
                    found.append(os.path.relpath(os.path.join(directory, name), root))
    return sorted(set(found))


def all_sites(root, paths):
    sites = []
    for path in source_files(root, paths):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            sites.extend(file_sites(path, f.read()))
    return sites


def choose(sites, count, seed):
    """`count` sites, the folders taking turns so that each folder is
    measured by about as many mutants as any other; within a folder, in
    the order of a seeded Fisher-Yates shuffle. At most one mutant per line."""
    rng = SplitMix64(seed)
    by_folder = {}
    for site in sites:
        by_folder.setdefault(site.folder(), []).append(site)
    queues = []
    for folder in sorted(by_folder):
        queue = by_folder[folder]
        for i in range(len(queue) - 1, 0, -1):
            j = rng.below(i + 1)
            queue[i], queue[j] = queue[j], queue[i]
        queues.append(iter(queue))
    chosen, lines = [], set()
    while queues and len(chosen) < count:
        for queue in list(queues):
            site = next((s for s in queue if (s.path, s.line_number) not in lines), None)
            if site is None:
                queues.remove(queue)
                continue
            lines.add((site.path, site.line_number))
            chosen.append(site)
            if len(chosen) == count:
                break
    return chosen


def patch_text(root, mutant):
    with open(os.path.join(root, mutant.path), encoding="utf-8") as f:
        before = f.read().split("\n")
    after = list(before)
    after[mutant.line_number - 1] = mutant.mutated
    after = "\n".join(after).split("\n")
    diff = difflib.unified_diff(
        [line + "\n" for line in before], [line + "\n" for line in after],
        "a/" + mutant.path, "b/" + mutant.path, n=3)
    return "".join(diff)


def one_line(text):
    return text.strip().replace("\t", " ").replace("\n", " \u23ce ")


def write_mutants(root, mutants, out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "mutants.tsv"), "w", encoding="utf-8") as index:
        for mutant in mutants:
            with open(os.path.join(out, mutant.id + ".patch"), "w", encoding="utf-8") as f:
                f.write(patch_text(root, mutant))
            index.write("\t".join([mutant.id, mutant.folder(), mutant.path, str(mutant.line_number),
                                   mutant.operator, one_line(mutant.original),
                                   one_line(mutant.mutated)]) + "\n")


def main(argv):
    parser = argparse.ArgumentParser(
        description="Writes N mutants of core/ (or of PATHs) as patches, chosen by a seed.")
    parser.add_argument("--count", type=int, required=True, help="how many mutants")
    parser.add_argument("--seed", type=int, default=1, help="the seed of the choice (default 1)")
    parser.add_argument("--out", required=True, help="the directory for the patches and mutants.tsv")
    parser.add_argument("--root", default=".", help="the source tree (default: here)")
    parser.add_argument("--sites", action="store_true", help="print how many sites each folder has, and stop")
    parser.add_argument("paths", nargs="*", default=["core"], help="files or folders (default: core)")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    for path in args.paths:
        if not os.path.exists(os.path.join(args.root, path)):
            parser.error(f"no such file or folder: {path}")
    sites = all_sites(args.root, args.paths)
    if args.sites:
        by_folder = {}
        for site in sites:
            by_folder[site.folder()] = by_folder.get(site.folder(), 0) + 1
        for folder in sorted(by_folder):
            print(f"{folder}\t{by_folder[folder]}")
        return 0
    if not sites:
        print("generate.py: no mutation sites under " + " ".join(args.paths), file=sys.stderr)
        return 2
    mutants = choose(sites, args.count, args.seed)
    write_mutants(args.root, mutants, args.out)
    print(f"{len(mutants)} mutants of {len(sites)} sites in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
