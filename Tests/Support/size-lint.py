#!/usr/bin/python3
"""Size lint (issue 30): no Swift file under Sources/ over 600 lines, no function over 100.

A reader should be able to hold a file's concept and a function's steps in mind. A function
that must stay longer says why in a comment that starts with `// Long:` in the comment block
right above its declaration (its attributes may stand between): that comment is the allowlist,
next to the code it excuses, and this lint lists every entry so that the list stays in view.
A `// Long:` above a function that is no longer long is stale and fails too.

A function's length is counted from its declaration's first line to its closing brace. The
scanner knows Swift's comments (nested block comments included), string literals (multi-line,
raw, with interpolations, which hold code) and character-level nesting, which is all it takes
to find where a body ends; it does not need a Swift parser.

    Tests/Support/size-lint.py [--list] [ROOT]     (ROOT defaults to the repository's top)
    Tests/Support/size-lint.py --self-test          (the scanner on a fixture of tricky Swift)
Exit 0 when every rule holds, 1 with each violation on a line of its own.
"""
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 100
DECL_KEYWORDS = {"func", "init", "deinit", "subscript"}
# Keywords that start another declaration: seen before a body's `{`, they mean the function
# had no body (a protocol requirement).
OTHER_DECL = {"func", "init", "deinit", "subscript", "var", "let", "case", "typealias",
              "associatedtype", "struct", "class", "enum", "protocol", "extension", "import"}


def tokens(text):
    """Yields (kind, value, line) for the code of `text`: identifiers and single punctuation
    characters, with comments and string literals skipped (interpolated code is yielded)."""
    i, n, line = 0, len(text), 1
    # A stack of string contexts we are inside of: (hashes, multiline); code inside an
    # interpolation is scanned as code until its parenthesis closes.
    interp = []  # per open interpolation: [paren depth, the string context to resume]

    def skip_string(i, hashes, multiline):
        """i points just after the opening quote(s); returns (index after the literal, line
        delta, None) or (index after `\\(`, line delta, context) at an interpolation."""
        nonlocal line
        close = ('"""' if multiline else '"') + "#" * hashes
        escape = "\\" + "#" * hashes
        while i < n:
            if text.startswith(close, i):
                return i + len(close), None
            if text.startswith(escape, i):
                j = i + len(escape)
                if j < n and text[j] == "(":
                    return j + 1, (hashes, multiline)
                i = j + 1
                continue
            if text[i] == "\n":
                line += 1
            i += 1
        return i, None

    def resume(i, ctx):
        nonlocal interp
        i, inner = skip_string(i, *ctx)
        if inner is not None:
            interp.append([0, inner])
        return i

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c in " \t\r":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            yield ("comment", text[i:j], line)
            i = j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        line += 1
                    i += 1
        elif c == "#" or c == '"':
            m = re.match(r'(#*)("""|")', text[i:i + 64])
            if not m:
                yield ("punct", c, line)
                i += 1
                continue
            hashes, quotes = len(m.group(1)), m.group(2)
            i = resume(i + m.end(), (hashes, quotes == '"""'))
        elif c.isalnum() or c == "_" or c == "@" or c == "`":
            m = re.match(r"[@`]?[A-Za-z0-9_]+`?", text[i:])
            yield ("word", m.group(0).strip("`"), line)
            i += m.end()
        else:
            if interp:
                if c == "(":
                    interp[-1][0] += 1
                elif c == ")":
                    if interp[-1][0] == 0:
                        _, ctx = interp.pop()
                        i = resume(i + 1, ctx)
                        continue
                    interp[-1][0] -= 1
            yield ("punct", c, line)
            i += 1


