#!/usr/bin/env python3
"""Lists functions longer than LIMIT lines (signature to closing brace) in C++ files.

Comments, string and character literals are blanked first; a brace opens a function when the
text before it at namespace level holds a parenthesis and is not a class, struct, enum,
union or namespace head. Lambdas and blocks inside a function count towards it.
Usage: tools/function_lengths.py LIMIT FILE... (exit 1 when any is longer)."""
import re
import sys


def blank(src):
    keep_lines = lambda m: "\n" * m.group(0).count("\n")
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", keep_lines, src, flags=re.S)
    src = re.sub(r'R"\((.*?)\)"', lambda m: '""' + keep_lines(m), src, flags=re.S)
    src = re.sub(r'"(\\.|[^"\\\n])*"', '""', src)
    return re.sub(r"'(\\.|[^'\\\n])'", "''", src)


def long_functions(path, limit):
    stack, head, line = [], "", 1
    for ch in blank(open(path, encoding="utf-8").read()):
        if ch == "\n":
            line += 1
        if ch == "{":
            h = head.strip()
            if stack and stack[-1][0] in ("fn", "inner"):
                kind = "inner"
            elif re.search(r"\b(namespace|class|struct|enum|union)\b[^()]*$", h):
                kind = "scope"
            else:
                kind = "fn" if "(" in h else "block"
            stack.append((kind, line, " ".join(h.split())[-80:]))
            head = ""
        elif ch == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "fn" and line - start + 1 > limit:
                    yield line - start + 1, start, name
            head = ""
        elif ch == ";":
            if not stack or stack[-1][0] == "scope":
                head = ""
        elif not stack or stack[-1][0] == "scope":
            head += ch


def main():
    limit, files = int(sys.argv[1]), sys.argv[2:]
    found = [(n, f, start, name) for f in files for n, start, name in long_functions(f, limit)]
    for n, f, start, name in sorted(found, reverse=True):
        print(f"{f}:{start}: {n} lines: {name}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
