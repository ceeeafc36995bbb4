"""Text read from a user's server made safe where pgopt writes it (pure): a name or a
value is data, whatever characters it holds.

- `comment`: an SQL or pgbench comment line. A `--` comment ends at a line break,
  so a name holding one would put its next line in the script as a statement, or,
  in a pgbench script or a psql file, as a meta-command (`\\shell`, `\\!`): every
  control character is written as its escape (`\\n`, `\\x1b`), and the comment stays
  one line.
- `one_line`: the same for any one-line text (a terminal line, a log line).
- `md_text` and `md_code`: Markdown text and an inline code span that hold any text,
  in a table cell too, with no markup of their own (report/markdown.py's, and the
  workload's README.md).
"""

from __future__ import annotations

import re

_MD_SPECIAL = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "*": "\\*", "`": "\\`", "\\": "\\\\"}
)
# C0 and C1 controls, DEL, and the Unicode line and paragraph separators
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: object) -> str:
    """`text` on one line: each control character written as its escape."""
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}"), str(text))


def comment(text: object) -> str:
    """An SQL or pgbench comment line holding `text`, which cannot end it."""
    return f"-- {one_line(text)}"


def md_escaped(value: str) -> str:
    """`value` with Markdown's and HTML's special characters escaped, on one line."""
    return one_line(value).translate(_MD_SPECIAL)


def md_text(value: object) -> str:
    """Plain text safe anywhere in Markdown, table cells included: one line, no markup."""
    return md_escaped(" ".join(str(value).split()))


def md_code(value: object, *, in_table: bool = False) -> str:
    """An inline code span that holds any text, backticks included."""
    s = one_line(" ".join(str(value).split()))
    if in_table:
        s = s.replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"
