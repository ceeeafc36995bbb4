"""A lab run as every command runs one: the session (target, plan, execution,
result, files) and its progress on the terminal."""
