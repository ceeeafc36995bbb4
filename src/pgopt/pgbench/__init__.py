"""pgbench, the load engine: argument lists, output parsers and the process runner."""
