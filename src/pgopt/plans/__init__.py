"""Query plans: a statement's generic plan read from a server, and plans as text and shapes."""
