"""What people ask for in words: `/judge ...` and the text of a shared file, each parsed into one request."""
