"""Every relative link in the papers resolves (issue 41): README.md, protocol.md, BENCHMARKS.md
and docs/*.md link each other, the sources, the man pages and their own sections, and a file
moved or a heading renamed must not leave a link pointing nowhere.

    /usr/bin/python3 -m unittest -v Tests/docs/test_links.py      (part of `make test`)

A link is `[text](target)`, `![alt](target)` or a reference definition `[label]: target`,
outside code (fenced and indented blocks, `code spans`). A target with a scheme (https:,
mailto:, file:) is not checked. A relative target must name a file or a directory that exists,
from the directory of the file that links it; a `#fragment` must be the anchor of a heading of
the Markdown file it names (the same file when the path is empty), as GitHub makes them:
the heading's text as shown, lowercased, everything but letters, digits, marks, spaces, `-` and
`_` dropped, spaces made `-`; a second heading with the same anchor gets `-1`, the next `-2`.
`<a id="…">` and `<a name="…">` anchors count too.
"""

import os
import re
import tempfile
import unittest
import unicodedata

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# The papers whose links are checked, relative to ROOT.
def papers():
    names = ["README.md", "protocol.md", "BENCHMARKS.md"]
    names += sorted("docs/" + n for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md"))
    return names


FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
LIST_ITEM = re.compile(r"^ {0,3}([-*+]|\d+[.)])[ \t]")
HTML_ANCHOR = re.compile(r"""<a\s+[^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)
# [text](target "title"), ![alt](target); the text may run over lines but holds no brackets
# (an image inside a link is found as the image, then the link around it is not needed).
INLINE = re.compile(r"!?\[([^\[\]]*)\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
DEFINITION = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)", re.M)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def prose(text):
    """The text with code blanked out (same length and lines, so positions hold): fenced blocks,
    indented blocks and code spans. Returns the blanked text and the lines that are code."""
    lines = text.split("\n")
    code = [False] * len(lines)
    fence = None
    previous_blank = True
    in_list = False
    for i, line in enumerate(lines):
        if fence:
            code[i] = True
            stripped = line.strip()
            if stripped.startswith(fence[0]) and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                fence = None
            continue
        m = FENCE.match(line)
        if m:
            fence = m.group(1)
            code[i] = True
            continue
        blank = not line.strip()
        if LIST_ITEM.match(line):
            in_list = True
        elif not blank and not line.startswith((" ", "\t")):
            in_list = False
        # An indented block: four spaces (or a tab) after a blank line, or going on from one;
        # inside a list such lines are the item's own text.
        if not blank and not in_list and line.startswith(("    ", "\t")) and (previous_blank or code[i - 1]):
            code[i] = True
        elif blank and i > 0 and code[i - 1]:
            code[i] = True  # a blank line inside an indented block
        previous_blank = blank
    out = [(" " * len(line) if code[i] else line) for i, line in enumerate(lines)]
    text = "\n".join(out)
    # Code spans: a run of backticks up to the same run (they may span lines in a paragraph).
    def blank_span(m):
        return re.sub(r"[^\n]", " ", m.group(0))

    text = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", blank_span, text, flags=re.S)
    return text, code


def heading_text(raw):
    """What a heading shows: links as their text, code and emphasis without their marks."""
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    t = re.sub(r"<[^>]+>", "", t)
    t = t.replace("`", "")
    t = re.sub(r"(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1", r"\2", t)
    return t.strip()


def slug(text):
    """GitHub's anchor for a heading that shows `text` (github-slugger)."""
    kept = []
    for ch in text.lower():
        category = unicodedata.category(ch)
        if ch in " -_" or category[0] in "LNM":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def anchors(text):
    """Every anchor a Markdown text defines: its headings' (numbered as GitHub numbers
    repeats) and its HTML anchors."""
    lines = text.split("\n")
    _, code = prose(text)
    found = set()
    seen = {}
    for i, line in enumerate(lines):
        if code[i]:
            continue
        heading = None
        m = ATX.match(line)
        if m:
            heading = m.group(2) or ""
        elif (
            i > 0 and SETEXT.match(line) and lines[i - 1].strip() and not code[i - 1]
            and not ATX.match(lines[i - 1]) and not LIST_ITEM.match(lines[i - 1])
            and not lines[i - 1].lstrip().startswith("|")
        ):
            heading = lines[i - 1].strip()
        if heading is not None:
            base = slug(heading_text(heading))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        for a in HTML_ANCHOR.findall(line):
            found.add(a)
    return found


def links(text):
    """(line number, target) of every link outside code."""
    blanked, _ = prose(text)
    out = []
    for m in INLINE.finditer(blanked):
        out.append((blanked.count("\n", 0, m.start()) + 1, m.group(2)))
    for m in DEFINITION.finditer(blanked):
        out.append((blanked.count("\n", 0, m.start()) + 1, m.group(2)))
    return out


_anchor_cache = {}


def anchors_of(path):
    if path not in _anchor_cache:
        with open(path, encoding="utf-8") as f:
            _anchor_cache[path] = anchors(f.read())
    return _anchor_cache[path]


def broken(path, root=ROOT):
    """What is wrong with the links of the Markdown file at `path`: one sentence each."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    here = os.path.dirname(path)
    shown = os.path.relpath(path, root)
    problems = []
    for line, target in links(text):
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1]
        if not target or SCHEME.match(target):
            continue
        file_part, _, fragment = target.partition("#")
        file_part = re.sub(r"%20", " ", file_part)
        resolved = os.path.normpath(os.path.join(here, file_part)) if file_part else path
        if file_part.startswith("/"):
            problems.append(f"{shown}:{line}: {target}: an absolute path (links must be relative)")
            continue
        if not os.path.exists(resolved):
            problems.append(f"{shown}:{line}: {target}: no such file")
            continue
        if fragment:
            if not resolved.endswith(".md") or os.path.isdir(resolved):
                problems.append(f"{shown}:{line}: {target}: #{fragment} in a file that is not Markdown")
            elif fragment not in anchors_of(resolved):
                problems.append(
                    f"{shown}:{line}: {target}: no heading of {os.path.relpath(resolved, root)} has the anchor #{fragment}"
                )
    return problems


class LinkTests(unittest.TestCase):
    def test_every_relative_link_of_the_papers_resolves(self):
        checked = 0
        for name in papers():
            path = os.path.join(ROOT, name)
            with self.subTest(paper=name):
                self.assertEqual(broken(path), [])
                with open(path, encoding="utf-8") as f:
                    checked += len(links(f.read()))
        # The papers do link: a parser that found nothing would pass everything.
        self.assertGreater(checked, 100)

    def test_the_readme_links_every_guide(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            targets = {t.partition("#")[0] for _, t in links(f.read())}
        for name in papers():
            if name.startswith("docs/"):
                self.assertIn(name, targets, f"README.md does not link {name}")

    def test_a_broken_link_fails(self):
        self.maxDiff = None
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "docs"))
            with open(os.path.join(d, "docs", "guide.md"), "w", encoding="utf-8") as f:
                f.write("# A guide\n\n## Backups: `swiped backup`\n\nText.\n\n## Backups: `swiped backup`\n")
            with open(os.path.join(d, "README.md"), "w", encoding="utf-8") as f:
                f.write(
                    "# Top\n\n"
                    "[fine](docs/guide.md), [fine too](docs/guide.md#backups-swiped-backup),\n"
                    "[the second](docs/guide.md#backups-swiped-backup-1), [this one](#top),\n"
                    "[a folder](docs/), <https://example.org/>, [web](https://example.org/x#y).\n\n"
                    "[gone](docs/moved.md) and [no anchor](docs/guide.md#restore), over a\n"
                    "line break: [Record, replay and\nshare rows](#record-replay-and-share-rows).\n"
                    "![an image](docs/missing.png)\n\n"
                    "    [in code](nowhere.md)\n\n"
                    "`[in a span](nowhere.md)`\n\n"
                    "```\n[fenced](nowhere.md)\n```\n\n"
                    "[ref]: docs/nothing.md\n"
                )
            problems = broken(os.path.join(d, "README.md"), root=d)
        self.assertEqual(
            problems,
            [
                "README.md:7: docs/moved.md: no such file",
                "README.md:7: docs/guide.md#restore: no heading of docs/guide.md has the anchor #restore",
                "README.md:8: #record-replay-and-share-rows: no heading of README.md has the anchor"
                " #record-replay-and-share-rows",
                "README.md:10: docs/missing.png: no such file",
                "README.md:20: docs/nothing.md: no such file",
            ],
        )

    def test_slugs_are_githubs(self):
        for heading, anchor in [
            ("Quick start", "quick-start"),
            ("Record, replay and share rows", "record-replay-and-share-rows"),
            ("How the daemon is doing: `status`", "how-the-daemon-is-doing-status"),
            ("Several daemons on one database (`--postgres`)", "several-daemons-on-one-database---postgres"),
            ("One request: `toggle-watched`, from the socket to the disk and back",
             "one-request-toggle-watched-from-the-socket-to-the-disk-and-back"),
            ("The [help](x.md) reply", "the-help-reply"),
            ("Faults, checked (issue 34)", "faults-checked-issue-34"),
            ("Install as a systemd service", "install-as-a-systemd-service"),
            ("Amélie's ✓ list", "amélies--list"),
        ]:
            self.assertEqual(slug(heading_text(heading)), anchor, heading)

    def test_headings_in_code_define_no_anchor(self):
        text = "# Title\n\n```sh\n# not a heading\n```\n\n    # nor this\n\n#9A4A00 is a colour, not a heading\n"
        self.assertEqual(anchors(text), {"title"})


if __name__ == "__main__":
    unittest.main()
