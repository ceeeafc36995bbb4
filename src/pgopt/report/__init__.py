"""Reports from a result.json document: terminal table, Markdown, HTML with plots."""
