"""Shared by every test: nothing but the project root on the path."""
