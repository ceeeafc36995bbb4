"""JSON schemas of the documents pgopt writes."""
