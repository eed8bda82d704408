"""Shared helpers and local servers for the tests: imported by test modules and conftest, never collected."""
