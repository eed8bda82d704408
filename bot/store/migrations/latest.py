"""The schema's latest version, a number apart from the migrations: an up-to-date history is checked against it
without importing them (a test holds it to the length of MIGRATIONS in versions.py)."""

LATEST = 36  # len(MIGRATIONS): raise it with each migration added at the end
