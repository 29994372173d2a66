#!/usr/bin/env python3
"""Replace one named section of BENCHMARKS.md, keeping the others.

usage: python3 bench/section.py NAME [BENCHMARKS.md] < section.md

Each benchmark script owns one block delimited by
    <!-- BEGIN NAME -->  ...  <!-- END NAME -->
The block is replaced in place, or appended when the file does not have it yet.
"""
import os
import sys


def replace_section(path, name, body):
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    block = f"{begin}\n{body.rstrip()}\n{end}\n"
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    i, j = text.find(begin), text.find(end)
    if i >= 0 and j > i:
        text = text[:i] + block + text[j + len(end):].lstrip("\n")
    else:
        if not text:
            text = "# tcplab benchmarks\n\nEach section below is written by one script in `bench/`; run it to refresh that section only.\n\n"
        text = text.rstrip("\n") + "\n\n" + block
    with open(path, "w") as f:
        f.write(text)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    path = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(__file__), "..", "BENCHMARKS.md")
    replace_section(path, sys.argv[1], sys.stdin.read())


if __name__ == "__main__":
    main()
