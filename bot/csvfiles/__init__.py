"""CSV files: reading what people export from spreadsheets, writing safe results."""
