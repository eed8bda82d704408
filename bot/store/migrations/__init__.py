"""The schema's versions, each applied once in order, and bringing a database up to the latest."""
