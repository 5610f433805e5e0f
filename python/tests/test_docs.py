"""Every code block of the README and the manual runs as written (issue 34).

The block's language says how it is checked:
- ``console``: ``$ `` lines are shell commands (a trailing ``\\`` continues one), the lines after
  one are its expected standard output (status lines go to stderr, shown only when a step
  fails). All console blocks of one file run in one shell session, in order,
  in a fresh folder holding a link to the project's ``data/``, with the release ``neurobits``
  ($NEUROBITS_DOC_BIN) first on PATH. Expected lines match exactly, except ``[..]`` (any text
  within a line) and a line ``...`` (any number of lines), as trycmd writes them.
- ``python``: the blocks of one file run in order in one namespace, in such a folder.
- ``rust``: doctests (``lib/src/doc_blocks.rs`` includes the file; checked here).
- ``text`` or none: synopses and formats, not run. ``sh``: the set-up commands (``make …``,
  ``cargo install``, ``pip install``) that ``make test`` itself stands for; nothing else may be ``sh``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = [ROOT / "README.md", ROOT / "python" / "README.md", *sorted((ROOT / "docs" / "manual" / "src").glob("*.md"))]
LANGS = {"console", "python", "rust", "text", "sh", "toml", "json", "csv", ""}
SETUP = re.compile(r"^(make \w[\w-]*|cargo install [^;&|]*|pip install [^;&|]*)\s*(#.*)?$")


def blocks(path: Path):
    """(language, first line number, lines) of each fenced block."""
    out, lang, start, body = [], None, 0, []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("```"):
            if lang is None:
                lang, start, body = line[3:].split(",")[0].strip(), n, []
            else:
                out.append((lang, start, body))
                lang = None
        elif lang is not None:
            body.append(line)
    assert lang is None, f"{path}: the block at line {start} is not closed"
    return out


def by_lang(lang: str):
    return [p for p in FILES if any(b[0] == lang for b in blocks(p))]


def rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_every_block_has_a_known_language(path):
    for lang, line, body in blocks(path):
        assert lang in LANGS, f"{rel(path)}:{line}: block language {lang!r}"
        if lang == "sh":
            for cmd in (b for b in body if b.strip()):
                assert SETUP.match(cmd), f"{rel(path)}:{line}: an sh block holds set-up commands only; run {cmd!r} in a console block"


def test_rust_blocks_are_doctests():
    included = (ROOT / "lib" / "src" / "doc_blocks.rs").read_text()
    for p in by_lang("rust"):
        assert f'include_str!("../../{rel(p)}")' in included, f"{rel(p)} has Rust blocks: include it in lib/src/doc_blocks.rs"


@pytest.fixture
def sandbox(tmp_path):
    (tmp_path / "data").symlink_to(ROOT / "data")
    return tmp_path


def parse_console(body, where):
    """[(command, expected lines)] of a console block."""
    steps, cmd = [], None
    for line in body:
        if cmd is not None and cmd.endswith("\\"):
            cmd = cmd[:-1] + "\n" + line
            steps[-1] = (cmd, [])
        elif line.startswith("$ "):
            cmd = line[2:]
            steps.append((cmd, []))
        else:
            assert steps, f"{where}: output before the first '$ ' line"
            steps[-1][1].append(line)
            cmd = ""
    return steps


def matches(expected, got):
    """trycmd's wildcards: `[..]` within a line, `...` for any lines."""
    def line_re(e):
        return re.compile("^" + ".*".join(map(re.escape, e.split("[..]"))) + "$")

    def go(i, j):
        if i == len(expected):
            return j == len(got)
        if expected[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(got) + 1))
        return j < len(got) and line_re(expected[i]).match(got[j]) is not None and go(i + 1, j + 1)

    return go(0, 0)


def doc_bin() -> Path:
    exe = Path(os.environ.get("NEUROBITS_DOC_BIN", ROOT / "target" / "release" / "neurobits"))
    assert exe.is_file(), f"{exe}: the release CLI (cargo build --release --bin neurobits) runs the console blocks"
    return exe


@pytest.mark.parametrize("path", by_lang("console"), ids=rel)
def test_console_blocks_run_as_written(path, sandbox):
    env = dict(os.environ, PATH=f"{doc_bin().parent}:{os.environ['PATH']}", NO_COLOR="1")
    steps = [(line, s) for lang, line, body in blocks(path) if lang == "console" for s in parse_console(body, f"{rel(path)}:{line}")]
    marker = "\x1e-neurobits-doc-step-"
    # stdout is the documented output; each command's stderr goes to a file shown on failure.
    script = "".join(
        f"printf '{marker}%s\\n' {i}\n{{ {cmd}\n}} 2>.doc-step-{i}.err\necho \"{marker}rc $?\"\n" for i, (_, (cmd, _)) in enumerate(steps)
    )
    r = subprocess.run(["bash", "-c", script], cwd=sandbox, env=env, capture_output=True, text=True, timeout=900)
    parts = r.stdout.split(marker)[1:]
    assert len(parts) == 2 * len(steps), f"{rel(path)}: the console blocks did not run to the end: {r.stdout[-2000:]}{r.stderr[-2000:]}"
    for i, (line, (cmd, expected)) in enumerate(steps):
        got = parts[2 * i].split("\n")[1:]
        got = got[:-1] if got and got[-1] == "" else got
        rc = parts[2 * i + 1].split()[1]
        where = f"{rel(path)}:{line}: $ {cmd}"
        err = (sandbox / f".doc-step-{i}.err").read_text()
        assert rc == "0", f"{where}\nexit {rc}:\n" + "\n".join(got) + "\nstderr:\n" + err
        assert matches(expected, got), f"{where}\nexpected:\n" + "\n".join(expected) + "\ngot:\n" + "\n".join(got)


@pytest.mark.parametrize("path", by_lang("python"), ids=rel)
def test_python_blocks_run_as_written(path, sandbox, monkeypatch):
    monkeypatch.chdir(sandbox)
    namespace: dict = {"__name__": "__doc_blocks__"}
    for lang, line, body in blocks(path):
        if lang == "python":
            code = compile("\n" * (line) + "\n".join(body), str(path), "exec")
            exec(code, namespace)  # noqa: S102 - the documentation's own code, as a reader runs it


def test_the_matcher_can_fail():
    assert matches(["a [..] c", "...", "z"], ["a b c", "x", "y", "z"])
    assert not matches(["a [..] c"], ["a b d"])
    assert not matches(["a"], ["a", "b"])


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_relative_links_point_at_files(path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        file = (path.parent / target.split("#")[0]).resolve()
        assert file.exists(), f"{rel(path)}: the link {target} points at nothing"
