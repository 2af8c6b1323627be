"""The built site, read as HTML: what a reader sees, not only what the build log says.

Builds the documentation once with `mkdocs build --strict` (skipped when the
`docs` extra is not installed) and checks the rendered pages for faults the
build does not report: signatures cut short or left on one long line, private
names and internal modules in the API reference, raw backticks in the text,
`Returns:` sections split into several entries.
"""

import html
import importlib.util
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_docstrings import MODULES

ROOT = Path(__file__).resolve().parent.parent
NEEDED = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")
LINE_LENGTH = 100  # mkdocs.yml formats signatures to 80 columns; a longer line is unformatted


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = [name for name in NEEDED if importlib.util.find_spec(name.split(".")[0]) is None]
    if missing:
        pytest.skip(f"the docs extra is not installed ({', '.join(missing)})")
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        # Not --quiet: mkdocs 1.6 then stops counting warnings, and --strict passes them.
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert build.returncode == 0, build.stderr
    assert "WARNING" not in build.stderr, build.stderr
    return out


def api_pages(site):
    pages = sorted((site / "api").rglob("index.html"))
    assert len(pages) > 20
    return pages


def text_of(fragment):
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


class Reader(HTMLParser):
    """The page's prose: text outside code, preformatted blocks, scripts and the search form."""

    SKIP = {"code", "pre", "script", "style", "kbd", "textarea", "svg"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.text = 0, []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth:
            self.text.append(data)


def prose_of(page):
    reader = Reader()
    reader.feed(page.read_text())
    return "".join(reader.text)


# ------------------------------------------------------------------ the checks


def test_signatures_are_whole_and_formatted(site):
    problems = []
    for page in api_pages(site):
        for block in re.findall(
            r'<div class="doc-signature[^"]*">(.*?)</div>', page.read_text(), re.S
        ):
            signature = text_of(block).strip()
            if "..." in signature or "\u2026" in signature:
                problems.append(f"{page.parent.name}: cut short: {signature[:120]}")
            problems += [
                f"{page.parent.name}: a {len(line)}-character line: {line[:120]}"
                for line in signature.splitlines()
                if len(line) > LINE_LENGTH
            ]
    assert not problems, "\n".join(problems)


def test_the_reference_shows_no_private_names_or_internal_modules(site):
    public_modules = set(MODULES)
    problems = []
    for page in api_pages(site):
        source = page.read_text()
        where = page.relative_to(site).parent
        for identifier, name in re.findall(
            r'<h[1-6] id="([^"]+)" class="doc doc-heading">(.*?)</h[1-6]>', source, re.S
        ):
            shown = text_of(name).replace("\u00b6", "").split()
            if any(part.startswith("_") for part in identifier.split(".")) or any(
                word.startswith("_") for word in shown
            ):
                problems.append(f"{where}: heading {identifier}")
        for identifier in re.findall(
            r'<div class="doc doc-object doc-module">\s*<h[1-6] id="([^"]+)"', source
        ):
            if identifier not in public_modules:
                problems.append(f"{where}: internal module {identifier}")
        for bases in re.findall(r'<p class="doc doc-class-bases">(.*?)</p>', source, re.S):
            names = [name.strip() for name in text_of(bases).replace("Bases:", "").split(",")]
            problems += [f"{where}: private base {name}" for name in names if name.startswith("_")]
    assert not problems, "\n".join(problems)


def test_no_raw_backticks_in_the_text(site):
    problems = []
    for page in sorted(site.rglob("*.html")):
        for line in prose_of(page).splitlines():
            if "`" in line:
                problems.append(f"{page.relative_to(site)}: {line.strip()[:160]}")
    assert not problems, f"{len(problems)} lines:\n" + "\n".join(problems)


def test_returns_sections_are_one_entry(site):
    """A `Returns:` description wrapped over lines stays one entry, not one per line."""
    problems = []
    for page in api_pages(site):
        for section in re.findall(
            r'<span class="doc-section-title">Returns:</span>\s*</p>\s*<ul>(.*?)</ul>',
            page.read_text(),
            re.S,
        ):
            entries = re.findall(r"<li\b", section)
            if len(entries) > 1:
                problems.append(f"{page.parent.name}: {text_of(section).split()[:12]}")
    assert not problems, "\n".join(problems)


def test_lists_are_lists(site):
    """A bulleted list needs a blank line before it; without one it runs into the paragraph."""
    problems = []
    for page in sorted(site.rglob("*.html")):
        for paragraph in re.findall(r"<p>(.*?)</p>", page.read_text(), re.S):
            problems += [
                f"{page.relative_to(site)}: {text_of(line).strip()[:100]}"
                for line in paragraph.splitlines()[1:]
                if re.match(r"\s*([-*+]|\d+\.)\s", line)
            ]
    assert not problems, "\n".join(problems)


def test_the_copy_button_leaves_out_prompts_and_output(site):
    """Material copies a block's visible text; the stylesheet hides `>>>`, `...` and output then."""
    css = re.sub(r"/\*.*?\*/", "", (site / "stylesheets" / "copy.css").read_text(), flags=re.S)
    rule = re.search(r"([^{}]+)\{\s*display:\s*none;?\s*\}", css)
    assert rule is not None
    selectors = {s.strip() for s in rule.group(1).split(",")}
    assert selectors >= {
        ".highlight code[data-md-copying] .gp",
        ".highlight code[data-md-copying] .go",
    }
    page = (site / "api" / "layers" / "core" / "index.html").read_text()
    assert "stylesheets/copy.css" in page and '"content.code.copy"' in page
    assert '<span class="gp">&gt;&gt;&gt; </span>' in page and '<span class="go">' in page