def functions(text):
    """Yields (name, first line, last line, the comment lines right above) per function body."""
    toks = list(tokens(text))
    for k, (kind, value, line) in enumerate(toks):
        if kind != "word" or value not in DECL_KEYWORDS:
            continue
        # `init` as a call (`.init(`, `Self.init`) or a member named so is not a declaration.
        if k > 0 and toks[k - 1][1] == ".":
            continue
        name = value
        if value == "func" and k + 1 < len(toks):
            name = toks[k + 1][1]
        depth, j, body = 0, k + 1, None
        while j < len(toks):
            kj, vj, _ = toks[j]
            if kj == "punct" and vj in "([<":
                depth += 1
            elif kj == "punct" and vj in ")]>":
                depth = max(0, depth - 1)
            elif kj == "punct" and vj == "{" and depth == 0:
                body = j
                break
            elif kj == "punct" and vj == "}" and depth == 0:
                break
            elif kj == "word" and vj in OTHER_DECL and depth == 0 and j > k + 1:
                break
            j += 1
        if body is None:
            continue
        depth, j = 0, body
        while j < len(toks):
            if toks[j][0] == "punct" and toks[j][1] == "{":
                depth += 1
            elif toks[j][0] == "punct" and toks[j][1] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        last = toks[j][2] if j < len(toks) else toks[-1][2]
        # The declaration starts at its attributes and modifiers: walk back over the tokens of
        # its line and any attribute lines right above.
        start = line
        above = []
        m = k - 1
        while m >= 0 and toks[m][0] == "word" and toks[m][2] >= start - 1 and toks[m][1] not in ("{", "}"):
            start = min(start, toks[m][2])
            m -= 1
        while m >= 0 and toks[m][0] == "punct" and toks[m][1] in "()" and toks[m][2] >= start - 1:
            m -= 1  # an attribute's arguments, as in @available(...)
            while m >= 0 and toks[m][2] >= start - 1 and not (toks[m][0] == "word" and toks[m][1].startswith("@")):
                m -= 1
            if m >= 0:
                start = min(start, toks[m][2])
                m -= 1
        while m >= 0 and toks[m][0] == "comment" and toks[m][2] >= start - len(above) - 1:
            above.append(toks[m][1])
            m -= 1
        yield name, line, last, above


SELF_TEST = '''protocol P {
    func a() -> Int
    var b: Int { get }
}
struct S {
    // Long: a reason
    @inline(__always)
    public func f(x: Int = { 3 }()) -> [Int: String] where T: Equatable {
        let s = "}\\(x.map { "}" }) {"
        let r = #"}"#
        let m = """
        }}}
        """
        /* } /* nested } */ */
        return [:]
    }
    init?(y: Int) { self.init() }
    func g() { let h = S.init(); _ = h }
}
'''


def self_test():
    """The scanner against braces in strings, interpolations, raw and multi-line literals,
    nested comments, default-argument closures, `.init` calls and protocol requirements."""
    got = list(functions(SELF_TEST))
    want = [("f", 8, 16, ["// Long: a reason"]), ("init", 17, 17, []), ("g", 18, 18, [])]
    if got != want:
        print(f"size-lint: self-test failed: {got} != {want}")
        return 1
    print("size-lint: self-test ok")
    return 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    listing = "--list" in argv
    args = [a for a in argv if a != "--list"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    sources = os.path.join(root, "Sources")
    faults, allowed = [], []
    for folder, _, files in sorted(os.walk(sources)):
        for f in sorted(files):
            if not f.endswith(".swift"):
                continue
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            count = text.count("\n")
            if count > MAX_FILE_LINES:
                faults.append(f"{rel}: {count} lines, over {MAX_FILE_LINES}: split it by concept")
            for name, first, last, above in functions(text):
                length = last - first + 1
                reason = next((c for c in above if c.lstrip("/ ").startswith("Long:")), None)
                if length > MAX_FUNCTION_LINES and reason is None:
                    faults.append(f"{rel}:{first}: {name} is {length} lines, over {MAX_FUNCTION_LINES}: "
                                  "split it, or say why it is not in a `// Long:` comment above it")
                elif length <= MAX_FUNCTION_LINES and reason is not None:
                    faults.append(f"{rel}:{first}: {name} is {length} lines but has a `// Long:` comment: "
                                  "drop the stale entry")
                elif reason is not None:
                    allowed.append(f"{rel}:{first}: {name}, {length} lines: {reason.lstrip('/ ')[5:].strip()}")
    if listing or faults:
        for a in allowed:
            print(f"allowed  {a}")
    for f in faults:
        print(f"size-lint: {f}")
    if not faults:
        print(f"size-lint: ok (files <= {MAX_FILE_LINES} lines, functions <= {MAX_FUNCTION_LINES} lines, "
              f"{len(allowed)} allowed long)")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
